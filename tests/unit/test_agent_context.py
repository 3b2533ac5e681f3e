"""Seed 002's context fields (docs/architecture.md#the-seeds) from every agent, not the
step executor's alone: the
reviewer's (after its VERDICT line) and the planner's (at the plan's top level), in both
front ends, with the real store.

- The reviewer's discoveries, decisions and blockers land in NOTES.md tagged with the
  reviewed step (and its attempt), only when maker takes the review, and reach the next
  step's brief; its ``for_next_agent`` reaches the step's next attempt when the review
  sends it back. Malformed fields are refused once (nothing recorded), then left out.
- The planner's facts are plan-wide (no tag), written with the plan, never with a
  refused one, and reach step 0's brief.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.engine_fakes import FakePlanner, FakeReviewer, ScriptedModel, parts, run
from harness.hooks import executor_returns, fire, subagent_input
from harness.step_plans import handoff, make_step, step_data, write
from maker.cli.main import cli
from maker.core.agent_context import AgentContext
from maker.core.models import Plan
from maker.engine.orchestrator import EXIT_COMPLETE, Orchestrator
from maker.executor.acceptance.review import latest_review, read_review
from maker.executor.launch.brief import build_brief
from maker.executor.state.lifecycle import start_step
from maker.planner.linter import lint_text
from maker.store.notes import read_notes
from maker.store.plan_store import PlanStore

REVIEWER = "maker:reviewer"
FOUND = "The cache is per process; tests must reset it."
DECIDED = "Keep the v1 wire format."
REVIEW = f"""GREEN: the change is right.
VERDICT: approve

```yaml
summary: Sound change.
discoveries:
  - {FOUND}
decisions:
  - {DECIDED}
```
"""
SENT_BACK = """RED: src/app.py: the error path is untested.
VERDICT: changes-needed

