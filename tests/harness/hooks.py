"""The hook events as Claude Code sends them (the fields ``tests/e2e/
test_claude_code_facts.py`` pins), fired in-process
through the shared entry (``run_hook``): a Stop, a subagent's SubagentStop, an agent's
PreToolUse, and a step executor's return."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook

EXECUTOR = "maker:step-executor"


def stop_input(cwd: Path, **extra: Any) -> dict[str, Any]:
    data = {"session_id": "sess-1", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "All done."}
    data.update(extra)
    return data


def subagent_input(cwd: Path, agent: str, message: str, **extra: Any) -> dict[str, Any]:
    """A SubagentStop input of a new subagent (the client's ids are unique; maker gates
    one subagent's deliverable once): pass ``agent_id`` for the same subagent again."""
    data = stop_input(cwd, hook_event_name="SubagentStop", agent_id=uuid.uuid4().hex[:17],
                      agent_type=agent, agent_transcript_path=str(cwd / "agent.jsonl"),
                      last_assistant_message=message)
    data.update(extra)
    return data


def tool_input(project: Path, tool: str, agent: str = EXECUTOR, **tool_in: Any) -> dict[str, Any]:
    return {"session_id": "sess-1", "cwd": str(project), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_in, "tool_use_id": "t1",
            "agent_id": "a1", "agent_type": agent}


def fire(event: str, data: dict[str, Any] | str) -> dict[str, Any] | None:
    """The hook's JSON answer to ``data`` (or raw stdin text), None when it says nothing."""
    raw = data if isinstance(data, str) else json.dumps(data)
    out = run_hook(event, HANDLERS[event], stdin=raw)
    return json.loads(out) if out else None


def executor_returns(project: Path, text: str, agent_id: str | None = None) -> Any:
    """A step executor's SubagentStop, as the client fires it."""
    data = subagent_input(project, EXECUTOR, text)
    if agent_id:
        data["agent_id"] = agent_id
    return fire("subagent-stop", data)
