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
