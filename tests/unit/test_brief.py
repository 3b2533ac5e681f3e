"""The step brief: the step, its inputs, the persistent context, the handoff format."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.step_plans import step_spec
from maker.core.clock import utc_now
from maker.core.models import Plan, PlanStep
from maker.errors import StepNotFoundError
from maker.executor.launch.brief import build_brief
from maker.executor.launch.handoff_template import handoff_template
from maker.executor.launch.previous_work import BriefBudget, previous_handoff
from maker.store.notes import DEFAULT_KEEP, add_notes
from maker.store.plan_store import PlanStore


def make_step(n: int, **overrides: Any) -> PlanStep:
    return step_spec(n, **{
        "primary_tools": ["Read", "Grep"], "fallback_tools": ["Bash"],
        "primary_tool_instructions": "Grep for the symbol first.",
        "fallback_tool_instructions": "Use grep -r when Grep is not enough.",
        "input_variables": [f"step_{n - 1}_output.result"] if n > 0 else [],
        "output_schema": "{result: string, files: [string]}", **overrides})


def write_plan(root: Path, steps: list[PlanStep], task: str = "Add OAuth login") -> PlanStore:
    steps[-1].next_step_sequence_number = -1
    store = PlanStore(root / "plans")
    store.write_plan(Plan(reasoning="why", steps=steps, task=task))
    return store


def accept(store: PlanStore, n: int, output: dict[str, Any] | None = None,
           note: str = "", facts: int = 2, fact_len: int = 0, status: str = "complete",
           summary: str = "") -> None:
    """What the gate persists for an accepted handoff: the file and the NOTES facts."""
    discoveries = [f"discovery {i} of step {n}".ljust(fact_len, "·") for i in range(facts)]
    decisions = [f"decision of step {n}".ljust(fact_len, "·")]
    store.write_handoff(n, {
        "step": n, "status": status, "accepted_at": utc_now(),
        "output": output if output is not None else {"result": f"result {n}", "files": []},
        "summary": summary or f"did {n}", "discoveries": discoveries, "decisions": decisions,
        "blockers": [], "for_next_agent": note or f"note from step {n}",
        "files_changed": [], "evidence": [],
    }, "body")
    add_notes(store.notes_path, {"discoveries": discoveries, "decisions": decisions},
              step=n, archive_dir=store.archive_dir)


def section(brief: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}.*?(?=^## |\Z)", brief, re.MULTILINE | re.DOTALL)
    assert m, f"no section {title!r} in:\n{brief}"
    return m.group(0)


def template_in(brief: str) -> dict[str, Any]:
    m = re.search(r"```yaml\n(step: .*?)```", brief, re.DOTALL)
    assert m
    data = yaml.safe_load(m.group(1))
    assert isinstance(data, dict)
    return data


# -- the step ----------------------------------------------------------------------------


def test_the_step_itself(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1), make_step(2)])
    brief = build_brief(store, store.load(), 1)
    assert brief.startswith("# Step 1: Step number 1\n")
    assert "Plan task: Add OAuth login" in brief
    mine = section(brief, "Your step")
    for text in ("- step: 1", "- type: action_step", "- next: step 2", "- depends on: step 0",
                 "Do the work of step 1.", "Primary: Read, Grep", "Grep for the symbol first.",
                 "Fallback (when the primary tools cannot do it): Bash",
                 "Use grep -r when Grep is not enough.", "AskUserQuestion",
                 "{result: string, files: [string]}", "`step_1_output`"):
        assert text in mine, text


def test_last_and_conditional_steps_say_what_comes_next(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [
        make_step(0, task_type="conditional_step", next_step_sequence_number=-2,
                  output_schema="{next_step: int, reason: string}"),
        make_step(1), make_step(2, input_variables=[])])
    plan = store.load()
    cond = build_brief(store, plan, 0)
    assert "you decide" in section(cond, "Your step")
    assert "`output.next_step` must be the number of the step you chose" in cond
    assert template_in(cond)["output"]["next_step"] == "<int>"
    last = build_brief(store, plan, 2)
    assert "- next: the plan ends after this step" in last
    assert "next_step" not in last


def test_unknown_step(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0)])
    with pytest.raises(StepNotFoundError):
        build_brief(store, None, 7)


# -- inputs ------------------------------------------------------------------------------


def test_referenced_outputs_whole_as_yaml(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1), make_step(
        2, input_variables=["step_0_output.result", "step_1_output.files",
                            "step_0_output.extra"])])
    accept(store, 0, {"result": "r0", "extra": {"nested": [1, 2]}})
    accept(store, 1, {"result": "r1", "files": ["a.py"]})
    inputs = section(build_brief(store, None, 2), "Inputs")
    m = re.search(r"```yaml\n(.*?)```", inputs, re.DOTALL)
    assert m
    assert yaml.safe_load(m.group(1)) == {
        "step_0_output": {"result": "r0", "extra": {"nested": [1, 2]}},
        "step_1_output": {"result": "r1", "files": ["a.py"]},
    }
    assert m.group(1).count("step_0_output:") == 1


def test_no_inputs_no_section(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0)])
    assert "## Inputs" not in build_brief(store, None, 0)


def test_missing_output_is_said_not_raised(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1)])
    accept(store, 0, status="blocked")  # not complete: no output for later steps
    inputs = section(build_brief(store, None, 1), "Inputs")
    assert "`step_0_output` is NOT available" in inputs
    assert "blocked" in inputs


def test_an_output_over_the_cap_becomes_a_pointer(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1)])
    accept(store, 0, {"result": "x" * 5000})
    brief = build_brief(store, None, 1, budget=BriefBudget(outputs_chars=1000))
    assert "x" * 1000 not in brief
    assert "`step_0_output` is too large to include here" in brief
    assert "plans/handoffs/00-step-number-0.md" in brief


# -- persistent context (seed 002, docs/architecture.md#the-seeds) -------------------------


def test_previous_agents_note_and_notes(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(n) for n in range(4)])
    accept(store, 0, note="the API retries on 429 already")
    accept(store, 1, note="use the fixtures in tests/fixtures")
    context = section(build_brief(store, None, 2), "Context from previous work")
    assert "### From the previous agent (step 1, complete)" in context
    assert "use the fixtures in tests/fixtures" in context
    assert "the API retries" not in context  # only the most recent agent's note
    assert "plans/NOTES.md" in context
    for fact in ("discovery 0 of step 0", "discovery 1 of step 1", "decision of step 1"):
        assert fact in context
    assert context.index("discovery 0 of step 0") < context.index("discovery 0 of step 1")


def test_previous_handoff_is_the_most_recently_accepted_other_than_mine(tmp_path: Path
                                                                       ) -> None:
    store = write_plan(tmp_path, [make_step(n, input_variables=[]) for n in range(4)])
    assert previous_handoff(store, 1) is None
    accept(store, 3, note="three")
    accept(store, 0, note="zero")
    accept(store, 1, note="one")
    prev = previous_handoff(store, 1)
    assert prev is not None and prev["for_next_agent"] == "zero"
    prev = previous_handoff(store, 2)
    assert prev is not None and prev["for_next_agent"] == "one"


def test_no_context_yet(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0)])
    context = section(build_brief(store, None, 0), "Context from previous work")
    assert "From the previous agent" not in context
    assert "(none yet)" in context


def test_long_note_is_clipped_with_a_pointer(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1)])
    accept(store, 0, note="n" * 5000)
    brief = build_brief(store, None, 1, budget=BriefBudget(for_next_agent_chars=300))
    assert "n" * 301 not in brief
    assert "more characters left out: read `for_next_agent` in " \
           "plans/handoffs/00-step-number-0.md" in brief


def test_notes_budget_keeps_the_newest_and_counts_the_rest(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(n, input_variables=[]) for n in range(30)])
    for n in range(29):
        accept(store, n, facts=2, fact_len=100)
    brief = build_brief(store, None, 29, budget=BriefBudget(notes_chars=2000))
    context = section(brief, "Context from previous work")
    bullets = [line for line in context.splitlines() if line.startswith("- ")]
    assert sum(len(b) + 1 for b in bullets) <= 2000
    assert "discovery 1 of step 28" in context  # the newest is kept
    assert "discovery 0 of step 0" not in context
    m = re.search(r"\((\d+) older discoveries left out: read them in plans/NOTES\.md\)",
                  context)
    assert m
    kept = sum(1 for b in bullets if b.startswith("- discovery"))
    assert int(m.group(1)) + kept == DEFAULT_KEEP  # NOTES.md keeps that many; the rest archived
    assert "plans/archive/NOTES-*.md" in context
    # The discoveries kept are the newest ones, contiguous and in order.
    numbers = [int(re.search(r"of step (\d+)", b).group(1))  # type: ignore[union-attr]
               for b in bullets if b.startswith("- discovery")]
    assert numbers == sorted(numbers) and numbers[-1] == 28


def test_long_facts_are_clipped(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1)])
    accept(store, 0, fact_len=590)
    brief = build_brief(store, None, 1, budget=BriefBudget(fact_chars=100))
    bullets = [ln for ln in brief.splitlines() if ln.startswith("- discovery")]
    assert bullets and all(len(b) <= 102 and b.endswith("…") for b in bullets)


def test_brief_size_is_flat_as_the_plan_grows(tmp_path: Path) -> None:
    n_steps = 80
    store = write_plan(tmp_path, [make_step(n) for n in range(n_steps)])
    for n in range(n_steps - 1):
        accept(store, n, facts=3, fact_len=120)
    plan = store.load()
    early = len(build_brief(store, plan, 10))
    for late in (40, 79):
        assert len(build_brief(store, plan, late)) <= early + 60


# -- verification and the handoff -----------------------------------------------------


def test_verification_part_follows_the_project(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    store = write_plan(tmp_path, [make_step(0)])
    assert "`evidence` may stay empty" in build_brief(store, None, 0)
    monkeypatch.setenv("TEST_CMD", "make test")
    verify = section(build_brief(store, None, 0), "Before you hand off")
    assert "run `maker verify --step 0`" in verify
    assert "test (`make test`)" in verify


def test_handoff_format_in_the_brief(tmp_path: Path) -> None:
    store = write_plan(tmp_path, [make_step(0), make_step(1)])
    brief = build_brief(store, None, 1)
    part = section(brief, "Your final message")
    assert "the handoff YAML below and nothing else" in part
    assert "- `step` is 1." in part
    assert "`result`, `files`" in part
    data = template_in(brief)
    assert data["step"] == 1
    assert data["status"] == "complete"
    assert data["output"] == {"result": "<string>", "files": ["<string>"]}
    for key in ("summary", "discoveries", "decisions", "blockers", "for_next_agent",
                "files_changed", "evidence"):
        assert key in data


TEMPLATES: list[tuple[Any, dict[str, Any]]] = [
    ("{result: string}", {"result": "<string>"}),
    ({"user": {"id": "int", "name": "string"}, "tags": ["string"]},
     {"user": {"id": "<int>", "name": "<string>"}, "tags": ["<string>"]}),
    ("{}", {}),
    ("a free-text schema", {"<key>": "<value>"}),
]


@pytest.mark.parametrize("schema,output", TEMPLATES)
def test_handoff_template_outputs(schema: Any, output: dict[str, Any]) -> None:
    text = handoff_template(make_step(4, output_schema=schema))
    data = yaml.safe_load(text)
    assert data["step"] == 4
    assert data["output"] == output
    assert "# becomes step_4_output" in text


def test_handoff_template_conditional_adds_next_step() -> None:
    text = handoff_template(make_step(3, task_type="conditional_step",
                                      next_step_sequence_number=-2,
                                      output_schema="{reason: string}"))
    data = yaml.safe_load(text)
    assert data["output"] == {"reason": "<string>",
                              "next_step": "<the step number to run next, or -1 to end the "
                                           "plan>"}


def test_previous_handoff_reads_accepted_at_anywhere_in_the_front_matter(tmp_path: Path
                                                                         ) -> None:
    store = write_plan(tmp_path, [make_step(n, input_variables=[]) for n in range(4)])
    accept(store, 0, note="zero")
    # A hand-written handoff: accepted_at far down a long front matter, and newest.
    store.write_handoff(1, {"step": 1, "status": "complete", "summary": "s" * 3000,
                            "for_next_agent": "one", "accepted_at": utc_now()}, "body")
    # Another with no accepted_at at all: it counts as the oldest.
    store.write_handoff(2, {"step": 2, "status": "complete", "for_next_agent": "two"}, "b")
    prev = previous_handoff(store, 3)
    assert prev is not None and prev["for_next_agent"] == "one"


# -- seed 002's summaries -------------------------------------------------------------


def test_the_summaries_of_the_previous_step_and_the_depends_on_steps_reach_the_brief(
        tmp_path: Path) -> None:
    from maker.executor.launch.notes_context import NotesContext

    steps = [make_step(n, input_variables=[]) for n in range(5)]
    steps[4].depends_on = [0, 1, 2]
    store = write_plan(tmp_path, steps)
    for n in (0, 1, 3):  # step 2 has no handoff yet; step 3 is the previous agent
        accept(store, n)
    brief = build_brief(store, None, 4)
    context = section(brief, "Context from previous work")
    assert "What it did (its `summary`): did 3" in context
    deps = context.split("### What the steps this one depends on did")[1]
    assert deps.index("- step 2: no accepted handoff yet") < deps.index(
        "- step 1 (complete): did 1") < deps.index("- step 0 (complete): did 0")
    assert "did 3" not in deps  # the previous step is shown once
    # The headless runner's prompt (seed 000's AgentRunner) reads the same section.
    assert context.strip() in NotesContext(store).get_context_for_prompt(4)


def test_a_long_summary_is_cut_with_where_to_read_it_whole(tmp_path: Path) -> None:
    steps = [make_step(n, input_variables=[]) for n in range(3)]
    steps[2].depends_on = [0]
    store = write_plan(tmp_path, steps)
    accept(store, 0, summary="a" * 5000)
    accept(store, 1, summary="b" * 5000)
    brief = build_brief(store, None, 2, budget=BriefBudget(summary_chars=300))
    assert "a" * 300 not in brief and "b" * 300 not in brief
    assert "a" * 200 in brief and "b" * 200 in brief
    assert "(cut: read `summary` in plans/handoffs/00-step-number-0.md)" in brief
    assert "(cut: read `summary` in plans/handoffs/01-step-number-1.md)" in brief


def test_summaries_past_the_budget_are_named_and_counted_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = [make_step(n, input_variables=[]) for n in range(40)]
    steps[39].depends_on = list(range(39))
    store = write_plan(tmp_path, steps)
    for n in range(38):
        accept(store, n, summary=f"summary of step {n} ".ljust(500, "s"))
    read: list[int] = []
    real = PlanStore.read_handoff

    def counted(self: PlanStore, number: int) -> Any:
        read.append(number)
        return real(self, number)

    monkeypatch.setattr(PlanStore, "read_handoff", counted)
    budget = BriefBudget(summaries_chars=2000, summary_chars=500, summaries_named=3)
    context = section(build_brief(store, None, 39, budget=budget),
                      "Context from previous work")
    deps = context.split("### What the steps this one depends on did")[1]
    shown = [int(m) for m in re.findall(r"^- step (\d+)", deps, re.MULTILINE)]
    # Nearest first (37 is the previous agent's, above; 38 has no handoff).
    assert shown == [38, 36, 35, 34], deps
    assert "- step 38: no accepted handoff yet" in deps
    assert "(34 older summaries left out (steps 33, 32, 31 and 31 more): read `summary` " \
           "in their handoffs, plans/handoffs/NN-*.md)" in deps, deps
    # The left-out steps' handoffs are never opened (37: the previous agent's).
    assert sorted(read) == [34, 35, 36, 37, 38]


def test_the_brief_stays_flat_when_every_step_depends_on_every_earlier_one(
        tmp_path: Path) -> None:
    n_steps = 60
    steps = [make_step(n, input_variables=[]) for n in range(n_steps)]
    for n, spec in enumerate(steps):
        spec.depends_on = list(range(n))
    store = write_plan(tmp_path, steps)
    for n in range(n_steps - 1):
        accept(store, n, facts=2, fact_len=100, summary=f"step {n} did ".ljust(1500, "x"))
    plan = store.load()
    # (The step's own "depends on:" line lists them all: the plan's to size.)
    sizes = [len(section(build_brief(store, plan, n), "Context from previous work"))
             for n in (10, 30, 59)]
    assert max(sizes) <= sizes[0] + 60, sizes
