"""A code step whose undecided vote is held for a person (``undecided_code_vote: ask``),
as every front end meets it: ``maker status`` and ``maker next`` say it waits for the
person and what they may do (in their JSON too); ``maker step start``, ``/maker:step``
(``maker step begin``), ``/maker:run --subagents`` (``maker loop begin``) and an
executor's launch refuse to take it up again, with ``held()``'s words, changing nothing
in ``plans/``. The step is held as the engine holds it (``held_vote.hold`` on the step
it started); ``test_code_vote_undecided`` holds one through a real vote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.session_hooks import decision, fire, said
from harness.step_plans import linear
from maker.cli.main import cli
from maker.executor.state.held_vote import hold
from maker.executor.state.lifecycle import start_step
from maker.executor.state.run import SUBAGENTS, begin_run
from maker.store.plan_store import PlanStore
from maker.store.requests import save_request

WHY = "the vote on the step's code was undecided: no behaviour led by 2 after 8 samples"
HELD = f"step 1 (Step number 1) waits for a person: {WHY}"
SHORT = ("its code vote was undecided, and `undecided_code_vote: ask` holds it for you. "
         "Reset it and run it again (`maker step reset 1`, then `maker run`; or "
         "/maker:reset 1, then /maker:run), or fail it (`maker step fail 1 --reason \"…\"`)")


def _held(project: Path) -> PlanStore:
    """Step 1 of 3 in progress under maker's engine, its code vote held for a person."""
    store = linear(project, 3)
    start_step(store, 1, session_id="maker-run-abc123", take_over=True)  # as StepRun
    hold(store, 1, WHY)
    return store


def _files(store: PlanStore) -> dict[str, bytes]:
    """Every file under plans/ but the plan lock's, and its bytes."""
    return {str(p.relative_to(store.root)): p.read_bytes() for p in store.root.rglob("*")
            if p.is_file() and not p.name.endswith(".lock")}


def _cli(store: PlanStore, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--plans-dir", str(store.root)])


def test_status_says_the_step_waits_for_the_person_and_what_they_may_do(
        project: Path) -> None:
    store = _held(project)
    out = _cli(store, "status")
    assert out.exit_code == 0, out.output
    assert f"Waits for you: step 1 (Step number 1): {SHORT}\n" in out.output
    assert "step 1 waits for you (its code vote was undecided)" in out.output
    assert "finish the step in progress with its handoff" not in out.output
    data = json.loads(_cli(store, "status", "--json").output)
    assert [s["held"] for s in data["steps"]] == [SHORT, None, None]
    assert "step 1 waits for you" in data["reason"]


def test_a_step_in_progress_that_is_not_held_shows_no_such_line(project: Path) -> None:
    store = linear(project, 3)
    start_step(store, 1, session_id="maker-run-abc123", take_over=True)
    out = _cli(store, "status")
    assert "Waits for you" not in out.output and "finish the step in progress" in out.output
    assert [s["held"] for s in json.loads(_cli(store, "status", "--json").output)["steps"]] \
        == [None, None, None]
    assert "it needs its handoff" in _cli(store, "next").output


def test_next_says_so_too(project: Path) -> None:
    store = _held(project)
    assert _cli(store, "next").output == f"step 1 (Step number 1) is in progress: {SHORT}\n"
    data = json.loads(_cli(store, "next", "--json").output)
    assert data["in_progress"] == [{"step": 1, "title": "Step number 1", "held": SHORT}]


@pytest.mark.parametrize("args", [["step", "start"], ["step", "start", "1"],
                                  ["step", "start", "1", "--session", "sess-2",
                                   "--take-over"],
                                  ["step", "start", "--json"]])
def test_maker_step_start_refuses_the_held_step_and_changes_nothing(
        project: Path, args: list[str]) -> None:
    store = _held(project)
    before = _files(store)
    out = _cli(store, *args)
    assert out.exit_code == 1, out.output
    assert out.stdout == ""  # (no brief: no executor is to work on it)
    assert out.stderr.startswith(f"maker: {HELD}"), out.stderr
    assert "`maker step fail 1 --reason" in out.stderr
    assert _files(store) == before


@pytest.mark.parametrize("typed", ["/maker:step 1", "/maker:step", "/maker:step 1 --force",
                                   "/maker:step the next step"])
def test_maker_step_refuses_the_held_step_and_changes_nothing(
        project: Path, tmp_path: Path, typed: str) -> None:
    """``/maker:step`` in a Claude Code session: a run that drove the plan is not stopped,
    the step is not taken over from the engine's session, no executor is launched."""
    store = _held(project)
    with store.lock():
        begin_run(store, "sess-1", None, SUBAGENTS)
    save_request("sess-2", typed, tmp_path / "data", prompt_id="p-2")
    before = _files(store)
    out = _cli(store, "step", "begin", "--session", "sess-2", "--data-dir",
               str(tmp_path / "data"))
    assert out.exit_code == 0, out.output  # (its form: a refusal the model reads)
    assert out.output.startswith(f"REFUSED: {HELD}"), out.output
    assert "STARTED" not in out.output and out.output.rstrip().endswith("STEP_BLOCKED.")
    assert _files(store) == before


def test_maker_run_with_subagents_stops_at_the_held_step(project: Path,
                                                         tmp_path: Path) -> None:
    """``/maker:run --subagents`` launches no executor for it (one would vote again), and
    does not take it over from the engine's session."""
    store = _held(project)
    save_request("sess-2", "/maker:run --subagents", tmp_path / "data", prompt_id="p-2")
    out = _cli(store, "loop", "begin", "--session", "sess-2", "--data-dir",
               str(tmp_path / "data"))
    assert out.exit_code == 0, out.output
    assert f"The run stopped: {HELD}" in out.output, out.output
    assert "RUN_STOPPED" in out.output and "Execute maker step" not in out.output
    assert (store.read_active() or {}).get("session_id") == "maker-run-abc123"


def test_an_executor_launched_for_the_held_step_is_refused(plugin_project: Path) -> None:
    store = _held(plugin_project)
    before = _files(store)
    out = fire("agent-launch", tool_name="Agent", tool_use_id="t1",
               tool_input={"subagent_type": "maker:step-executor",
                           "prompt": "Execute maker step 1."})
    assert decision(out) == "deny", out
    assert said(out).startswith(f"maker: {HELD}") and "Launch no executor" in said(out)
    assert _files(store) == before
