"""One isolated claude-agent-sdk session per step (seed 000 Task 3, seed 002:
docs/architecture.md#the-seeds).

:class:`AgentRunner` sends a step's prompt to a fresh SDK session and turns the
message stream into an :class:`~maker.core.models.AgentResult`:

- the answer is the last TextBlock of the final AssistantMessage (a subagent's
  messages do not count), parsed by maker's YAML cleaner;
- cost and duration come from the ResultMessage;
- an error ResultMessage, an empty stream or an answer with no YAML is a result with
  ``error`` (bad output: recorded, flagged, retried by the caller); a session that
  cannot run at all raises :class:`~maker.errors.AgentSDKError`, translated once in
  :mod:`maker.core.sdk`.

The session gets the step's tools (primary + fallback + AskUserQuestion) as
``allowed_tools``, the plugin's step-executor prompt as its system prompt, and a
prompt with the step, the outputs it reads (``context``) and, given a
:class:`~maker.executor.launch.notes_context.NotesContext`, what earlier agents left (seed
002); the answer's facts then go to NOTES.md. ``_sdk_query`` is the one place that
calls ``claude_agent_sdk.query``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.isolation import isolated
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.core.sdk import (
    StreamReader,
    bounded,
    install_sdk,
    is_error_result,
    sdk_errors,
    token_usage,
)
from maker.errors import AgentSDKError, YAMLCleanError
from maker.executor.launch.brief import step_sections
from maker.prompts import load_prompt
from maker.yaml_cleaner.cleaner import YAMLCleaner

if TYPE_CHECKING:
    from maker.executor.launch.notes_context import NotesContext

__all__ = ["SYSTEM_PROMPT", "AgentRunner"]

SYSTEM_PROMPT = "step-executor"
"""The prompt file (``maker.prompts``) the runner's sessions get as their system prompt:
the plugin's ``agents/step-executor.md`` body."""

_SEPARATOR = "\n\n---\n\n"


