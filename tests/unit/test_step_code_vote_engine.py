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
from harness.session_hooks import decision, launch, said, stop
from harness.step_plans import handoff, make_step, step_spec, write
from maker.cli import begin_cmds
from maker.cli.main import cli
from maker.core.events import StepStarted
from maker.engine.orchestrator import EXIT_COMPLETE, Orchestrator
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approve_step, reject_step
from maker.executor.loop.next_action import next_action
from maker.executor.loop.one_step import one_step_next
from maker.executor.loop.words import ENGINE_GOES_ON, answered, typed_in_run
from maker.executor.protocol.orient import person_decides, record_orient
from maker.executor.rules import vote_rules
from maker.executor.state.lifecycle import fail_step, start_step
from maker.executor.state.run import (
    ENGINE,
    ENGINE_SESSION,
    begin_run,
    choose_policy,
    live_run,
    run_notes,
    stop_run,
)
from maker.executor.state.stretch import STRETCH_COMMAND, began, ended, holding_stretch
from maker.executor.verdicts.blocked import person_starts
from maker.executor.verdicts.revision import run_again
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
    monkeypatch.setattr(vote_rules, "engine_here", lambda: True)
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
    assert store.read_active()["session_id"] == ENGINE_SESSION
    assert stop(prompt_id=PROMPT) is None


def test_without_the_sdk_the_step_is_answered_once_by_a_subagent(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vote_rules, "engine_here", lambda: False)
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
    monkeypatch.setattr(vote_rules, "engine_here", lambda: True)
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
    start_step(store, 1, session_id=ENGINE_SESSION)  # (as `maker step begin` does)
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
    assert "Approve step 1" not in next_action(store, SESSION, PROMPT).said
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
    start_step(store, 2, session_id=ENGINE_SESSION)  # (as `maker step begin` does)
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


def test_a_step_put_back_meanwhile_is_not_run_again(project: Path) -> None:
    """A person's /maker:reset while the engine works: the run stops there, and the
    engine runs nothing (the step is the person's to start again)."""
    store = _plan(project)
    _one_step_run(store)
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "stop" and "is pending again; `/maker:step 1` runs it again" in \
        action.said and action.said.endswith("STEP_BLOCKED."), action.said
    result = run(Orchestrator(store, parts(ScriptedModel([])), only=1))
    assert not [e for e in result.events if isinstance(e, StepStarted)]
    assert store.load_step(1).status == "pending"


def test_a_run_policy_and_budget_of_an_earlier_maker_run_do_not_decide_the_step(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = _plan(project, policy="never")
    with store.lock():
        begin_run(store, SESSION, None, ENGINE, budget=0.5)
    choose_policy(store, "auto", "user (AskUserQuestion, at step 0)")
    stop_run(store, "the user stopped it (/maker:run --stop)")
    _begin(store, tmp_path, "/maker:step 1")
    run_now = live_run(store)
    assert run_now["only"] == 1 and run_now["policy"] is None and run_now["budget"] is None
    with store.lock():  # (the /maker:run typed again has its own back)
        begin_run(store, SESSION, None, ENGINE)
    run_now = live_run(store)
    assert run_now["policy"]["name"] == "auto" and run_now["budget"]["max_usd"] == 0.5


def test_no_executor_may_be_launched_while_the_engine_runs_the_step(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = _plan(project)
    _begin(store, tmp_path, "/maker:step 1")
    out = launch(prompt_id=PROMPT)
    assert decision(out) == "deny" and "maker's engine runs this step" in said(out)
    assert "/maker:step 1 or /maker:run takes the step up again" in said(out)
    stop_run(store, "the engine stopped")  # (the step stays the engine's)
    with holding_stretch(store) as mine:  # (a stretch still at work)
        assert mine and decision(launch(prompt_id=PROMPT)) == "deny"
    # no engine at work: a person's /maker:run --subagents may run the step
    assert decision(launch(prompt_id=PROMPT)) != "deny"


def test_a_revision_in_a_run_of_the_engine_is_the_engines(project: Path) -> None:
    store = _plan(project, policy="never")
    _one_step_run(store)
    start_step(store, 1, session_id="maker-run-x", take_over=True)
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1, output={"result": "ok"}), step=1)
    reject_step(store, 1, "use ints", by="user (AskUserQuestion)")
    said_now = run_again(store, 1, "use ints", "the user", SESSION, PROMPT)
    assert said_now.endswith("maker's engine runs it again, with them in its brief, as the "
                             "run goes on (or `/maker:step 1`)."), said_now
    assert "launch" not in said_now.lower()
    assert store.read_active()["session_id"] == ENGINE_SESSION  # (the person's turn may end)
    assert next_action(store, SESSION, PROMPT).kind == "stretch"


