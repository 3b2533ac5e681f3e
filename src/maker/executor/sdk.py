"""claude-agent-sdk's errors, translated once into maker's error tree.

The SDK raises its own classes (``CLINotFoundError``, ``ProcessError``,
``CLIJSONDecodeError``, …); maker's callers catch :class:`maker.errors.AgentSDKError`
and show its message, which says what to do. Every SDK call goes through
:func:`sdk_errors`, so the translation lives here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from maker.errors import AgentProcessError, AgentSDKError, AgentStreamError, ClaudeNotFoundError

__all__ = ["sdk_errors", "translate_sdk_error"]

_STDERR_TAIL = 2000
_AUTH_HINTS = ("api key", "apikey", "authentication", "401", "unauthorized", "login",
               "credit balance")


def translate_sdk_error(exc: BaseException) -> AgentSDKError | None:
    """The maker error for one of claude-agent-sdk's exceptions; None for any other one.

    The message names what to do: install or point at the CLI, check the key or the
    login, upgrade the SDK. The SDK's exception is kept as ``cause``.
    """
    try:
        from claude_agent_sdk import (
            ClaudeSDKError,
            CLIConnectionError,
            CLIJSONDecodeError,
            CLINotFoundError,
            ProcessError,
        )
        from claude_agent_sdk._errors import MessageParseError
    except ImportError:  # without the SDK there is nothing of its to translate
        return None
    if not isinstance(exc, ClaudeSDKError):
        return None
    if isinstance(exc, CLINotFoundError):
        return ClaudeNotFoundError(
            f"the Claude Code CLI was not found ({exc}). It comes with claude-agent-sdk: "
            "pip install --force-reinstall claude-agent-sdk (a platform wheel bundles it), "
            "or install Claude Code and put `claude` on PATH", exc)
    if isinstance(exc, ProcessError):
        stderr = (exc.stderr or "")[-_STDERR_TAIL:]
        return AgentProcessError(_process_message(exc.exit_code, stderr), exc,
                                 exit_code=exc.exit_code, stderr=exc.stderr)
    if isinstance(exc, CLIConnectionError):
        return AgentProcessError(
            f"could not start or talk to the Claude Code CLI: {exc}. Check that it runs "
            "(`claude --version`) and that the working directory exists", exc)
    if isinstance(exc, (CLIJSONDecodeError, MessageParseError)):
        return AgentStreamError(
            f"the Claude Code CLI printed output the SDK could not read ({exc}). This is "
            "usually a claude-agent-sdk and CLI version mismatch: pip install -U "
            "claude-agent-sdk (it bundles a matching CLI), and do not point cli_path at "
            "another one", exc)
    return AgentSDKError(
        f"claude-agent-sdk failed: {type(exc).__name__}: {exc}. Run again; if it "
        "persists, pip install -U claude-agent-sdk", exc)


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
def sdk_errors() -> Iterator[None]:
    """Raise claude-agent-sdk's errors inside the block as maker's (``AgentSDKError``)."""
    try:
        yield
    except Exception as exc:
        translated = translate_sdk_error(exc)
        if translated is None:
            raise
        raise translated from exc