discoveries: ["The error path logs twice."]
for_next_agent: Add the test first; the fix is one line.
"""


def steps() -> list:  # type: ignore[type-arg]
    return [make_step(1, 2), make_step(2, -1)]


def notes(store: PlanStore) -> dict[str, list[str]]:
    return read_notes(store.notes_path)


def notes_text(store: PlanStore) -> str:
    return store.notes_path.read_text() if store.notes_path.exists() else ""


def plugin_review(plugin: Path, text: str, agent_id: str = "reviewer-1") -> dict | None:  # type: ignore[type-arg]
    return fire("subagent-stop", subagent_input(plugin, REVIEWER, text, agent_id=agent_id))


def plugin_awaiting(plugin: Path) -> PlanStore:
    """Step 1 of a two-step plan under the `reviewer` policy, done and awaiting review."""
    store = write(plugin, steps(), policy="reviewer")
    start_step(store, 1, session_id="sess-1")
    executor_returns(plugin, handoff(1))
    assert store.load_step(1).status == "awaiting-approval"
    return store


# -- the reviewer's answer, read --------------------------------------------------------


def test_a_review_without_fields_has_an_empty_context() -> None:
    answer = read_review("GREEN: fine\nVERDICT: approve\n")
    assert (answer.verdict, answer.context, answer.problems) == ("approve", AgentContext(), [])


def test_the_fields_after_the_verdict_are_read_fenced_or_not() -> None:
    fenced, bare = read_review(REVIEW), read_review(SENT_BACK)
    assert fenced.problems == [] and fenced.context.discoveries == [FOUND]
    assert fenced.context.decisions == [DECIDED] and fenced.context.summary == "Sound change."
    assert bare.verdict == "changes-needed" and bare.problems == []
    assert bare.context.for_next_agent == "Add the test first; the fix is one line."


@pytest.mark.parametrize(("after", "said"), [
    ("discoveries: The cache is per process.",
     "discoveries: must be a list of texts, got a text (fix: write `discoveries:` then one "
     "`- text` line per item"),
    ("discoveries: {cache: per process, tests: reset}",
     "discoveries: must be a list of texts, got a mapping"),
    ("blockers:\n  - [a, b]", "blockers[0]: must be a text, got a list"),
    ("summary: [one, two]", "summary: must be a text, got a list"),
    ("discoverys: [x]", "discoverys: is not a review's context field (fix: did you mean "
                        "`discoveries`?)"),
    ("Thanks, hope this helps!", "context: the text after the VERDICT line must be a YAML "
                                 "mapping, got a text"),
])
def test_malformed_fields_are_named_with_their_fix(after: str, said: str) -> None:
    answer = read_review(f"GREEN: fine\nVERDICT: approve\n{after}\n")
    assert answer.verdict == "approve" and answer.context == AgentContext()
    assert any(said in str(p) for p in answer.problems), answer.problems


# -- the reviewer, in both front ends ---------------------------------------------------


def test_a_reviewers_facts_land_tagged_with_the_step_and_reach_the_next_brief(
        both: tuple[Path, Path]) -> None:
    plugin, engine = both

    store = plugin_awaiting(plugin)
    out = plugin_review(plugin, REVIEW)
    assert out is not None and "review of step 1 recorded" in out["systemMessage"]
    assert store.load_step(1).status == "complete"

    model = ScriptedModel([handoff(1), handoff(2)])
    engine_store = write(engine, steps(), policy="reviewer")
    result = run(Orchestrator(engine_store, parts(model, reviewer=FakeReviewer(
        REVIEW, "approve"))))
    assert result.exit_code == EXIT_COMPLETE, result.message

    for kept in (store, engine_store):
        facts = notes(kept)
        assert facts["Discoveries"] == [f"{FOUND} (step 1)"]
        assert facts["Decisions"] == [f"{DECIDED} (step 1)"]
        review = latest_review(kept, kept.load_step(1))
        assert review is not None and review.context.summary == "Sound change."
    assert FOUND in build_brief(store, None, 2) and DECIDED in build_brief(store, None, 2)
    step_2 = [prompt for n, prompt in model.prompts if n == 2]
    assert FOUND in step_2[0] and DECIDED in step_2[0]


def test_a_review_that_sends_the_step_back_gives_its_note_to_the_next_attempt(
        both: tuple[Path, Path]) -> None:
    plugin, engine = both
    store = plugin_awaiting(plugin)
    plugin_review(plugin, SENT_BACK)
    assert store.load_step(1).status == "in-progress"

    model = ScriptedModel([handoff(1), handoff(1), handoff(2)])
    engine_store = write(engine, steps(), policy="reviewer")
    result = run(Orchestrator(engine_store, parts(model, reviewer=FakeReviewer(
        SENT_BACK, REVIEW, "approve"))))
    assert result.exit_code == EXIT_COMPLETE, result.message
    # (the second review, of the step's second attempt: its facts say so)
    assert notes(engine_store)["Decisions"] == [f"{DECIDED} (step 1, attempt 2)"]

    again = [prompt for n, prompt in model.prompts if n == 1][1]
    for brief in (build_brief(store, None, 1), again):
        assert "the error path is untested" in brief
        assert "The reviewer's note for you: Add the test first; the fix is one line." in brief
        assert "The error path logs twice. (step 1)" in brief
    assert notes(store)["Discoveries"] == ["The error path logs twice. (step 1)"]
    assert notes(engine_store)["Discoveries"] == ["The error path logs twice. (step 1)",
                                                  f"{FOUND} (step 1, attempt 2)"]


def test_a_review_maker_does_not_take_records_nothing(project: Path) -> None:
    """The step no longer awaits approval: the review is not recorded, nor its facts."""
    store = write(project, steps(), policy="reviewer")
    start_step(store, 1, session_id="sess-1")
    out = plugin_review(project, REVIEW)
    assert out is not None and "not recorded" in out["systemMessage"]
    assert "Discoveries" not in notes(store) and latest_review(store, store.load_step(1)) is None


@pytest.mark.parametrize("bad", ["discoveries: The cache is per process.",
                                 "discoveries: {cache: per process}"])
def test_malformed_fields_are_refused_once_then_left_out_in_the_plugin(
        project: Path, bad: str) -> None:
    store = plugin_awaiting(project)
    before = notes_text(store)
    text = f"GREEN: fine\nVERDICT: approve\ndecisions: [{DECIDED}]\n{bad}\n"  # (one sound)

    out = plugin_review(project, text)
    assert out is not None and out["decision"] == "block"
    assert "maker refused your review (answer 1 of 2)" in out["reason"]
    assert "discoveries: must be a list of texts" in out["reason"]
    assert "nothing was recorded" in out["reason"]
    assert notes_text(store) == before
    assert latest_review(store, store.load_step(1)) is None
    assert store.load_step(1).status == "awaiting-approval"

    out = plugin_review(project, text)  # the same reviewer, malformed again: taken
    assert out is not None and "decision" not in out
    assert "Its context fields were left out: discoveries: must be a list" in \
        out["systemMessage"]
    assert notes_text(store) == before  # nothing of them, still
    review = latest_review(store, store.load_step(1))
    assert review is not None and review.approves and review.ignored
    assert store.load_step(1).status == "complete"


def test_a_refused_review_corrected_is_taken_whole_in_the_plugin(project: Path) -> None:
    store = plugin_awaiting(project)
    out = plugin_review(project, f"GREEN: fine\nVERDICT: approve\ndiscoveries: {FOUND}\n")
    assert out is not None and out["decision"] == "block"
    plugin_review(project, REVIEW)
    assert notes(store)["Discoveries"] == [f"{FOUND} (step 1)"]


def test_malformed_fields_are_refused_once_then_left_out_in_maker_run(project: Path) -> None:
    bad = f"GREEN: fine\nVERDICT: approve\ndecisions: [{DECIDED}]\ndiscoveries: {FOUND}\n"
    store = write(project, steps(), policy="reviewer")
    reviewer = FakeReviewer(bad, bad, "approve")
    result = run(Orchestrator(store, parts(ScriptedModel([handoff(1), handoff(2)]),
                                           reviewer=reviewer)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert reviewer.resumed == [None, "review-1", None]  # told in its own session
    told = reviewer.prompts[1]
    assert "maker refused your review (answer 1 of 2)" in told
    assert "discoveries: must be a list of texts, got a text" in told
    assert notes(store) == {}  # not even its sound decision
    review = latest_review(store, store.load_step(1))
    assert review is not None and review.approves and review.context == AgentContext()
    assert review.ignored and "discoveries: must be a list" in review.ignored[0]

    corrected = write(project / "again", steps(), policy="reviewer")
    result = run(Orchestrator(corrected, parts(ScriptedModel([handoff(1), handoff(2)]),
                                               reviewer=FakeReviewer(bad, REVIEW, "approve"))))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert notes(corrected)["Discoveries"] == [f"{FOUND} (step 1)"]


# -- the planner, in every place a plan is written ------------------------------------


def plan_yaml(**top: object) -> str:
    return yaml.safe_dump({"task": "Greet", "reasoning": "One step, then a check.",
                           "plan": [step_data(0), step_data(1, -1)], **top}, sort_keys=False)


def test_the_linter_takes_the_context_fields_and_still_names_a_misspelt_key() -> None:
    plan, problems = lint_text(plan_yaml(decisions=[DECIDED], summary="Two steps.",
                                         for_next_agent="Use the v1 client."))
    assert problems == [] and plan is not None
    assert plan.context.decisions == [DECIDED] and plan.context.summary == "Two steps."
    _, problems = lint_text(plan_yaml(decisons=[DECIDED]))
    assert [str(p) for p in problems] == [
        "decisons: is not a plan field (fix: did you mean `decisions`?)"]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("discoveries", "The API is v1.", "discoveries: must be a list of texts, got a text"),
    ("decisions", {"format": "v1"}, "decisions: must be a list of texts, got a mapping"),
    ("for_next_agent", ["a", "b"], "for_next_agent: must be a text, got a list"),
])
def test_the_planners_malformed_fields_refuse_the_plan_and_write_nothing(
        project: Path, field: str, value: object, said: str) -> None:
    plan, problems = lint_text(plan_yaml(**{field: value}))
    assert plan is None and any(said in str(p) for p in problems), problems
    source = project / "plan.yaml"
    source.write_text(plan_yaml(**{field: value}))
    result = CliRunner().invoke(cli, ["plan", "write", str(source)])
    assert result.exit_code != 0 and said in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (project / "plans").exists()


def test_maker_plan_write_records_the_planners_facts_plan_wide(project: Path) -> None:
    source = project / "plan.yaml"
    source.write_text(plan_yaml(decisions=[DECIDED], discoveries=[FOUND],
                                for_next_agent="Use the v1 client."))
    result = CliRunner().invoke(cli, ["plan", "write", str(source)])
    assert result.exit_code == 0, result.output
    store = PlanStore(project / "plans")
    facts = notes(store)
    assert facts["Decisions"] == [DECIDED] and facts["Discoveries"] == [FOUND]  # no tag
    assert facts["From the planner"] == ["For every step: Use the v1 client."]
    brief = build_brief(store, None, 0)
    assert DECIDED in brief and FOUND in brief and "Use the v1 client." in brief


def test_the_plugins_planner_hook_records_them_and_a_refused_plan_nothing(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml(
        decisions=DECIDED)))
    assert out is not None and out["decision"] == "block"
    assert "decisions: must be a list of texts, got a text" in out["reason"]
    assert not (project / "plans").exists()
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml(
        decisions=[DECIDED])))
    assert out is not None and "plan written" in out["systemMessage"]
    assert notes(PlanStore(project / "plans"))["Decisions"] == [DECIDED]


def test_maker_runs_planner_records_them_when_the_plan_is_written(project: Path) -> None:
    plan = Plan(reasoning="Because.", steps=steps(), task="Build the thing",
                context=AgentContext(decisions=[DECIDED]))
    model = ScriptedModel([handoff(1), handoff(2)])
    store = PlanStore(project / "plans")
    orch = Orchestrator(store, parts(model), planner=FakePlanner(plan), approve="auto")
    result = asyncio.run(orch.run("Build the thing"))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert notes(store)["Decisions"] == [DECIDED]
    assert DECIDED in model.prompts[0][1]  # the first step's brief
