"""The retry bounds, pinned by their numbers: the Stop hook reminds the main agent
``STOP_REMINDERS`` (3) times, then fails the step; a step executor's refused handoff is
retried twice, then the step fails. Other tests count with the bound's constant and pass
whatever its value; these name the number, so changing it (or moving the rule) fails
here first.

Driven through ``scripts/hook``, as Claude Code runs it, so that only what the client
sees counts: a block, no decision, the step's status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import linear
from maker.executor.rules.step_rules import STOP_REMINDERS
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

HOOK = Path(__file__).resolve().parents[2] / "scripts" / "hook"


def fire(event: str, data: dict[str, Any], cwd: Path) -> dict[str, Any] | None:
    """The hook's answer to one event, as the client reads it (None: no output)."""
    env = dict(os.environ, MAKER_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=str(cwd))
    done = subprocess.run([str(HOOK), event], input=json.dumps(data), text=True, cwd=cwd,
                          env=env, capture_output=True, timeout=60, check=True)
    return json.loads(done.stdout) if done.stdout.strip() else None


def stop(cwd: Path, *, continued: bool) -> dict[str, Any]:
    """A Stop input of the session that started the step; ``continued``: the client
    continued the turn because a Stop hook blocked the last stop."""
    return {"session_id": "sess-1", "transcript_path": str(cwd / "t.jsonl"),
            "cwd": str(cwd), "permission_mode": "default", "hook_event_name": "Stop",
            "stop_hook_active": continued, "last_assistant_message": "All done."}


def executor_return(cwd: Path, agent_id: str) -> dict[str, Any]:
    """The step executor's SubagentStop with an answer that holds no handoff."""
    return dict(stop(cwd, continued=False), hook_event_name="SubagentStop",
                agent_id=agent_id, agent_type="maker:step-executor",
                agent_transcript_path=str(cwd / "agent.jsonl"),
                last_assistant_message="I finished the step, everything works.")


@pytest.fixture()
def running(plugin_project: Path) -> PlanStore:
    """Step 1 of a three-step plan in progress, started by session sess-1."""
    store = linear(plugin_project, 3)
    start_step(store, 1, session_id="sess-1")
    return store


def status(store: PlanStore) -> str:
    return PlanStore(store.root).load().get(1).status


def test_the_bound_is_three_reminders() -> None:
    assert STOP_REMINDERS == 3


def test_the_stop_hook_reminds_stop_reminders_times_then_fails_the_step(
        plugin_project: Path, running: PlanStore) -> None:
    reminders = []
    for _ in range(STOP_REMINDERS + 2):  # each stop in a turn of its own
        out = fire("stop", stop(plugin_project, continued=False), plugin_project)
        assert out is not None and out["decision"] == "block"
        if status(running) != "in-progress":
            break
        reminders.append(out["reason"])
    assert len(reminders) == STOP_REMINDERS
    assert reminders[-1].endswith(f"(Reminder {STOP_REMINDERS} of {STOP_REMINDERS}.)")
    # The next stop: the step is failed, and one last block tells the model so.
    assert "failed" in out["reason"].lower()
    assert status(running) == "failed"
    assert fire("stop", stop(plugin_project, continued=False), plugin_project) is None


def test_stops_the_client_continues_are_blocked_stop_reminders_times_in_all(
        plugin_project: Path, running: PlanStore) -> None:
    """In one chain of blocks (the client continues after each), the ``STOP_REMINDERS``-th
    is the last: the reminders but one, then the verdict."""
    decisions = []
    for n in range(STOP_REMINDERS + 2):
        out = fire("stop", stop(plugin_project, continued=n > 0), plugin_project)
        decisions.append(out and out.get("decision"))
        if out is None:
            break
    assert decisions == ["block"] * STOP_REMINDERS + [None]
    assert status(running) == "failed"


def test_a_refused_handoff_is_retried_twice_then_the_step_fails(
        plugin_project: Path, running: PlanStore) -> None:
    agent = uuid.uuid4().hex[:17]
    for attempt in (1, 2):
        out = fire("subagent-stop", executor_return(plugin_project, agent), plugin_project)
        assert out is not None and out["decision"] == "block", attempt
        assert status(running) == "in-progress", attempt
    out = fire("subagent-stop", executor_return(plugin_project, agent), plugin_project)
    assert out is not None and "decision" not in out
    assert status(running) == "failed"
