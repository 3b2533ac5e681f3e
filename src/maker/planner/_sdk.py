"""Read one claude-agent-sdk answer, and translate the SDK's failures into maker's errors.

The answer is the last TextBlock of the final top-level AssistantMessage (seed 001's
extraction rule); cost, duration, tokens and the session come from the ResultMessage.
Every failure of the SDK (the CLI missing, crashing, printing what the SDK cannot
read, ending with an error result) becomes an :class:`~maker.errors.AgentSDKError`
whose message says what to do; nothing else is caught, so a bug stays a bug.

The SDK is imported lazily: maker works without it until a headless call is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Any

from maker.errors import AgentSDKError, BudgetExceededError, ClaudeNotFoundError

__all__ = ["SdkAnswer", "read_answer", "translate_error"]

_INSTALL = "pip install claude-agent-sdk (or: pip install 'maker[sdk]')"
_STATUS_FIX = {
    401: "the API refused the key: set ANTHROPIC_API_KEY (or log in with `claude`)",
    403: "the API refused the key: check its permissions (or log in with `claude`)",
    429: "the API is rate-limiting: wait, then run again",
    529: "the API is overloaded: wait, then run again",
}
_SUBTYPE_FIX = {
    "error_max_turns": "the call ran out of turns: raise max_turns, or make the task smaller",
    "error_during_execution": "the CLI failed while running: see its error above, then run "
                              "again",
}


@dataclass(frozen=True)
class SdkAnswer:
    """One SDK call: the final text and what it cost (for the ledger)."""

    text: str
    cost_usd: float = 0.0
    duration_ms: int = 0
    tokens: int = 0
    session_id: str | None = None
    error: str | None = None


async def read_answer(messages: AsyncIterable[Any], *, agent: str) -> SdkAnswer:
    """Consume an SDK message stream and return its answer.

    Raises AgentSDKError (BudgetExceededError, ClaudeNotFoundError) when the stream
    ends with an error result or the SDK fails; the error carries the cost so far.
    """
    from claude_agent_sdk import AssistantMessage, ClaudeSDKError, ResultMessage, TextBlock

    final: Any = None
    result: Any = None
    try:
        async for message in messages:
            if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                final = message
            elif isinstance(message, ResultMessage):
                result = message
    except ClaudeSDKError as exc:
        raise translate_error(exc, agent=agent, result=result) from exc
    if result is not None and result.is_error:
        raise _result_error(result, agent)
    texts = [b.text for b in (final.content if final is not None else [])
             if isinstance(b, TextBlock)]
    return SdkAnswer(text=texts[-1] if texts else "", **_spent(result))


def translate_error(exc: BaseException, *, agent: str, result: Any = None) -> AgentSDKError:
    """The maker error for a claude-agent-sdk exception (``result``: the last
    ResultMessage seen, if any, for the cost so far)."""
    from claude_agent_sdk import (
        CLIConnectionError,
        CLIJSONDecodeError,
        CLINotFoundError,
        ProcessError,
        ResultError,
    )
    from claude_agent_sdk._errors import MessageParseError  # not exported by the package

    if isinstance(exc, ResultError):
        return _result_error(exc.data, agent)
    spent = _spent(result)
    spent.pop("tokens")
    if isinstance(exc, CLINotFoundError):
        return ClaudeNotFoundError(f"the Claude Code CLI was not found ({exc}): it comes "
                                   f"with claude-agent-sdk: {_INSTALL}", agent=agent, **spent)
    if isinstance(exc, CLIConnectionError):
        return AgentSDKError(f"could not talk to the Claude Code CLI ({exc}): check that it "
                             "starts (`claude --version`), then run again", agent=agent,
                             **spent)
    if isinstance(exc, ProcessError):
        stderr = (exc.stderr or "").strip()[-500:]
        return AgentSDKError(f"the Claude Code CLI exited with code {exc.exit_code}"
                             + (f": {stderr}" if stderr else "")
                             + "; check its login and network, then run again",
                             agent=agent, **spent)
    if isinstance(exc, (CLIJSONDecodeError, MessageParseError)):
        return AgentSDKError(f"the Claude Code CLI printed output the SDK cannot read "
                             f"({exc}): the CLI and claude-agent-sdk versions likely "
                             f"disagree: pip install -U claude-agent-sdk", agent=agent,
                             **spent)
    return AgentSDKError(f"claude-agent-sdk failed: {exc}", agent=agent, **spent)


def _result_error(result: Any, agent: str) -> AgentSDKError:
    """The error for an error result: a ResultMessage, or a ResultError's raw ``data``."""
    spent = _spent(result)
    spent.pop("tokens")
    subtype = _get(result, "subtype") or "error"
    errors = _get(result, "errors")
    detail = "; ".join(e for e in errors if isinstance(e, str)) if isinstance(errors, list) \
        else ""
    detail = (detail or str(_get(result, "result") or "")).strip()
    said = f" ({detail[:500]})" if detail else ""
    if subtype == "error_max_budget_usd":
        return BudgetExceededError(f"the call reached its budget (max_budget_usd){said}: "
                                   "raise the budget, or continue later", agent=agent, **spent)
    status = _get(result, "api_error_status")
    fix = _STATUS_FIX.get(status) if isinstance(status, int) else None
    fix = fix or _SUBTYPE_FIX.get(subtype, "see the error, then run again")
    where = f"HTTP {status}, " if isinstance(status, int) else ""
    return AgentSDKError(f"the call ended with an error result ({where}{subtype}){said}: {fix}",
                         agent=agent, **spent)


def _get(source: Any, key: str) -> Any:
    return source.get(key) if isinstance(source, dict) else getattr(source, key, None)


def _spent(result: Any) -> dict[str, Any]:
    """Cost, duration, tokens and session of a ResultMessage (or its raw data); zeros
    when there is none."""
    usage = _get(result, "usage") if result is not None else None
    usage = usage if isinstance(usage, dict) else {}
    tokens = sum(v for k, v in usage.items()
                 if k.endswith("tokens") and isinstance(v, int) and not isinstance(v, bool))
    cost = _get(result, "total_cost_usd") if result is not None else None
    duration = _get(result, "duration_ms") if result is not None else None
    session = _get(result, "session_id") if result is not None else None
    return {"cost_usd": float(cost) if isinstance(cost, (int, float)) else 0.0,
            "duration_ms": int(duration) if isinstance(duration, (int, float)) else 0,
            "tokens": tokens, "session_id": session if isinstance(session, str) else None}
