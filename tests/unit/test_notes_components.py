"""NOTES.md scoped by component: what a step's brief carries, and what trimming keeps.

The real store, the gate's own call that records facts (``add_step_facts``), the real
NOTES.md and the real brief builder; nothing of the notes is faked.
"""

from __future__ import annotations

from pathlib import Path

from harness.step_plans import step_spec
from maker.core.models import Plan
from maker.executor.acceptance.accept import add_step_facts
from maker.executor.launch.brief import build_brief
from maker.executor.launch.notes_context import NotesContext
from maker.executor.protocol.sweep import apply_sweep, decide_proposal
from maker.handoff.fields import parse_handoff
from maker.store.fact_scope import fact_scope, marked_plan_wide, scoped_keep
from maker.store.notes import add_notes, read_notes, retire_attempt
from maker.store.plan_store import PlanStore

# step: (component, depends_on). Step 4 (ui) depends on step 1 (api); 6 has no component.
PLAN = {0: (None, []), 1: ("api", [0]), 2: ("ui", [0]), 3: ("api", [1]), 4: ("ui", [1, 2]),
        5: ("api", [3]), 6: (None, [5])}


def write(root: Path, plan: dict[int, tuple[str | None, list[int]]] = PLAN) -> PlanStore:
    last = max(plan)
    steps = [step_spec(n, n + 1 if n < last else -1, component=c, depends_on=d)
             for n, (c, d) in plan.items()]
    store = PlanStore(root / "plans")
    store.write_plan(Plan(reasoning="why", steps=steps, task="An API and its page"))
    return store


def accept(store: PlanStore, n: int, *discoveries: str, at: str = "") -> None:
    """What the gate records of step ``n``'s complete handoff: its file and its facts."""
    data = {"step": n, "status": "complete", "output": {"result": f"r{n}"},
            "summary": f"did {n}", "discoveries": list(discoveries), "decisions": [],
            "blockers": [], "for_next_agent": f"note from step {n}", "files_changed": [],
            "evidence": [], "accepted_at": at or f"2026-01-01T00:00:0{n}.000000Z"}
    store.write_handoff(n, data, "body")
    handoff, problems = parse_handoff(data)
    assert handoff is not None and not problems
    plan = store.load()
    add_step_facts(store, plan, plan.get(n), handoff)


def notes_part(brief: str) -> str:
    return brief.split("### Project notes", 1)[1].split("\n## ", 1)[0]


def run_until(root: Path, step: int) -> PlanStore:
    """Steps 0..``step``-1 accepted, each with one discovery; a person's note and a fact
    marked plan-wide beside them."""
    store = write(root)
    for n in range(step):
        accept(store, n, f"fact of step {n}")
    add_notes(store.notes_path, {"discoveries": ["a person's fact"]})
    add_notes(store.notes_path, {"discoveries": ["Plan-wide: the ui listens on 8080"]},
              step=2, components=store.load().components())
    return store


def test_a_step_of_a_component_sees_its_part_its_dependencies_and_plan_wide_facts(
        tmp_path: Path) -> None:
    store = run_until(tmp_path, 6)
    ui = notes_part(build_brief(store, store.load(), 4))
    # Its own component's (2), the steps it depends on (1: api), the plan-wide ones: a
    # step with no component (0), a person's with no tag, one marked `Plan-wide:`.
    for fact in ("fact of step 0", "fact of step 1", "fact of step 2", "a person's fact",
                 "Plan-wide: the ui listens on 8080"):
        assert fact in ui, fact
    assert "fact of step 3" not in ui and "fact of step 5" not in ui  # api's, not a dependency
    assert ui.startswith(" (facts of component `ui`, of the steps this one depends on and "
                         "plan-wide ones, from plans/NOTES.md; newest last)")
    assert "(2 facts of other components left out: they are in plans/NOTES.md)" in ui
    api = notes_part(build_brief(store, store.load(), 5))
    assert "fact of step 3" in api and "fact of step 1" in api
    assert "fact of step 2" not in api and "fact of step 4" not in api
    assert "Plan-wide: the ui listens on 8080" in api and "a person's fact" in api


