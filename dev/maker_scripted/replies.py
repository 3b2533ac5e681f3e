"""Canned model turns, and how they go over the wire.

A :class:`Reply` is one assistant message: a few content blocks (text and tool
calls). It renders itself either as the JSON body of a non-streaming Messages API
response or as the server-sent events of a streaming one, in the order the
Claude Code client expects::

    message_start
    content_block_start / content_block_delta* / content_block_stop   (per block)
    message_delta   (stop_reason: "tool_use" if any block is a tool call, else "end_turn")
    message_stop

:class:`ApiError` is a reply that fails on purpose (an HTTP error status with an
Anthropic-style error body), for scripts that test how a caller copes.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ApiError", "Reply", "TextBlock", "ToolUseBlock", "new_message_id", "new_tool_id"]

JSON = dict[str, Any]

# Long strings are sent in a few deltas, as a real stream would, so a client that
# mishandles reassembly fails here rather than in production.
_CHUNK = 400


def new_tool_id() -> str:
    """A fresh ``toolu_…`` id in the shape the real API uses."""
    return "toolu_" + secrets.token_hex(12)


def new_message_id() -> str:
    """A fresh ``msg_…`` id in the shape the real API uses."""
    return "msg_" + secrets.token_hex(12)


@dataclass(frozen=True)
class TextBlock:
    """A text content block."""

    text: str

    def to_json(self) -> JSON:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUseBlock:
    """A ``tool_use`` content block: the model calls ``name`` with ``input``."""

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=new_tool_id)

    def to_json(self) -> JSON:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """One scripted assistant message.

    Build it with :meth:`text`, :meth:`tool` or :meth:`of`. ``stop_reason`` is
    derived from the blocks unless given.
    """

    blocks: tuple[Block, ...]
    stop_reason: str | None = None

    @classmethod
    def text(cls, text: str) -> Reply:
        """A plain text answer that ends the turn."""
        return cls((TextBlock(text),))

    @classmethod
    def tool(
        cls, name: str, input: Mapping[str, Any], *, text: str | None = None,
        id: str | None = None,
    ) -> Reply:
        """A call of tool ``name`` with ``input``, optionally preceded by ``text``."""
        call = ToolUseBlock(name, input) if id is None else ToolUseBlock(name, input, id)
        return cls(((TextBlock(text),) if text else ()) + (call,))

    @classmethod
    def of(cls, *blocks: Block | str) -> Reply:
        """A reply of several blocks; a ``str`` stands for a :class:`TextBlock`."""
        return cls(tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks))

    @property
    def final_stop_reason(self) -> str:
        """``stop_reason`` as sent: ``tool_use`` when the reply calls a tool."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]

    @property
    def text_content(self) -> str:
        """The reply's text blocks, joined."""
        return "\n".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def to_message(self, model: str, input_tokens: int = 1) -> JSON:
        """The whole message, as a non-streaming response body."""
        return {
            **_message_head(model),
            "content": [b.to_json() for b in self.blocks],
            "stop_reason": self.final_stop_reason,
            "usage": _usage(input_tokens, self._output_tokens()),
        }

    def sse_events(self, model: str, input_tokens: int = 1, *,
                   safeguards: bool = False) -> Iterator[tuple[str, JSON]]:
        """The message as a sequence of ``(event name, data)`` server-sent events.

        ``safeguards``: the request asked auto mode's server-side check of its tool
        calls (a top-level ``safeguards`` field): ``message_delta`` carries a verdict
        for each tool call, ``not_flagged`` (docs/testing.md). Without
        one the client shows a Yes/No dialog for every checked call."""
        yield "message_start", {
            "type": "message_start",
            "message": {**_message_head(model), "content": [],
                        "stop_reason": None, "usage": _usage(input_tokens, 1)},
        }
        for index, block in enumerate(self.blocks):
            if isinstance(block, TextBlock):
                start: JSON = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.text)]
            else:
                start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                raw = json.dumps(dict(block.input))
                deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(raw)]
            yield "content_block_start", {
                "type": "content_block_start", "index": index, "content_block": start,
            }
            for delta in deltas:
                yield "content_block_delta", {
                    "type": "content_block_delta", "index": index, "delta": delta,
                }
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        end: JSON = {"stop_reason": self.final_stop_reason, "stop_sequence": None}
        if safeguards:
            end["safeguard_results"] = [{
                "type": "dangerous_tool_use",
                "status": {"type": "available", "tool_uses": {
                    call.id: {"type": "evaluated", "outcome": "not_flagged"}
                    for call in self.tool_calls}}}]
        yield "message_delta", {
            "type": "message_delta", "delta": end,
            "usage": {"output_tokens": self._output_tokens()},
        }
        yield "message_stop", {"type": "message_stop"}

    def _output_tokens(self) -> int:
        size = sum(len(b.text) if isinstance(b, TextBlock) else len(json.dumps(dict(b.input)))
                   for b in self.blocks)
        return max(1, size // 4)


@dataclass(frozen=True)
class ApiError:
    """A reply that fails: HTTP ``status`` with an Anthropic error body.

    e.g. ``ApiError(529, "overloaded_error", "Overloaded")``. The CLI under test
    should run with ``CLAUDE_CODE_MAX_RETRIES=0`` so it does not retry.
    """

    status: int = 500
    type: str = "api_error"
    message: str = "scripted failure"

    def to_json(self) -> JSON:
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


def _message_head(model: str) -> JSON:
    return {
        "id": new_message_id(), "type": "message", "role": "assistant", "model": model,
        "stop_sequence": None,
    }


def _usage(input_tokens: int, output_tokens: int) -> JSON:
    return {
        "input_tokens": input_tokens, "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
    }


def _chunks(text: str) -> list[str]:
    if not text:
        return [""]
    return [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)]
