"""What the fake API received: one :class:`RecordedRequest` per HTTP request.

The helpers read a Messages API request body the way a test asks about it: the
system prompt as one string, the tools offered, the text of the last user turn,
the tool results the client sent back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from maker_scripted.replies import ApiError, Reply

__all__ = ["Outcome", "RecordedRequest", "ToolResult", "content_text"]

Outcome = Literal["scripted", "side", "default", "error", "other"]
"""How a request was answered.

``scripted``: by the next item of its agent's queue. ``side``: a request the
client makes on its own (title, summary, quota probe), answered without touching
the script. ``default``: its agent's queue was empty, so the default text was
sent. ``error``: a scripted callable raised; the client got HTTP 500. ``other``:
not a Messages call (count_tokens, probes).
"""


@dataclass(frozen=True)
class ToolResult:
    """A ``tool_result`` block the client sent back to the model."""

    tool_use_id: str
    text: str
    is_error: bool


@dataclass
class RecordedRequest:
    """One request the fake API received, and how it answered."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    agent: str | None = None
    outcome: Outcome = "other"
    reply: Reply | ApiError | None = None
    side_kind: str | None = None
    error: BaseException | None = field(default=None, repr=False)

    @property
    def is_messages_call(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0] == "/v1/messages"

    @property
    def model(self) -> str:
        return str(self._body_dict().get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self._body_dict().get("messages", [])
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    @property
    def system_text(self) -> str:
        """The system prompt, its blocks joined by newlines."""
        return content_text(self._body_dict().get("system", ""))

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered to the model in this request."""
        tools = self._body_dict().get("tools", [])
        return [str(t.get("name")) for t in tools if isinstance(t, dict)]

    @property
    def last_user_text(self) -> str:
        """All text of the last ``user`` message, tool results included."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return content_text(message.get("content", ""))
        return ""

    @property
    def latest_text(self) -> str:
        """Everything the client added after the model's last turn, of any role.

        Besides the last user message this holds the ``system``-role messages
        Claude Code appends, such as "Stop hook blocking error from command: …".
        """
        tail: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                break
            tail.append(content_text(message.get("content", "")))
        return "\n".join(reversed(tail))

    @property
    def tool_results(self) -> list[ToolResult]:
        """The ``tool_result`` blocks of the last ``user`` message."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _tool_results(message.get("content", ""))
        return []

    @property
    def all_tool_results(self) -> list[ToolResult]:
        """Every ``tool_result`` block in the conversation so far."""
        return [r for m in self.messages if m.get("role") == "user"
                for r in _tool_results(m.get("content", ""))]

    @property
    def all_text(self) -> str:
        """Everything the model can read in this request: system and every message."""
        parts = [self.system_text]
        parts += [content_text(m.get("content", "")) for m in self.messages]
        return "\n".join(parts)

    def _body_dict(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}


def content_text(content: Any) -> str:
    """The readable text of a message ``content`` (a string or a list of blocks).

    Text blocks give their text, ``tool_result`` blocks their content's text,
    ``tool_use`` blocks their input as JSON. Blocks are joined by newlines.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_result":
            parts.append(content_text(block.get("content", "")))
        elif kind == "tool_use":
            parts.append(json.dumps(block.get("input", {})))
    return "\n".join(parts)




def _tool_results(content: Any) -> list[ToolResult]:
    if not isinstance(content, list):
        return []
    return [
        ToolResult(
            tool_use_id=str(b.get("tool_use_id", "")),
            text=content_text(b.get("content", "")),
            is_error=bool(b.get("is_error", False)),
        )
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