def test_a_step_without_a_component_sees_every_fact(tmp_path: Path) -> None:
    store = run_until(tmp_path, 6)
    everything = notes_part(build_brief(store, store.load(), 6))
    assert everything.startswith(" (plans/NOTES.md: durable facts from earlier steps, "
                                 "newest last)")
    for n in range(6):
        assert f"fact of step {n}" in everything
    assert "other components" not in everything


def test_the_previous_agent_is_the_last_of_the_steps_part(tmp_path: Path) -> None:
    store = run_until(tmp_path, 4)  # accepted in order 0 (none), 1 (api), 2 (ui), 3 (api)
    ui = build_brief(store, store.load(), 4)
    assert ("### From the previous agent (step 2, complete; the latest of component `ui`, of "
            "the steps this one depends on and of the plan-wide ones)") in ui
    assert "note from step 2" in ui and "note from step 3" not in ui
    accept(store, 4, "fact of step 4")
    api = build_brief(store, store.load(), 5)
    assert "### From the previous agent (step 3, complete; the latest of component `api`" in api
    # A step with no component hears from the last agent of the whole plan, as before.
    assert "### From the previous agent (step 4, complete)\n" in build_brief(
        store, store.load(), 6)


def test_a_dependency_in_another_component_is_a_previous_agent_too(tmp_path: Path) -> None:
    store = write(tmp_path)
    accept(store, 0, at="2026-01-01T00:00:00.000000Z")
    accept(store, 2, at="2026-01-01T00:00:01.000000Z")
    accept(store, 1, at="2026-01-01T00:00:02.000000Z")  # api, newest; step 4 depends on it
    accept(store, 3, at="2026-01-01T00:00:03.000000Z")  # api, not a dependency of 4
    assert "### From the previous agent (step 1, complete;" in build_brief(
        store, store.load(), 4)


def test_the_seeds_context_manager_is_scoped_by_the_steps_component(tmp_path: Path) -> None:
    store = run_until(tmp_path, 6)
    context = NotesContext(store).get_context_for_prompt(5)
    assert "facts of component `api`" in context
    assert "fact of step 3" in context and "fact of step 2" not in context


def test_the_plan_wide_mark_and_a_facts_scope(tmp_path: Path) -> None:
    components = {1: "api", 2: "ui", 3: None}
    assert fact_scope("retries on 429 (step 1)", components) == "api"
    assert fact_scope("retries on 429 (step 1, attempt 2)", components) == "api"
    assert fact_scope("a person's fact", components) is None
    assert fact_scope("shared (step 3)", components) is None
    assert fact_scope("of a step the plan lacks (step 9)", components) is None
    assert fact_scope("found by two (steps 1, 2)", components) is None
    assert fact_scope("plan-wide: port 8080 (step 1)", components) is None
    assert fact_scope("Not plan-wide: port 8080 (step 1)", components) == "api"
    # A reset attempt's decision keeps its mark under its label.
    path = tmp_path / "NOTES.md"
    path.write_text(retire_attempt("## Decisions\n\n- Plan-wide: use httpx (step 1)\n", 1))
    (entry,) = read_notes(path)["Earlier attempts (reset)"]
    assert entry == "earlier attempt (reset): decision: Plan-wide: use httpx (step 1)"
    assert marked_plan_wide(entry) and fact_scope(entry, components) is None


