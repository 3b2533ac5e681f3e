"""A plugin subagent's wall-clock bound (``subagent_timeout``): its next tool call past it
ends it (``continue: false``) and fails the step its run still holds; a subagent that
makes no call is woken on by the ``asyncRewake`` hook on its launch, which records the
same and tells the main agent to stop it. Within the bound, nothing changes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness.hooks import EXECUTOR, fire, tool_input
from harness.step_plans import linear
from maker.executor.state.lifecycle import reset_step, start_step
from maker.executor.verdicts.verdict import executor_verdict, reviewer_verdict
from maker.hooks import bound, records
from maker.hooks.protocol import HookInput
from maker.store.active import run_of
from maker.store.plan_store import PlanStore

REVIEWER = "maker:reviewer"
PAST = "ran past subagent_timeout (5 s, plans/settings.yaml) and was ended"


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    plans = linear(tmp_path / "project", 2)
    (plans.root / "settings.yaml").write_text("subagent_timeout: 5\n")
    start_step(plans, 1, session_id="sess-1")
    return plans


def executor_began(store: PlanStore, agent_id: str, ago: float) -> None:
    """An executor of the step in progress, first seen ``ago`` seconds back."""
    records.bind_run(agent_id, EXECUTOR, run_of(store.read_active() or {}))
    records.write(agent_id, {**records.read_record(agent_id), "began": time.time() - ago})


def call(store: PlanStore, agent_id: str = "a1", agent: str = EXECUTOR) -> dict[str, Any]:
    data = tool_input(store.project, "Read", agent, file_path=str(store.project / "x.txt"))
    return fire("pre-tool-use", {**data, "agent_id": agent_id}) or {}


def test_a_call_within_the_bound_is_checked_as_ever(store: PlanStore) -> None:
    executor_began(store, "a1", ago=1)
    said = call(store)
    assert "continue" not in said
    assert store.load_step(1).status == "in-progress"
    assert records.read_record("a1")["outcome"] == "running"


def test_a_call_past_the_bound_ends_the_executor_and_fails_its_step(store: PlanStore) -> None:
    executor_began(store, "a1", ago=6)
    said = call(store)
    assert said["continue"] is False
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert PAST in said["stopReason"]
    record = store.load_step(1)
    assert record.status == "failed" and record.meta["reasons"] == [f"its step executor {PAST}"]
    facts = records.read_record("a1")
    assert facts["outcome"] == "overran" and facts["final"] is True and facts["failed"]
    verdict = executor_verdict(store, facts)
    assert verdict.startswith("step 1 (Step number 1) FAILED: its step executor " + PAST)
    assert "`maker step reset 1`" in verdict and verdict.endswith("STEP_FAILED.")
    # Its later calls are ended too; the step stays as it was recorded.
    assert call(store)["continue"] is False
    assert store.load_step(1).status == "failed"


def test_the_first_call_starts_the_bound_when_no_launch_was_seen(store: PlanStore) -> None:
    before = time.time()
    call(store, "fresh")
    began = records.read_record("fresh")["began"]
    assert before <= began <= time.time()
    assert "continue" not in call(store, "fresh")  # (the second call reads the same start)
    assert records.read_record("fresh")["began"] == began


def test_an_executor_of_an_earlier_run_fails_nothing(store: PlanStore) -> None:
    executor_began(store, "old", ago=6)
    reset_step(store, 1)
    start_step(store, 1, session_id="sess-1")  # (a new run of the step)
    said = call(store, "old")
    assert said["continue"] is False
    assert store.load_step(1).status == "in-progress"
    facts = records.read_record("old")
    assert facts["outcome"] == "overran" and not facts["failed"]
    assert "nothing was recorded" in executor_verdict(store, facts)


def test_a_reviewer_past_the_bound_is_ended_and_nothing_of_the_step_moves(
        store: PlanStore) -> None:
    records.write("r1", {"agent_type": REVIEWER, "outcome": "running", "final": False,
                         "review_step": 1, "began": time.time() - 6})
    said = call(store, "r1", REVIEWER)
    assert said["continue"] is False and "its reviewer ran past subagent_timeout" in \
        said["stopReason"]
    assert store.load_step(1).status == "in-progress"
    facts = records.read_record("r1")
    assert facts["outcome"] == "overran" and facts["step"] == 1
    assert reviewer_verdict(store, facts).startswith(
        "the reviewer of step 1 was ended: its reviewer ran past subagent_timeout")


@pytest.mark.parametrize("setting", ["subagent_timeout: 0\n", ""])
def test_no_bound_or_the_default_one_lets_an_hours_old_executor_on(
        store: PlanStore, setting: str) -> None:
    (store.root / "settings.yaml").write_text(setting)
    executor_began(store, "a1", ago=600 if setting else 2999)
    assert "continue" not in call(store)
    assert store.load_step(1).status == "in-progress"


def test_a_broken_settings_file_keeps_the_default_bound(store: PlanStore) -> None:
    (store.root / "settings.yaml").write_text("subagent_timeout: soon\n")
    executor_began(store, "a1", ago=3001)
    assert call(store)["continue"] is False


# -- the wake on a background launch ----------------------------------------------------


def launch(store: PlanStore, agent_id: str, agent: str = EXECUTOR,
           status: str = "async_launched") -> HookInput:
    return HookInput("agent-bound", {
        "hook_event_name": "PostToolUse", "session_id": "sess-1", "tool_name": "Agent",
        "tool_use_id": "toolu_1", "cwd": str(store.project),
        "tool_input": {"subagent_type": agent, "prompt": "Execute maker step 1."},
        "tool_response": {"status": status, "agentId": agent_id}})


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch, store: PlanStore) -> PlanStore:
    monkeypatch.setattr(bound, "_POLL_S", 0.02)
    monkeypatch.setattr(bound, "_LAUNCH_WAIT_S", 0.2)
    (store.root / "settings.yaml").write_text("subagent_timeout: 0.5\n")
    return store


def test_a_subagent_still_running_at_its_bound_wakes_the_main_agent_to_stop_it(
        quick: PlanStore) -> None:
    executor_began(quick, "a1", ago=0)
    began = time.monotonic()
    said = bound.on_agent_bound(launch(quick, "a1"))
    assert 0.4 <= time.monotonic() - began < 5
    wake = said["wake"]
    assert 'Stop it now: call TaskStop with task_id "a1"' in wake
    assert "step 1 (Step number 1) FAILED: its step executor ran past subagent_timeout " \
        "(0.5 s" in wake
    assert quick.load_step(1).status == "failed"
    assert records.read_record("a1")["told"] is True  # (its notification says no more)


def test_a_subagent_that_ended_in_time_wakes_nobody(quick: PlanStore) -> None:
    executor_began(quick, "a1", ago=0)
    records.write("a1", {**records.read_record("a1"), "final": True, "outcome": "accepted"})
    began = time.monotonic()
    assert not bound.on_agent_bound(launch(quick, "a1"))
    assert time.monotonic() - began < 0.3  # (it stops waiting once the subagent ended)
    assert quick.load_step(1).status == "in-progress"


@pytest.mark.parametrize("hook", [
    lambda s: launch(s, "a1", agent="general-purpose"),
    lambda s: launch(s, "a1", status="completed"),  # (the foreground: it returned already)
    lambda s: HookInput("agent-bound", {**launch(s, "a1").raw, "agent_type": EXECUTOR}),
])
def test_no_wait_for_what_is_not_a_maker_subagent_in_the_background(
        quick: PlanStore, hook: Any) -> None:
    began = time.monotonic()
    assert not bound.on_agent_bound(hook(quick))
    assert time.monotonic() - began < 0.3
    assert quick.load_step(1).status == "in-progress"


def test_a_bound_beyond_the_wakes_wait_is_left_to_the_next_call(
        quick: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    (quick.root / "settings.yaml").write_text("subagent_timeout: 5000\n")
    executor_began(quick, "a1", ago=0)
    assert not bound.on_agent_bound(launch(quick, "a1"))
    assert quick.load_step(1).status == "in-progress"


# -- what a hostile review found ---------------------------------------------------------


def notification(store: PlanStore, agent_id: str, status: str) -> dict[str, Any]:
    note = (f"<task-notification>\n<task-id>{agent_id}</task-id>\n<status>{status}</status>\n"
            "<summary>Agent stopped</summary>\n</task-notification>")
    return {"session_id": "sess-1", "cwd": str(store.project), "prompt": note,
            "hook_event_name": "UserPromptSubmit",
            "transcript_path": str(store.project / "t.jsonl")}


@pytest.mark.parametrize("status", ["killed", "failed"])
def test_an_executor_that_ended_early_never_fails_the_one_launched_after_it(
        quick: PlanStore, status: str) -> None:
    executor_began(quick, "A", ago=0)
    fire("user-prompt-submit", notification(quick, "A", status))  # (it ended: a crash, say)
    executor_began(quick, "B", ago=0)  # (launched again for the same run of the step)
    began = time.monotonic()
    assert not bound.on_agent_bound(launch(quick, "A"))
    assert time.monotonic() - began < 0.3
    assert quick.load_step(1).status == "in-progress"
    assert "continue" not in call(quick, "B")


def test_a_handoff_past_the_bound_is_not_recorded_and_the_step_fails(
        store: PlanStore) -> None:
    from harness.hooks import executor_returns
    from harness.step_plans import handoff

    executor_began(store, "late", ago=60)
    said = executor_returns(store.project, handoff(1), agent_id="late")
    assert "its answer came after that and was not recorded" in str(said)
    record = store.load_step(1)
    assert record.status == "failed" and store.read_handoff(1) is None
    assert records.read_record("late")["outcome"] == "overran"


def test_a_review_past_the_bound_records_nothing(store: PlanStore) -> None:
    from harness.hooks import subagent_input

    records.write("rev", {"agent_type": REVIEWER, "outcome": "running", "final": False,
                          "review_step": 1, "began": time.time() - 60})
    said = fire("subagent-stop", subagent_input(store.project, REVIEWER,
                                                "GREEN: ok\nVERDICT: approve", agent_id="rev"))
    assert "was not recorded" in str(said)
    assert not (store.state_dir / "reviews").exists() or \
        not any((store.state_dir / "reviews").iterdir())
    assert records.read_record("rev")["outcome"] == "overran"


def test_a_record_stays_readable_whatever_an_agent_wrote_into_it() -> None:
    records.write("big", {"agent_type": EXECUTOR, "began": time.time(),
                          "problems": ["x" * 100_000] * 500, "run": [1, "t", "s"]})
    data = records.read_record("big", strict=True)
    assert data["run"] == [1, "t", "s"] and isinstance(data["began"], float)
    assert len(data["problems"]) <= 60 and len(data["problems"][0]) < 5000


def test_a_record_that_cannot_be_read_refuses_the_agent_never_restarts_it(
        store: PlanStore) -> None:
    executor_began(store, "a1", ago=1)
    path = records._verdict_path("a1")
    path.write_text("{not json")
    said = call(store)
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "cannot be read" in said["hookSpecificOutput"]["permissionDecisionReason"]
    assert path.read_text() == "{not json"  # (never taken for a new agent's)


@pytest.mark.parametrize("began", [float("nan"), 1e300, -5.0, "soon", True])
def test_a_start_that_is_not_a_past_time_is_past_its_bound(store: PlanStore,
                                                          began: Any) -> None:
    executor_began(store, "a1", ago=0)
    records.write("a1", {**records.read_record("a1"), "began": began})
    assert call(store)["continue"] is False


def test_a_running_agents_record_outlives_a_day(store: PlanStore) -> None:
    import os

    executor_began(store, "old", ago=2 * 24 * 3600)
    path = records._verdict_path("old")
    two_days = time.time() - 2 * 24 * 3600
    os.utime(path, (two_days, two_days))
    records.write("other", {"agent_type": EXECUTOR})  # (a write prunes old records)
    assert path.exists()
    (store.root / "settings.yaml").write_text("subagent_timeout: 604800\n")
    assert "continue" not in call(store, "old")  # (its start kept: 2 days of 7)
    (store.root / "settings.yaml").write_text("subagent_timeout: 86400\n")
    assert call(store, "old")["continue"] is False


def test_the_wake_reads_the_bound_again_while_it_waits(quick: PlanStore) -> None:
    import threading

    executor_began(quick, "a1", ago=0)
    lifted = threading.Timer(0.1, lambda: (quick.root / "settings.yaml").write_text(
        "subagent_timeout: 0\n"))
    lifted.start()
    assert not bound.on_agent_bound(launch(quick, "a1"))
    assert quick.load_step(1).status == "in-progress"


def test_in_print_mode_the_wake_does_not_wait(quick: PlanStore,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # (claude -p: a waiting asyncRewake hook keeps the session from the notification's
    # turn; tests/e2e/test_plugin_verdict.py sees it with the real client)
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
    executor_began(quick, "a1", ago=0)
    began = time.monotonic()
    assert not bound.on_agent_bound(launch(quick, "a1"))
    assert time.monotonic() - began < 0.3
    assert quick.load_step(1).status == "in-progress"
