"""``/maker:step`` of a step whose code is voted on (``votes: K`` on a step whose tools
write): ``maker step begin`` hands the step to maker's engine, a run of that one step
(``maker.executor.loop.one_step``), rather than to one subagent that would answer it once.
What the main agent is told at each point, what the run's record holds, and that the
engine runs that step and no other. The whole flow with the real client, interactive, is
``tests/e2e/test_interactive_code_votes.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.engine_fakes import ScriptedModel, parts, run
from harness.repos import sh
from harness.session_hooks import stop
from harness.step_plans import handoff, make_step, step_spec, write
from maker.cli import begin_cmds
from maker.cli.main import cli
from maker.core.events import StepStarted
from maker.engine.orchestrator import EXIT_COMPLETE, Orchestrator
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approve_step
from maker.executor.loop import one_step
from maker.executor.loop.next_action import next_action
from maker.executor.loop.words import ENGINE_GOES_ON
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import fail_step, start_step
from maker.executor.state.run import ENGINE, begin_run, live_run
from maker.executor.state.stretch import STRETCH_COMMAND, began, ended
from maker.store.plan_store import PlanStore
from maker.store.requests import save_request
from maker.store.run_file import read_run

SESSION, PROMPT = "sess-1", "p-1"


def _plan(project: Path, policy: str = "auto") -> PlanStore:
    """Step 1 writes code and asks for a vote of 2; steps 2 and 3 do not vote. Each says
    what it writes, so steps 1 and 2 could run side by side."""
    return write(project, [
        step_spec(1, 2, primary_tools=["Read", "Write", "Edit"], votes=2,
                  writes=["src/calc.py"], title="Fix clamp"),
        step_spec(2, 3, primary_tools=["Read", "Write"], writes=["docs/"]),
        make_step(3, -1),
    ], policy)


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """claude-agent-sdk is here; the stretches maker starts, by the prompt they wake."""
    monkeypatch.setattr(one_step, "engine_here", lambda: True)
    started: list[str] = []
    monkeypatch.setattr(begin_cmds, "start_stretch",
                        lambda store, key: started.append(key) or 1.0)
    return started


def _begin(store: PlanStore, tmp_path: Path, typed: str) -> Result:
    save_request(SESSION, typed, tmp_path / "data", prompt_id=PROMPT)
    out = CliRunner().invoke(cli, ["step", "begin", "--session", SESSION, "--data-dir",
                                   str(tmp_path / "data"), "--plans-dir", str(store.root)])
    assert out.exit_code == 0, out.output
    return out


def test_the_step_goes_to_maker_engine_and_the_persons_turn_may_end(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = _plan(project)
    out = _begin(store, tmp_path, "/maker:step 1 keep the fix small")
    assert out.output.startswith("STARTED: step 1 (Fix clamp) started. Its code is voted on "
                                 "(votes: 2): 2 to 8 samples, each a session of maker's "
                                 "engine in a worktree of its own"), out.output
    assert f"NEXT: end your turn in a sentence: {ENGINE_GOES_ON}." in out.output
    assert "step-executor" not in out.output  # (no subagent answers it once)
    assert engine == [PROMPT]  # (its stretch started, for this prompt's wake)
    run = live_run(store)
    assert (run["mode"], run["only"], run["notes"]) == (ENGINE, 1, "keep the fix small")
    # the step is the engine's: the person's turn that typed it may end without a launch
    assert store.load_step(1).status == "in-progress"
    assert store.read_active()["session_id"] == begin_cmds.ENGINE_SESSION
    assert stop(prompt_id=PROMPT) is None


def test_without_the_sdk_the_step_is_answered_once_by_a_subagent(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(one_step, "engine_here", lambda: False)
    store = _plan(project)
    out = _begin(store, tmp_path, "/maker:step 1")
    assert "NEXT: launch the maker:step-executor" in out.output, out.output
    assert "(Step 1 asks for a vote on its code (votes: 2), which runs in maker's engine, " \
           "and claude-agent-sdk is not installed beside maker: one executor answers it." \
        in out.output
    assert not read_run(store).get("only")
    assert store.read_active()["session_id"] == SESSION


def test_a_stretch_maker_cannot_start_is_the_main_agents_to_run(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(one_step, "engine_here", lambda: True)
    monkeypatch.setattr(begin_cmds, "start_stretch", lambda store, key: None)
    store = _plan(project)
    out = _begin(store, tmp_path, "/maker:step 1")
    assert f"NEXT: run `{STRETCH_COMMAND}` (Bash, run_in_background true)" in out.output
    assert live_run(store)["stretch"] == {"wake_for": PROMPT, "wake_at": None}


def test_the_next_step_untyped_goes_to_the_engine_and_joins_no_wave(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = write(project, [
        step_spec(1, 2, primary_tools=["Read", "Write", "Edit"], votes=2,
                  writes=["src/calc.py"], depends_on=[]),
        step_spec(2, -1, primary_tools=["Read", "Write"], writes=["docs/"], depends_on=[]),
    ])
    # (a committed repository: steps 1 and 2 could run side by side, each in a worktree)
    sh(project, "git init -q && git config user.email a@b && git config user.name a && "
                "git add -A && git commit -qm base")
    out = _begin(store, tmp_path, "/maker:step")
    assert out.output.startswith("STARTED: step 1 "), out.output  # (alone: no wave)
    assert "worktree maker made" not in out.output and engine == [PROMPT]
    assert [r.status for r in store.load().steps] == ["in-progress", "pending"]


def test_a_step_that_does_not_vote_is_a_subagents_as_before(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = _plan(project)
    approve_done(store, 1)
    out = _begin(store, tmp_path, "/maker:step 2")
    assert "NEXT: launch the maker:step-executor" in out.output, out.output
    assert "asks for a vote" not in out.output
    assert engine == [] and not live_run(store).get("only")


def approve_done(store: PlanStore, n: int) -> None:
    """Step ``n`` done and approved, as its executor and the person would leave it."""
    start_step(store, n, session_id="maker-run-x", take_over=True)
    record_orient(store, n, "none")
    accept_handoff(store, handoff(n, output={"result": "ok"}), step=n)
    if store.load_step(n).status != "complete":
        approve_step(store, n, "person")


def _one_step_run(store: PlanStore, n: int = 1) -> None:
    with store.lock():
        begin_run(store, SESSION, None, ENGINE, only=n)


def test_the_run_of_one_step_runs_the_engine_until_that_step_is_done(project: Path) -> None:
    store = _plan(project)
    _one_step_run(store)
    assert next_action(store, SESSION, PROMPT).kind == "stretch"
    start_step(store, 1, session_id="maker-run-x", take_over=True)
    assert next_action(store, SESSION, PROMPT).kind == "stretch"  # (the engine goes on)


def test_the_step_done_ends_it_with_step_complete_and_starts_nothing_more(
        project: Path) -> None:
    store = _plan(project)
    _one_step_run(store)
    approve_done(store, 1)
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "done" and action.said.startswith("maker: step 1 (Fix clamp) is "
                                                            "complete"), action.said
    assert action.said.endswith("end with the line STEP_COMPLETE.")
    assert [r.status for r in store.load().steps] == ["complete", "pending", "pending"]
    # the run waits for /maker:run, which goes on with the whole plan
    assert not live_run(store) and "ran alone" in read_run(store)["stopped"]["why"]
    with store.lock():
        begin_run(store, SESSION, None, ENGINE)
    assert live_run(store)["only"] is None
    assert next_action(store, SESSION, PROMPT).kind == "stretch"


def test_its_approval_is_asked_and_no_other_steps(project: Path) -> None:
    store = _plan(project, policy="never")
    start_step(store, 1, session_id="maker-run-x", take_over=True)
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1, output={"result": "ok"}), step=1)
    assert store.load_step(1).status == "awaiting-approval"
    _one_step_run(store, 2)  # (a run of step 2 alone asks nothing about step 1)
    assert next_action(store, SESSION, PROMPT).kind == "stretch"
    _one_step_run(store, 1)
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "ask" and "Approve step 1" in action.said, action.said


@pytest.mark.parametrize(("exit_code", "line"), [(1, "STEP_BLOCKED"), (3, "STEP_BLOCKED")])
def test_an_engine_that_stopped_ends_the_step_with_its_line(
        project: Path, exit_code: int, line: str) -> None:
    store = _plan(project)
    _one_step_run(store)
    start_step(store, 1, session_id="maker-run-x", take_over=True)
    began(store)
    ended(store, exit_code, "an SDK call failed: the API is overloaded")
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "stop" and action.said.startswith(
        "Step 1 stopped: an SDK call failed"), action.said
    assert action.said.endswith(f"end with the line {line}.")
    assert "RUN_STOPPED" not in action.said


def test_a_failed_step_ends_with_step_failed(project: Path) -> None:
    store = _plan(project)
    _one_step_run(store)
    start_step(store, 1, session_id="maker-run-x", take_over=True)
    fail_step(store, 1, "the vote on the step's code was undecided")
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "stop" and "step 1 (Fix clamp) is failed: the vote" in action.said
    assert action.said.endswith("end with the line STEP_FAILED."), action.said


def test_the_engine_runs_that_step_alone_with_the_persons_notes(project: Path) -> None:
    store = write(project, [make_step(1, 2), make_step(2, 3), make_step(3, -1)])
    with store.lock():
        begin_run(store, SESSION, None, ENGINE, only=2, notes="mind the edge at zero")
    start_step(store, 1, session_id="x")
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1, output={"result": "ok"}), step=1)
    model = ScriptedModel([handoff(2)])
    result = run(Orchestrator(store, parts(model), only=2, parallel=3))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert [e.step for e in result.events if isinstance(e, StepStarted)] == [2]
    assert [r.status for r in store.load().steps] == ["complete", "complete", "pending"]
    assert "<user-notes>\nmind the edge at zero\n</user-notes>" in model.prompts[0][1]


def test_step_zero_is_a_step_like_any_other(project: Path, tmp_path: Path,
                                            engine: list[str]) -> None:
    store = write(project, [step_spec(0, -1, primary_tools=["Read", "Write"], votes=2,
                                      writes=["src/"])])
    out = _begin(store, tmp_path, "/maker:step 0")
    assert out.output.startswith("STARTED: step 0 "), out.output
    assert "step-executor" not in out.output and live_run(store)["only"] == 0


def test_the_plans_last_step_done_ends_the_run(project: Path) -> None:
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write"], votes=2,
                                      writes=["src/"])])
    _one_step_run(store)
    approve_done(store, 1)
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "done" and action.said.endswith("STEP_COMPLETE.")
    assert read_run(store)["ended_at"] and not read_run(store)["stopped"]
