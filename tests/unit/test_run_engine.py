"""A ``/maker:run`` whose steps run in maker's engine: the one next action the main agent
gets at each point (start a stretch, wait for it, stop with why), and ``maker status
--watch`` following it. The whole flow, with the real client, is
``tests/e2e/test_interactive_run_engine.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import handoff, linear
from maker.cli import loop_cmd, status_cmd
from maker.cli.main import cli
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approve_step
from maker.executor.loop.next_action import next_action
from maker.executor.loop.report import report, run_lines
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.executor.state.run import (
    ENGINE,
    ask_stop,
    begin_run,
    end_run,
    live_run,
    note_step,
)
from maker.executor.state.stretch import (
    ENDED_UNSAID,
    STRETCH_COMMAND,
    began,
    ended,
    holding_stretch,
    stretch_runs,
)
from maker.store.plan_store import PlanStore
from maker.store.requests import save_request
from maker.store.run_file import read_run

SESSION, PROMPT = "session-1", "prompt-1"


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    plans = linear(tmp_path, 3)
    with plans.lock():
        begin_run(plans, SESSION, None, ENGINE)
    return plans


def test_a_run_in_the_engine_starts_a_stretch_and_starts_no_step_itself(
        store: PlanStore) -> None:
    action = next_action(store, SESSION, PROMPT, typed=True)
    assert action.kind == "stretch" and f"`{STRETCH_COMMAND}`" in action.said
    assert "run_in_background true" in action.said
    assert [r.status for r in store.load().steps] == ["pending"] * 3  # (the engine starts)


def test_while_a_stretch_runs_the_main_agent_waits_but_a_typed_run_starts_one_that_queues(
        store: PlanStore) -> None:
    with holding_stretch(store) as mine:
        assert mine and stretch_runs(store)
        assert next_action(store, SESSION, PROMPT).kind == "wait"
        assert next_action(store, SESSION, PROMPT, typed=True).kind == "stretch"
        with holding_stretch(store) as second:
            assert not second  # (one stretch at a time)
    assert not stretch_runs(store)


@pytest.mark.parametrize(("code", "why"), [
    (1, "an SDK call failed"),
    (3, "the run's budget is spent"),
    (5, "stopped as the user asked"),
    (ENDED_UNSAID, "maker's engine ended without saying how"),
])
def test_a_stretch_that_ended_on_what_no_question_settles_stops_the_run_once(
        store: PlanStore, code: int, why: str) -> None:
    began(store)
    ended(store, code, why)
    action = next_action(store, SESSION, PROMPT)
    assert action.kind == "stop" and why in action.said and "RUN_STOPPED" in action.said
    assert live_run(store) == {}  # (stopped: the next /maker:run resumes it)


def test_a_stretch_that_ended_for_a_question_or_the_end_does_not_stop_the_run(
        store: PlanStore) -> None:
    began(store)
    ended(store, 4, "step 1 awaits approval")
    assert next_action(store, SESSION, PROMPT).kind == "stretch"  # (nothing awaits here)
    assert live_run(store)["stretch"]["told"] is True


def test_a_graceful_stop_is_asked_of_a_live_run_and_cleared_by_the_next_typed_run(
        store: PlanStore) -> None:
    ask_stop(store)
    assert live_run(store)["stop_asked"]
    with store.lock():
        begin_run(store, SESSION, None, ENGINE)
    assert not live_run(store)["stop_asked"]


def test_status_watch_follows_the_run_until_it_ends(store: PlanStore,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    looks: list[float] = []

    def sleep(seconds: float) -> None:
        looks.append(seconds)
        if len(looks) == 2:
            end_run(store)

    monkeypatch.setattr(status_cmd.time, "sleep", sleep)
    result = CliRunner().invoke(cli, ["status", "--watch", "--every", "0.5",
                                      "--plans-dir", str(store.root)])
    assert result.exit_code == 0, result.output
    assert looks == [0.5, 0.5]
    assert result.output.count("0 of 3 steps complete; running.") == 2
    assert result.output.rstrip().endswith("no /maker:run goes on here; spent: nothing yet.")


@pytest.mark.parametrize(("sdk", "typed", "mode", "hint"), [
    (True, "", "engine", False),
    (True, "--subagents", "subagents", False),
    (False, "", "subagents", True),  # (no SDK beside maker: said, with the fix)
    (False, "--subagents", "subagents", False),
])
def test_the_typed_run_chooses_its_way_and_says_when_the_engine_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk: bool, typed: str, mode: str,
        hint: bool) -> None:
    plans = linear(tmp_path, 2)
    data = tmp_path / "data"
    save_request("sess-1", f"/maker:run {typed}".strip(), data, prompt_id="p-1")
    monkeypatch.setattr(loop_cmd, "_engine_here", lambda: sdk)
    started: list[str] = []
    monkeypatch.setattr(loop_cmd, "start_stretch",
                        lambda store, key: started.append(key) or 1.0)
    out = CliRunner().invoke(cli, ["loop", "begin", "--session", "sess-1", "--data-dir",
                                   str(data), "--plans-dir", str(plans.root)])
    assert out.exit_code == 0, out.output
    assert live_run(plans)["mode"] == mode
    assert ("pip install 'claude-agent-sdk>=" in out.output) is hint
    # in maker's engine the command started the first stretch itself, for this prompt's
    # wake; the main agent only ends its turn
    assert started == (["p-1"] if mode == "engine" else [])
    assert ("Next: end your turn in a sentence: maker's engine goes on in the background"
            in out.output) is (mode == "engine")


def test_a_stretch_that_cannot_start_is_the_main_agents_to_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = linear(tmp_path, 2)
    data = tmp_path / "data"
    save_request("sess-1", "/maker:run", data, prompt_id="p-1")
    monkeypatch.setattr(loop_cmd, "_engine_here", lambda: True)
    monkeypatch.setattr(loop_cmd, "start_stretch", lambda store, key: None)
    out = CliRunner().invoke(cli, ["loop", "begin", "--session", "sess-1", "--data-dir",
                                   str(data), "--plans-dir", str(plans.root)])
    assert "Next: run `maker loop stretch` (Bash, run_in_background true)" in out.output
    # and the wake on this prompt is told that nothing was started for it
    assert live_run(plans)["stretch"] == {"wake_for": "p-1", "wake_at": None}


def test_status_mid_run_shows_each_steps_status_as_the_plan_has_it_now(
        tmp_path: Path) -> None:
    """A step's entry in the run is written when its verdict comes; approved since, the
    plan says complete, and so does `maker status` (it said awaiting-approval)."""
    plans = linear(tmp_path, 3, policy="never")
    with plans.lock():
        begin_run(plans, SESSION, None, ENGINE)
    start_step(plans, 1, session_id=SESSION)
    record_orient(plans, 1, "none")
    accept_handoff(plans, handoff(1, summary="Did step 1."))
    note_step(plans, 1, status="awaiting-approval", duration_ms=4000, tokens=1200,
              cost_usd=0.05)
    approve_step(plans, 1, "user (AskUserQuestion)")
    lines = run_lines(plans, plans.load())
    assert "  step 1: complete (4 s, 1200 tokens, $0.0500)" in lines, lines
    assert not [line for line in lines if "awaiting-approval" in line]


def test_status_line_says_the_run_in_one_line_and_nothing_without_one(
        tmp_path: Path) -> None:
    """`maker status --line`, for a person's statusLine setting: where the run stands,
    beside their prompt, without a model turn."""
    plans = linear(tmp_path, 3, policy="never")

    def line() -> str:
        out = CliRunner().invoke(cli, ["status", "--line", "--plans-dir", str(plans.root)])
        assert out.exit_code == 0, out.output
        return out.output

    assert line() == ""  # (no run)
    with plans.lock():
        begin_run(plans, SESSION, None, ENGINE)
    start_step(plans, 1, session_id=SESSION)
    assert line().startswith("maker: 0/3 · step 1 runs · ")
    record_orient(plans, 1, "none")
    accept_handoff(plans, handoff(1, summary="Did step 1."))
    note_step(plans, 1, status="awaiting-approval", tokens=1200, cost_usd=0.05)
    said = line()
    assert said.startswith("maker: 0/3 · step 1 waits for you · ") and \
        said.endswith(" · 1,200 tokens, $0.05\n"), said
    end_run(plans)
    assert line() == ""
    plans.steps_dir.joinpath("01-step-number-1.md").write_text("not: [a plan")
    assert CliRunner().invoke(cli, ["status", "--line", "--plans-dir", str(plans.root)]
                              ).output == ""  # (quiet on a broken file: a status line)


def test_the_report_and_the_status_say_each_steps_cost_and_at_least_where_unknown(
        store: PlanStore) -> None:
    note_step(store, 0, status="complete", duration_ms=3000, tokens=900, cost_usd=0.04,
              unknown_costs=0)
    note_step(store, 1, status="complete", duration_ms=2000, tokens=800, cost_usd=0.03,
              unknown_costs=1)  # (a call the SDK did not report the cost of)
    said = report(store, store.load(), read_run(store))
    assert ", 900 tokens, $0.0400" in said and ", 800 tokens, at least $0.0300" in said
    assert "tokens (the SDK's results): 1700; cost: at least $0.0700." in said
    lines = run_lines(store, store.load())
    assert any(line.endswith("(2 s, 800 tokens, at least $0.0300)") for line in lines), lines
