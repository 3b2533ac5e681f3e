"""claude-agent-sdk at maker's edge: one answer read from a stream, and the SDK's
failures translated once into maker's error tree.

The answer is the last TextBlock of the final top-level AssistantMessage (the seeds'
extraction rule); cost, duration, tokens and the session come from the ResultMessage.
One reader (:class:`StreamReader`) reads every stream, the planner's, the reviewer's and
the step runner's, and knows a message by its class's name, as seed 000's mocks are
known (docs/architecture.md#the-seeds): a stream the step runner takes, the planner takes too.
Every failure of the SDK (the CLI missing, crashing, printing what the SDK cannot
read, ending with an error result) becomes an :class:`~maker.errors.AgentSDKError`
whose message says what to do; nothing else is caught, so a bug stays a bug. The
planner (``maker.planner.planner``) and the step runner
(``maker.executor.launch.agent_runner``) both go through here.

The SDK is imported lazily: maker works without it until a headless call is made.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import AsyncIterable, Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from maker.errors import (
    AgentProcessError,
    AgentSDKError,
    AgentStreamError,
    BudgetExceededError,
    ClaudeNotFoundError,
    SessionTimeoutError,
)

__all__ = ["SDK_REQUIREMENT", "SdkAnswer", "SessionTimedOut", "StreamReader", "bounded",
           "install_sdk", "is_error_result", "model_usage", "read_answer", "sdk_errors",
           "token_usage", "translate_error", "within"]

T = TypeVar("T")

SDK_REQUIREMENT = "claude-agent-sdk>=0.2.180"  # (pyproject.toml's `sdk` extra)


def install_sdk() -> str:
    """The one command that installs the SDK where it counts: beside the interpreter
    maker runs on (a plugin's own environment, a venv: not whichever `pip` is on PATH)."""
    return f"{shlex.quote(sys.executable)} -m pip install '{SDK_REQUIREMENT}'"
_STDERR_TAIL = 2000
_AUTH_HINTS = ("api key", "apikey", "authentication", "401", "unauthorized", "login",
               "credit balance")


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
    usage: dict[str, int] = field(default_factory=dict)  # (``token_usage``)
    cost_known: bool = True  # False: the SDK's result reported no cost


def token_usage(usage: Any) -> dict[str, int]:
    """The token counts a ResultMessage's ``usage`` reports (input, output, cache
    creation, cache read, and any other ``*_tokens``, by their API names); {} when it
    reports none."""
    if not isinstance(usage, dict):
        return {}
    return {k: v for k, v in usage.items()
            if k.endswith("tokens") and isinstance(v, int) and not isinstance(v, bool)
            and v >= 0}


_MODEL_USAGE = {"inputTokens": "input_tokens", "outputTokens": "output_tokens",
                "cacheReadInputTokens": "cache_read_input_tokens",
                "cacheCreationInputTokens": "cache_creation_input_tokens"}


def model_usage(per_model: Any) -> dict[str, int]:
    """The token counts a ResultMessage's ``model_usage`` reports (per model, camel-cased),
    summed under ``usage``'s names; {} when it reports none."""
    total: dict[str, int] = {}
    for counts in per_model.values() if isinstance(per_model, dict) else ():
        for key, name in _MODEL_USAGE.items():
            value = counts.get(key) if isinstance(counts, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                total[name] = total.get(name, 0) + value
    return total


class StreamReader:
    """Reads an SDK message stream: :attr:`answer`, the last TextBlock's text of the final
    top-level AssistantMessage (None when it has none), and :attr:`result`, the last
    ResultMessage. Both hold what was read so far when the stream fails mid-way (the
    cost of a failed call)."""

    def __init__(self) -> None:
        self.answer: str | None = None
        self.result: Any = None
        self._turns: dict[str, dict[str, int]] = {}  # message id -> its usage

    def usage(self) -> dict[str, int]:
        """The tokens the session's result reported; where it reported none (a session
        cut by its budget), what its messages reported, each model turn once."""
        reported = token_usage(getattr(self.result, "usage", None))
        if not any(reported.values()):  # (a session its budget cut says 0 there)
            reported = model_usage(getattr(self.result, "model_usage", None)) or reported
        if any(reported.values()) or not self._turns:
            return reported
        total: dict[str, int] = {}
        for turn in self._turns.values():
            for key, value in turn.items():
                total[key] = total.get(key, 0) + value
        return total

    async def read(self, messages: AsyncIterable[Any]) -> None:
        async for message in messages:
            kind = type(message).__name__
            if kind == "AssistantMessage":  # (one model turn may come as several messages)
                turn = token_usage(getattr(message, "usage", None))
                if turn:
                    key = getattr(message, "message_id", None)
                    self._turns[key if isinstance(key, str) else str(len(self._turns))] = turn
            if kind == "AssistantMessage" and not isinstance(
                    getattr(message, "parent_tool_use_id", None), str):  # not a subagent's
                texts = [b.text for b in getattr(message, "content", None) or []
                         if type(b).__name__ == "TextBlock"
                         and isinstance(getattr(b, "text", None), str)]
                self.answer = texts[-1] if texts else None
            elif kind == "ResultMessage":
                self.result = message


def is_error_result(result: Any) -> bool:
    """Whether a ResultMessage says the session failed."""
    return getattr(result, "subtype", None) != "success" or getattr(result, "is_error",
                                                                     None) is True


async def read_answer(messages: AsyncIterable[Any], *, agent: str) -> SdkAnswer:
    """Consume an SDK message stream and return its answer.

    Raises AgentSDKError (BudgetExceededError, ClaudeNotFoundError) when the stream
    ends with an error result or the SDK fails; the error carries the cost so far.
    """
    from claude_agent_sdk import ClaudeSDKError

    reader = StreamReader()
    try:
        await reader.read(messages)
    except ClaudeSDKError as exc:
        translated = translate_error(exc, agent=agent, result=reader.result)
        if translated is not None:
            translated.answer = reader.answer or ""
        raise (translated or exc) from exc
    if reader.result is not None and is_error_result(reader.result):
        error = _result_error(reader.result, agent)
        error.answer = reader.answer or ""  # (a budget stop after the answer: keep it)
        raise error
    return SdkAnswer(text=reader.answer or "", **_spent(reader.result))


def translate_error(exc: BaseException, *, agent: str = "",
                    result: Any = None) -> AgentSDKError | None:
    """The maker error for one of claude-agent-sdk's exceptions, None for any other one
    (``result``: the last ResultMessage seen, if any, for the cost so far). The message
    says what to do; the SDK's exception is kept as ``cause``."""
    try:
        from claude_agent_sdk import (
            ClaudeSDKError,
            CLIConnectionError,
            CLIJSONDecodeError,
            CLINotFoundError,
            ProcessError,
            ResultError,
        )
        from claude_agent_sdk._errors import MessageParseError  # not exported
    except ImportError:  # without the SDK there is nothing of its to translate
        return None
    if not isinstance(exc, ClaudeSDKError):
        return None
    if isinstance(exc, ResultError):
        return _result_error(exc.data, agent)
    spent = _spent(result)
    spent.pop("tokens")
    spent.pop("usage")
    context: dict[str, Any] = {"agent": agent, **spent}
    if isinstance(exc, CLINotFoundError):
        return ClaudeNotFoundError(
            f"the Claude Code CLI was not found ({exc}). It comes with claude-agent-sdk: "
            f"{install_sdk()} (a platform wheel bundles it; add --force-reinstall if "
            "it is missing), or install Claude Code and put `claude` on PATH", exc,
            **context)
    if isinstance(exc, ProcessError):
        stderr = (exc.stderr or "")[-_STDERR_TAIL:]
        return AgentProcessError(_process_message(exc.exit_code, stderr), exc,
                                 exit_code=exc.exit_code, stderr=exc.stderr, **context)
    if isinstance(exc, CLIConnectionError):
        return AgentProcessError(
            f"could not start or talk to the Claude Code CLI: {exc}. Check that it runs "
            "(`claude --version`) and that the working directory exists", exc, **context)
    if isinstance(exc, (CLIJSONDecodeError, MessageParseError)):
        return AgentStreamError(
            f"the Claude Code CLI printed output the SDK could not read ({exc}). This is "
            "usually a claude-agent-sdk and CLI version mismatch: pip install -U "
            "claude-agent-sdk (it bundles a matching CLI), and do not point cli_path at "
            "another one", exc, **context)
    return AgentSDKError(f"claude-agent-sdk failed: {type(exc).__name__}: {exc}. Run "
                         "again; if it persists, pip install -U claude-agent-sdk", exc,
                         **context)


def _process_message(exit_code: int | None, stderr: str) -> str:
    code = f" with exit code {exit_code}" if exit_code is not None else ""
    text = f"the Claude Code CLI failed{code}"
    if stderr.strip():
        text += f"; its error output ends with: {stderr.strip()}"
    if any(hint in stderr.casefold() for hint in _AUTH_HINTS):
        return text + (". It could not authenticate: set ANTHROPIC_API_KEY, or log in "
                       "with `claude` once (`/login`)")
    return text + (". Run `claude -p hello` in the same directory to see the failure "
                   "(authentication, network, or a bad option), fix it and run again")


@contextmanager
def sdk_errors(agent: str = "") -> Iterator[None]:
    """Raise claude-agent-sdk's errors inside the block as maker's (``AgentSDKError``)."""
    try:
        yield
    except Exception as exc:  # only the SDK's own are translated; any other is raised as is
        translated = translate_error(exc, agent=agent)
        if translated is None:
            raise
        raise translated from exc


def _result_error(result: Any, agent: str) -> AgentSDKError:
    """The error for an error result: a ResultMessage, or a ResultError's raw ``data``."""
    spent = _spent(result)
    spent.pop("tokens")  # (its usage says them, split)
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
    usage = token_usage(_get(result, "usage") if result is not None else None)
    tokens = sum(usage.values())
    cost = _get(result, "total_cost_usd") if result is not None else None
    duration = _get(result, "duration_ms") if result is not None else None
    session = _get(result, "session_id") if result is not None else None
    known = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) \
        else None
    return {"cost_usd": known or 0.0, "cost_known": known is not None,
            "duration_ms": int(duration) if isinstance(duration, (int, float)) else 0,
            "tokens": tokens, "session_id": session if isinstance(session, str) else None,
            "usage": usage}


class SessionTimedOut(Exception):
    """The session :func:`within` held ran past its limit and was cancelled."""


async def within(seconds: float | None, call: Awaitable[T]) -> T:
    """Await ``call`` (one SDK session) for ``seconds`` at most (None or 0: no limit).

    Past the limit the task is cancelled at its await, inside the SDK, whose clean-up
    ends the CLI subprocess; then SessionTimedOut is raised. A cancellation that does
    not come from the limit (Ctrl-C, SIGTERM) goes on as it came. A session that
    absorbed the cancellation and ended by itself still counts as timed out: what it
    said after the limit is not an answer."""
    if not seconds:
        return await call
    task = asyncio.current_task()
    assert task is not None
    fired = False

    def fire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, fire)
    try:
        result = await call
    except asyncio.CancelledError:
        if not fired or (task.cancelling() if hasattr(task, "cancelling") else 0) > 1:
            raise  # (someone else cancelled it too: that one wins)
        if hasattr(task, "uncancel"):  # (the cancellation is spent here)
            task.uncancel()
        raise SessionTimedOut() from None
    finally:
        timer.cancel()
    if fired:
        if hasattr(task, "uncancel"):
            task.uncancel()
        raise SessionTimedOut()
    return result


async def bounded(seconds: float | None, call: Awaitable[T], what: str) -> T:
    """:func:`within`, and past the limit a SessionTimeoutError that says so (``what``:
    whose session, "step 3's review"); its cost is not known (the session was cut)."""
    began = time.monotonic()
    try:
        return await within(seconds, call)
    except SessionTimedOut:
        ms = int((time.monotonic() - began) * 1000)
        raise SessionTimeoutError(
            f"{what} session ran past session_timeout ({seconds:g} s: plans/settings.yaml, "
            "or --session-timeout) and was stopped; its cost is not known to maker",
            duration_ms=ms) from None