class AgentRunner:
    """Runs one step's agent in an isolated SDK session (seed 000), with seed 002's
    persistent context when ``notes`` is given.

    Every option of a real run is set here, once, for every step: ``cwd`` (default: the
    config's), ``model`` (default: the config's, then the CLI's), ``max_budget_usd``
    (the SDK ends a session that spends more), ``permission_mode`` (default
    ``dontAsk``: tools outside ``allowed_tools`` are denied; ``default`` when a
    ``can_use_tool`` callback decides), ``can_use_tool``, ``hooks`` and
    ``disallowed_tools`` (the executor's limits), ``resume`` (continue that session
    instead of a fresh one), ``env`` and ``cli_path`` (which CLI,
    talking to which API).
    """

    def __init__(self, *, notes: NotesContext | None = None, cwd: str | Path | None = None,
                 model: str | None = None, max_budget_usd: float | None = None,
                 permission_mode: str | None = None, can_use_tool: Any = None,
                 hooks: Mapping[str, Any] | None = None,
                 disallowed_tools: list[str] | None = None, resume: str | None = None,
                 env: Mapping[str, str] | None = None,
                 cli_path: str | Path | None = None, system_prompt: str | None = None,
                 cleaner: YAMLCleaner | None = None) -> None:
        self._yaml_cleaner = cleaner or YAMLCleaner()
        self.notes = notes
        self.cwd = cwd
        self.model = model
        self.max_budget_usd = max_budget_usd
        self.permission_mode = permission_mode or ("default" if can_use_tool else "dontAsk")
        self.can_use_tool = can_use_tool
        self.hooks = dict(hooks) if hooks else None
        self.disallowed_tools = list(disallowed_tools) if disallowed_tools else None
        self.resume = resume
        self.env = dict(env) if env else None
        self.cli_path = cli_path
        self.system_prompt = system_prompt if system_prompt is not None \
            else load_prompt(SYSTEM_PROMPT)

    async def run(self, step: PlanStep, context: str, config: TaskConfig,
                  timeout: float | None = None) -> AgentResult:
        """Run one isolated agent for ``step``; returns its result (``error`` set when the
        session ended in error, said nothing, or answered without YAML).

        ``context`` is the outputs the step reads (``ContextBuilder``'s YAML); ``timeout``
        the session's wall-clock limit in seconds (seed 002's; None: none). Raises
        AgentSDKError when the session cannot run at all (no CLI, the CLI failing), and
        SessionTimeoutError when it ran past ``timeout`` (it is cut; its cost unknown).
        """
        if timeout:
            return await bounded(timeout, self.run(step, context, config),
                                 f"step {step.step}'s")
        prompt = self.build_prompt(step, context)
        started = time.monotonic()
        reader = StreamReader()  # (the planner's and the reviewer's reader too)
        try:
            with sdk_errors():
                await reader.read(self._sdk_query(prompt, **self.options(step, config)))
        except AgentSDKError:
            if reader.result is None or not is_error_result(reader.result):
                raise
            # The CLI exits non-zero after an error result: the result says it all.
        result = self._result(reader.answer, reader.result, started, reader.usage())
        if self.notes is not None:  # it records only a good answer
            self.notes.update_from_result(result, step.step)
        return result

    def build_prompt(self, step: PlanStep, context: str) -> str:
        """The step's prompt: what earlier agents left (with ``notes``), the step, the
        outputs it reads, and the handoff to answer with."""
        what, handoff = step_sections(step)
        parts: list[str] = []
        if self.notes is not None:
            persistent = self.notes.get_context_for_prompt(step.step).strip()
            if persistent:
                parts.append(persistent)
        parts.append(f"# Step {step.step}: {step.title}\n\n{what.strip()}")
        if context.strip():
            parts.append("## Inputs: the whole outputs of the steps this one reads\n\n"
                         f"```yaml\n{context.strip()}\n```")
        parts.append(handoff.strip())
        return _SEPARATOR.join(parts) + "\n"

    def options(self, step: PlanStep, config: TaskConfig) -> dict[str, Any]:
        """The ClaudeAgentOptions fields of ``step``'s session (None ones left out)."""
        options: dict[str, Any] = {
            "allowed_tools": step.tools,
            "system_prompt": self.system_prompt,
            "permission_mode": self.permission_mode,
            "cwd": str(self.cwd or config.cwd) if (self.cwd or config.cwd) else None,
            "model": self.model or config.model,
            "max_turns": config.max_turns,
            "max_budget_usd": self.max_budget_usd,
            "can_use_tool": self.can_use_tool,
            "hooks": self.hooks,
            "disallowed_tools": self.disallowed_tools,
            "resume": self.resume,
            "env": self.env,
            "cli_path": str(self.cli_path) if self.cli_path else None,
            **isolated(),
        }
        return {k: v for k, v in options.items() if v is not None}

    async def _sdk_query(self, prompt: str, **kwargs: Any) -> AsyncIterator[Any]:
        """Call claude-agent-sdk ``query()`` with ``kwargs`` as its options; yields the
        message stream. The one place maker's runner reaches the SDK (tests patch it)."""
        try:
            from claude_agent_sdk import ClaudeAgentOptions, query
        except ImportError as exc:
            raise AgentSDKError("the headless engine needs claude-agent-sdk, which is not "
                                f"installed: {install_sdk()}", exc) from exc
        async for message in query(prompt=prompt, options=ClaudeAgentOptions(**kwargs)):
            yield message

    def _result(self, answer: str | None, final: Any, started: float,
                usage: dict[str, int] | None = None) -> AgentResult:
        reported = _number(getattr(final, "total_cost_usd", None), float)
        cost = reported or 0.0
        duration = _number(getattr(final, "duration_ms", None), int)
        if duration is None:
            duration = int((time.monotonic() - started) * 1000)
        usage = usage if usage is not None else token_usage(getattr(final, "usage", None))
        session = getattr(final, "session_id", None)
        base = {"cost_usd": cost, "duration_ms": duration, "tokens": sum(usage.values()),
                "session_id": session if isinstance(session, str) else None,
                "usage": usage, "cost_known": reported is not None}
        raw = answer or ""
        if final is None and answer is None:
            return AgentResult(None, raw, error="the agent's session ended without a "
                               "message or a result (empty stream)", **base)
        if final is not None and is_error_result(final):
            return AgentResult(None, raw, error=_result_error(final), **base)
        if answer is None:
            return AgentResult(None, raw, error="the agent's final message has no text: "
                               "it must end with the handoff YAML", **base)
        try:
            output, repaired = self._yaml_cleaner.clean(answer)
        except YAMLCleanError as exc:
            return AgentResult(None, raw, error=f"the answer holds no usable YAML: {exc}",
                               **base)
        return AgentResult(output, raw, was_repaired=repaired, **base)


def _result_error(result: Any) -> str:
    subtype = getattr(result, "subtype", None)
    text = "the agent's session ended in error"
    if isinstance(subtype, str) and subtype != "success":
        text += f" ({subtype})"
    errors = getattr(result, "errors", None)
    detail = getattr(result, "result", None)
    if isinstance(errors, list) and errors:
        text += ": " + "; ".join(str(e) for e in errors)
    elif isinstance(detail, str) and detail.strip():
        text += ": " + detail.strip()[:500]
    if subtype == "error_max_budget_usd":
        text += "; the step's budget (max_budget_usd) was spent"
    return text


def _number(value: Any, kind: type[Any]) -> Any:
    return kind(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None
