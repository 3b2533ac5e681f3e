"""The edge-case sweep as a recorded pass (seed 004: ``edge_case_sweep``;
docs/architecture.md#the-seeds): a complete
handoff of a step whose tools can write records what its sweep considered and found;
the gate refuses one without it, naming the fix; the record is kept with the handoff
and a person reads it on the approval screen, in `maker status` and in the run's report."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import handoff, step_spec, write
from maker.cli.main import cli
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.loop.words import approval_screen
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

WRITER = [step_spec(1, 2, primary_tools=["Read", "Write"]), step_spec(2, -1)]


def _started(project: Path, spec: list = WRITER) -> PlanStore:  # type: ignore[type-arg]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    store = write(project, spec, policy="never")
    start_step(store, 1, session_id="s")
    record_orient(store, 1, "none")
    (project / "a.txt").write_text("a\n")
    return store


def _refused(store: PlanStore, text: str) -> str:
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(store, text)
    return "\n".join(str(p) for p in refused.value.problems)


def test_a_writing_step_that_never_swept_is_refused_with_the_fix(project: Path) -> None:
    store = _started(project)
    said = _refused(store, handoff(1, files_changed=["a.txt"], sweep=None))
    assert "sweep: is missing: a complete handoff of a step that can write records its " \
           "edge-case sweep" in said
    assert "look for the edge cases a green suite does not show" in said
    assert store.load_step(1).status == "in-progress"
    said = _refused(store, handoff(1, files_changed=["a.txt"],
                                   sweep={"considered": [], "found": []}))
    assert "sweep: considered no case" in said


def test_a_sweep_that_annotates_must_say_it_found_something(project: Path) -> None:
    store = _started(project)
    said = _refused(store, handoff(1, files_changed=["a.txt"],
                                   edge_cases=[{"step": 2, "note": "an empty list"}],
                                   sweep={"considered": ["an empty list"], "found": []}))
    assert "sweep.found: is empty, but the handoff annotates 1 edge case(s)" in said


@pytest.mark.parametrize("sweep", ["none", ["a"], {"considered": "a"},
                                   {"considered": ["a", 3]}])
def test_a_sweep_of_another_shape_is_named(project: Path, sweep: object) -> None:
    store = _started(project)
    said = _refused(store, handoff(1, files_changed=["a.txt"], sweep=sweep))
    assert "sweep" in said and "must be" in said


def test_the_record_is_kept_and_a_person_reads_it(project: Path) -> None:
    store = _started(project)
    accept_handoff(store, handoff(1, files_changed=["a.txt"],
                                  edge_cases=[{"step": 2, "note": "an empty list"}],
                                  sweep={"considered": ["an empty list", "a huge file"],
                                         "found": ["an empty list crashes step 2's export"]}))
    kept = store.read_handoff(1)
    assert kept["sweep"] == {"considered": ["an empty list", "a huge file"],
                             "found": ["an empty list crashes step 2's export"]}
    said = "2 case(s) considered; found: an empty list crashes step 2's export; " \
           "annotated step 2"
    assert f"  Sweep: {said}" in approval_screen(store)
    shown = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert f"sweep: {said}" in shown.output, shown.output
    assert "an empty list" in store.load_step(2).edge_cases  # (the annotation, in the plan)


@pytest.mark.parametrize(("tools", "status"), [
    (["Read", "Grep"], "complete"),  # (a step that only reads: nothing to sweep)
    (["Read", "Write"], "blocked"),  # (not done: no sweep owed)
])
def test_no_sweep_is_owed_where_nothing_was_written_or_done(
        project: Path, tools: list[str], status: str) -> None:
    store = _started(project, [step_spec(1, -1, primary_tools=tools)])
    (project / "a.txt").unlink()
    extra = {"blockers": ["the API is down"]} if status == "blocked" else {}
    result = accept_handoff(store, handoff(1, status=status, sweep=None,
                                           files_changed=[], **extra))
    assert result.status in ("awaiting-approval", "blocked", "complete")


def test_the_runs_report_says_each_steps_sweep(project: Path) -> None:
    from maker.executor.loop.report import report

    store = _started(project)
    accept_handoff(store, handoff(1, files_changed=["a.txt"],
                                  sweep={"considered": ["a huge file"], "found": []}))
    said = report(store, store.load(), {"id": "r1", "steps": {"1": {"status": "complete"}}})
    assert "; sweep: 1 case(s) considered; nothing found" in said
