"""The hooks as an interactive session fires them (docs/internals.md, "How it works";
the real client: ``tests/e2e/test_interactive.py``): in-process, with the session's ids
and the cwd filled in; a step
executor launched, launched in the background, running, notified; the main agent's Stop."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.queries import launched
from harness.step_plans import linear
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore

EXECUTOR = "maker:step-executor"
PLANNER = "maker:planner"


def fire(event: str, **data: Any) -> dict[str, Any] | None:
    """The hook's JSON answer to ``event`` with ``data`` (session sess-1, prompt p1, the
    cwd), None when it says nothing."""
    data = {"session_id": "sess-1", "cwd": os.getcwd(), "hook_event_name": event,
            "prompt_id": "p1", **data}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else None


def said(out: dict[str, Any] | None) -> str:
    """What the hook told the agent: its context or its permission decision's reason."""
    assert out is not None
    return str(out["hookSpecificOutput"].get("additionalContext")
               or out["hookSpecificOutput"].get("permissionDecisionReason"))


def decision(out: dict[str, Any] | None) -> str | None:
    return None if out is None else out.get("hookSpecificOutput", {}).get(
        "permissionDecision")


def launch(tool_use_id: str = "t1", prompt_id: str = "p1") -> dict[str, Any] | None:
    return launched(fire("agent-launch", tool_name="Agent", tool_use_id=tool_use_id,
                         prompt_id=prompt_id, tool_input={"subagent_type": EXECUTOR,
                                                          "prompt": "Execute maker step 1."}))


def async_launched(agent_id: str, tool_use_id: str = "t1",
                   agent: str = EXECUTOR) -> dict[str, Any] | None:
    """PostToolUse on an Agent call the client runs in the background (at launch)."""
    return fire("agent-return", tool_name="Agent", tool_use_id=tool_use_id,
                tool_input={"subagent_type": agent, "prompt": "Execute maker step 1."},
                tool_response={"isAsync": True, "status": "async_launched",
                               "agentId": agent_id, "outputFile": "/tmp/x.output"})


def running(agent_id: str, agent: str = EXECUTOR) -> list[dict[str, Any]]:
    return [{"id": agent_id, "type": "subagent", "status": "running",
             "description": "Execute maker step 1", "agent_type": agent}]


def stop(prompt_id: str = "p1", tasks: list[dict[str, Any]] | None = None,
         active: bool = False) -> dict[str, Any] | None:
    return fire("stop", prompt_id=prompt_id, stop_hook_active=active,
                background_tasks=tasks if tasks is not None else [])


def notification(agent_id: str, result: str, status: str = "completed") -> str:
    return (f"<task-notification>\n<task-id>{agent_id}</task-id>\n<tool-use-id>toolu_1"
            f"</tool-use-id>\n<output-file>/tmp/x.output</output-file>\n<status>{status}"
            f"</status>\n<summary>Agent \"Execute maker step 1\" finished</summary>\n"
            f"<note>the same task-id may notify more than once.</note>\n<result>{result}"
            f"</result>\n</task-notification>")


def started(project: Path) -> PlanStore:
    """A three-step chain with step 1 in progress (sess-1), past orient."""
    store = linear(project, 3)
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")  # (past orient: its executor may edit)
    return store