def test_start_anyway_of_a_blocked_code_step_goes_to_the_engine(
        project: Path, engine: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    store = _plan(project)  # (step 2 depends on step 1, pending)
    store = write(project, [
        step_spec(1, 2, primary_tools=["Read", "Write"], writes=["docs/"]),
        step_spec(2, -1, primary_tools=["Read", "Write", "Edit"], votes=2,
                  writes=["src/calc.py"], depends_on=[1]),
    ])
    save_request(SESSION, "/maker:step 2 keep it small", prompt_id=PROMPT)  # (its question's)
    told = person_starts(store, 2, True, SESSION, PROMPT)
    assert told.endswith("its code is voted on in maker's engine."), told
    assert "launch" not in told.lower() and live_run(store)["only"] == 2
    assert store.read_active()["session_id"] == ENGINE_SESSION
    assert live_run(store)["notes"] == "keep it small"  # (the person's, for its sessions)


def test_a_decision_typed_in_a_run_of_one_step_ends_with_the_steps_line(
        project: Path) -> None:
    store = _plan(project, policy="never")
    _one_step_run(store)
    approve_done(store, 1)
    told = typed_in_run(store, "maker: the user approved step 1; it is complete. End with "
                               "STEP_COMPLETE.")
    assert "step 1 (Fix clamp) is complete" in told and told.endswith("STEP_COMPLETE.")
    assert "/maker:run" not in told and not live_run(store)
    _one_step_run(store, 2)
    told = typed_in_run(store, "maker: the user rejected step 2; it is back to pending.")
    assert told.endswith("`/maker:step 2` runs it again once the step says what to change. "
                         "Launch nothing now, and end with the line STEP_REJECTED."), told
    assert not live_run(store)


def test_a_decision_typed_too_early_leaves_the_run_of_one_step_going(project: Path) -> None:
    store = _plan(project, policy="never")
    start_step(store, 1, session_id=ENGINE_SESSION)
    _one_step_run(store)
    early = "maker: /maker:approve was not recorded: step 1 is in-progress."
    with holding_stretch(store) as mine:  # (the engine works on it)
        assert mine
        told = typed_in_run(store, early)
        assert told.endswith("maker's engine goes on with it, and maker wakes you when it "
                             "stops. Launch nothing now."), told
    assert live_run(store)["only"] == 1  # (its wake will find the run live)
    told = typed_in_run(store, early)  # (no stretch runs: the person's to go on)
    assert told.endswith("`/maker:step 1` goes on with it. Launch nothing now."), told
    assert live_run(store)


def test_an_engine_that_no_longer_runs_gives_the_step_up_to_a_typed_step(
        project: Path, tmp_path: Path, engine: list[str]) -> None:
    store = _plan(project)
    start_step(store, 1, session_id="maker-run-0123abcd")  # (a headless `maker run` at work)
    out = _begin(store, tmp_path, "/maker:step")
    assert out.output.startswith("REFUSED: step 1 (Fix clamp) is in progress in another"), \
        out.output
    start_step(store, 1, session_id=f"{ENGINE_SESSION}-abc", take_over=True)  # (a stretch's)
    out = _begin(store, tmp_path, "/maker:step")
    assert out.output.startswith("STARTED: step 1 (Fix clamp) taken over (maker's engine, "
                                 "which had it (maker-run-stretch-abc), no longer runs)"), \
        out.output
    assert engine == [PROMPT] and live_run(store)["only"] == 1


def test_long_notes_are_kept_cut_and_say_so(project: Path) -> None:
    store = _plan(project)
    with store.lock():
        begin_run(store, SESSION, None, ENGINE, only=1, notes="x" * 30_000)
    brief = run_notes(store, 1)
    assert "x" * 20_000 + " [… cut at 20,000 characters]\n</user-notes>" in brief
    assert "x" * 20_001 not in brief


def test_a_rejection_with_nothing_to_change_ends_the_step_rejected(project: Path) -> None:
    store = _plan(project, policy="never")
    _one_step_run(store)
    told = answered(store, "maker: the user rejected step 1; it is back to pending with the "
                           "notes ''. End with STEP_REJECTED.", SESSION, PROMPT)
    assert "`/maker:step 1` runs it again once the step or the plan says what to change" \
        in told and told.endswith("end with the line STEP_REJECTED."), told
    assert "RUN_STOPPED" not in told and not live_run(store)


def test_only_a_complete_step_ends_its_run_complete(project: Path) -> None:
    store = _plan(project, policy="never")
    start_step(store, 1, session_id=ENGINE_SESSION)
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1, output={"result": "ok"}), step=1)
    _one_step_run(store)
    action = one_step_next(store, 1)  # (as next_action would never reach it: asked first)
    assert action.kind == "stop" and action.said.endswith("STEP_AWAITING_APPROVAL."), \
        action.said


@pytest.mark.parametrize(("owner", "engine_words"), [(f"{ENGINE_SESSION}-x", True),
                                                     ("maker-run-0123", True),
                                                     (SESSION, False)])
def test_an_approved_deviation_of_the_engines_step_launches_nothing(
        project: Path, owner: str, engine_words: bool) -> None:
    """A person's typed approval of a revised step when no run is live: a step maker's
    engine ran goes on in the engine, never in an executor subagent."""
    store = _plan(project)
    start_step(store, 1, session_id=owner)
    record_orient(store, 1, "major", "the API moved to v2", "Call v2 instead.")
    told = person_decides(store, 1, True, "user (/maker:approve)")
    assert told is not None
    assert ("maker's engine goes on with it" in told) is engine_words, told
    assert ("launch the maker:step-executor" in told) is not engine_words, told