def test_trimming_keeps_the_newest_of_each_component(tmp_path: Path) -> None:
    store = write(tmp_path)
    components = store.load().components()
    path = store.notes_path
    add_notes(path, {"discoveries": ["ui's only fact"]}, step=2, components=components, keep=3)
    for i in range(10):
        add_notes(path, {"discoveries": [f"api fact {i}"]}, step=1 + 2 * (i % 2),
                  components=components, keep=3)
    kept = read_notes(path)["Discoveries"]
    assert kept == ["ui's only fact (step 2)", "api fact 7 (step 3)", "api fact 8 (step 1)",
                    "api fact 9 (step 3)"]
    archived = (store.archive_dir / "NOTES-discoveries.md").read_text()
    assert "api fact 0 (step 1)" in archived and "ui's only fact" not in archived
    # Without the components (a plan without them) it is one scope, as before.
    add_notes(path, {"discoveries": ["api fact 10"]}, step=1, keep=3)
    assert read_notes(path)["Discoveries"] == ["api fact 8 (step 1)", "api fact 9 (step 3)",
                                               "api fact 10 (step 1)"]


def test_a_section_stays_bounded_however_many_components(tmp_path: Path) -> None:
    # 60 components of 3 facts each, 2 kept a scope: 120 would pass the section's 50.
    components = {n: f"part-{n}" for n in range(60)}
    path = tmp_path / "NOTES.md"
    for i in range(3):
        for n in range(60):
            add_notes(path, {"discoveries": [f"fact {i} of {n}"]}, step=n,
                      components=components, keep=2)
    add_notes(path, {"discoveries": ["the quiet one"]}, step=99, components=components,
              keep=2)
    kept = read_notes(path)["Discoveries"]
    assert len(kept) == 50
    assert "the quiet one (step 99)" in kept  # the plan-wide scope: one fact, kept
    assert scoped_keep(["a"] * 5 + ["b"], 2) == [False, False, False, True, True, True]


def test_an_old_notes_file_reads_and_trims_as_before(tmp_path: Path) -> None:
    store = write(tmp_path, {n: (None, []) for n in range(3)})
    created = store.load().created_at
    old = ("# Notes\n\nDurable facts the steps of this plan left for the steps after them. "
           "maker adds the discoveries, decisions and blockers of every accepted handoff; "
           f"edit freely.\n\nPlan: {created}\n\n## Discoveries\n\n"
           + "".join(f"- old fact {i} (step {i % 3})\n" for i in range(45)))
    store.notes_path.write_text(old)
    brief = notes_part(build_brief(store, store.load(), 2))
    assert brief.startswith(" (plans/NOTES.md: durable facts from earlier steps, newest last)")
    assert "old fact 44 (step 2)" in brief and "other components" not in brief
    accept(store, 1, "new fact")
    kept = read_notes(store.notes_path)["Discoveries"]
    assert len(kept) == 40 and kept[0] == "old fact 6 (step 0)"
    assert kept[-1] == "new fact (step 1)"


def test_the_previous_plans_discoveries_reach_every_component(tmp_path: Path) -> None:
    """Their tags name the old plan's steps: this plan's components say nothing of them."""
    store = write(tmp_path)
    store.notes_path.write_text("# Notes\n\nPlan: 2020-01-01T00:00:00.000000Z\n\n"
                                "## Discoveries\n\n- the old plan's fact (step 3)\n")
    accept(store, 0, "fact of step 0")  # starts this plan's notes from the old ones
    assert "From the previous plan" in store.notes_path.read_text()
    assert "the old plan's fact (step 3)" in notes_part(build_brief(store, store.load(), 4))


def test_a_scope_change_a_person_accepted_reaches_every_component(tmp_path: Path) -> None:
    store = write(tmp_path)
    data = {"step": 3, "status": "complete", "output": {"result": "r3"}, "summary": "did 3",
            "for_next_agent": "", "files_changed": [], "evidence": [],
            "proposals": ["Paginate /users"]}
    handoff, problems = parse_handoff(data)
    assert handoff is not None and not problems
    with store.lock():
        apply_sweep(store, store.load(), 3, handoff)  # step 3: api, which step 4 does not need
    decide_proposal(store, 1, True, "user")
    assert "Scope change accepted by user (proposed by step 3): Paginate /users" in notes_part(
        build_brief(store, store.load(), 4))
