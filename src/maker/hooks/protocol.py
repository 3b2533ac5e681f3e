"""The Claude Code hook protocol: JSON in on stdin, JSON out on stdout, exit 0.

Only this package knows the protocol; the core it calls knows nothing about hooks.
Whatever goes wrong in here (malformed input, a bug, a broken plan file) becomes a
short visible ``systemMessage`` and never a block: a hook must not wedge the client.
"""

from __future__ import annotations

import json
from collections.abc import Callable

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HookInput", "allow", "allow_tool", "block", "context", "deny_tool", "message",
           "run_hook"]

if TYPE_CHECKING:
    from typing import TypeAlias

    Output: TypeAlias = dict[str, Any] | None
else:
    Output = dict | None  # the same, at run time


class HookInput:
    """The fields maker reads from a hook's stdin (``tests/e2e/test_claude_code_facts.py``
    pins what the client sends).

    A plain class, not a dataclass: ``dataclasses`` (and the ``inspect`` it imports)
    would be most of what the Stop hook imports."""

    __slots__ = ("event", "raw")

    def __init__(self, event: str, raw: dict[str, Any] | None = None) -> None:
        self.event = event
        self.raw: dict[str, Any] = {} if raw is None else raw

    def __repr__(self) -> str:
        return f"HookInput(event={self.event!r}, raw={self.raw!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookInput) and (self.event, self.raw) == (other.event,
                                                                           other.raw)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def text(self, key: str) -> str:
        value = self.raw.get(key)
        return value if isinstance(value, str) else ""

    @property
    def cwd(self) -> str:
        return self.text("cwd")

    @property
    def session_id(self) -> str:
        return self.text("session_id")

    @property
    def agent_type(self) -> str:
        return self.text("agent_type")

    @property
    def agent_id(self) -> str:
        return self.text("agent_id")

    @property
    def stop_hook_active(self) -> bool:
        return self.raw.get("stop_hook_active") is True


def allow() -> Output:
    return None


def block(reason: str) -> Output:
    return {"decision": "block", "reason": reason}


def message(text: str) -> Output:
    return {"systemMessage": text}


def context(event: str, text: str) -> Output:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def allow_tool(reason: str, updated_input: dict[str, Any] | None = None) -> Output:
    """Allow a tool call without the client's permission prompt (PreToolUse), with its
    input replaced by ``updated_input`` if given."""
    decided: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                               "permissionDecisionReason": reason}
    if updated_input is not None:
        decided["updatedInput"] = updated_input
    return {"hookSpecificOutput": decided}


def rewrite_tool(updated_input: dict[str, Any]) -> Output:
    """The call run with ``updated_input``, still asked and reviewed as the person's
    permission mode says (no decision: the client checks the updated input against its
    rules, and auto mode reviews it)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "updatedInput": updated_input}}


def deny_tool(reason: str) -> Output:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def end_agent(reason: str) -> Output:
    """The call refused and the (sub)agent that made it ended at once: its turn stops
    here and it is never asked again (``continue: false``; the client then hands back
    what the agent said so far)."""
    return {"continue": False, "stopReason": reason, **(deny_tool(reason) or {})}


def run_hook(event: str, handler: Callable[[HookInput], Output], stdin: str | None = None,
             on_input: Callable[[HookInput], None] | None = None) -> str:
    """Run one handler over the raw stdin text; return what to print (maybe empty).
    ``on_input`` sees the parsed input before the handler does (the watchdog's)."""
    if stdin is None:
        from maker.core.bounded import HOOK_INPUT_LIMIT, read_stdin, size_text
        from maker.errors import InputError

        try:
            raw_text = read_stdin(HOOK_INPUT_LIMIT).decode("utf-8", "replace")
        except InputError:
            return _dump(message(f"maker: ignored a {event} hook input over "
                                 f"{size_text(HOOK_INPUT_LIMIT)} (more than Claude Code "
                                 "sends); nothing was checked."))
    else:
        raw_text = stdin
    if not raw_text.strip():
        return _dump(message(f"maker: ignored an empty {event} hook input."))
    try:
        data = json.loads(raw_text)
    except json.JSONDecodeError as exc:
        return _dump(message(f"maker: ignored a malformed {event} hook input ({exc.msg})."))
    except (ValueError, RecursionError):  # a number of thousands of digits; deep nesting
        return _dump(message(f"maker: ignored a {event} hook input that holds a number too "
                             "long or a structure too deep to read."))
    if not isinstance(data, dict) or not isinstance(data.get("hook_event_name"), str):
        return _dump(message(f"maker: ignored a {event} hook input that is not a JSON object "
                             "with a hook_event_name."))
    hook_input = HookInput(event, data)
    if on_input is not None:
        on_input(hook_input)
    try:
        return _dump(handler(hook_input))
    except Exception as exc:  # a hook fails open, visibly
        from maker.errors import MakerError

        name = type(exc).__name__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        what = {"pre-tool-use": "this tool call", "user-prompt-submit": "this prompt",
                "session-start": "this session", "agent-launch": "this subagent launch",
                "agent-return": "this subagent's result", "post-tool-use": "this answer",
                "stretch-wake": "its wait for the engine",
                "agent-bound": "its wait on a subagent's time bound",
                "subagent-start": "this subagent's start"}.get(event, "this stop")
        if isinstance(exc, MakerError):  # a known condition: its message names the fix
            return _dump(message(f"maker: {str(exc).strip()[:2000]}\n(The {event} hook let "
                                 f"{what} through.)"))
        return _dump(message(f"maker: the {event} hook hit an error and let {what} "
                             f"through ({name}: {first[:300]}). Run `maker status` to see "
                             "the plan's state."))


def _dump(out: Output) -> str:
    return json.dumps(out, ensure_ascii=False) if out else ""
