"""What the tests ask of a scripted run that the demos never do: the requests of one
agent, the side requests, the tool calls and the hooks a `claude -p` run went through.
(``maker_scripted`` keeps only what ``maker demo`` needs.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maker_scripted import FakeMessagesAPI, RecordedRequest
from maker_scripted.claude_cli import ClaudeRun

__all__ = ["RecordingAPI", "ToolUse", "hook_events", "tool_uses"]


class RecordingAPI(FakeMessagesAPI):
    """The scripted Messages API, with the tests' queries of what it received."""

    def requests_for(self, agent: str) -> list[RecordedRequest]:
        """The Messages requests of ``agent`` (side requests excluded), in order."""
        return [r for r in self.requests
                if r.agent == agent and r.outcome in ("scripted", "default", "error")]

    @property
    def side_requests_seen(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.outcome == "side"]


@dataclass(frozen=True)
class ToolUse:
    """One tool call in a run's stream."""

    name: str
    input: dict[str, Any]
    id: str
    parent_tool_use_id: str | None


def tool_uses(run: ClaudeRun) -> list[ToolUse]:
    """Every tool call in the stream's assistant messages, subagents' included."""
    return [
        ToolUse(str(block.get("name")), dict(block.get("input") or {}),
                str(block.get("id")), message.get("parent_tool_use_id"))
        for message in run.messages if message.get("type") == "assistant"
        for block in message.get("message", {}).get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]


def hook_events(run: ClaudeRun) -> list[dict[str, Any]]:
    """The hooks that ran, as ``hook_response`` messages (``hook_event``, ``exit_code``,
    ``stdout``, ``outcome``…). Complete only when the run used
    ``--include-hook-events`` (the default of ``run_claude``); without it the CLI
    reports ``SessionStart`` hooks alone."""
    return run.system_messages("hook_response")


def launched(out: dict[str, Any] | None) -> dict[str, Any] | None:
    """None for an executor's launch maker allows with its step's brief in the prompt
    (the PreToolUse hook on the Agent call); else the hook's output, as it is."""
    spec = (out or {}).get("hookSpecificOutput") or {}
    prompt = str((spec.get("updatedInput") or {}).get("prompt") or "")
    if spec.get("permissionDecision") == "allow" and '<maker-brief step="' in prompt \
            and prompt.rstrip().endswith("</maker-brief>"):
        return None
    return out


def handed_back(out: dict[str, Any] | None) -> str | None:
    """The message a gated SubagentHandback is delivered with instead (maker's line
    naming the stored deliverable), or None when the hook did not rewrite it."""
    spec = (out or {}).get("hookSpecificOutput") or {}
    if "permissionDecision" in spec:  # (a decision: not a rewrite)
        return None
    message = (spec.get("updatedInput") or {}).get("message")
    return message if isinstance(message, str) else None
