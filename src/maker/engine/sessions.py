"""The engine's SDK sessions: a step executor that reads the plugin's brief, and the
independent reviewer.

The orchestrator never builds an SDK session itself: it asks a *runner factory* for an
executor session (``factory(max_budget_usd=…, model=…, can_use_tool=…, hooks=…,
disallowed_tools=…, resume=…)``, an
object with ``async run(step, prompt, config) -> AgentResult``) and a *reviewer*
(``async reviewer(prompt, max_budget_usd=…, model=…, resume=…) -> SdkAnswer``). Tests inject
scripted fakes for both; these are the real ones. ``maker.core.sdk.within`` holds a
session to its wall-clock limit (``session_timeout``).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, Protocol

from maker.core.isolation import isolated
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.core.sdk import SdkAnswer, install_sdk, read_answer
from maker.engine.tool_limits import reviewer_hooks
from maker.errors import ClaudeNotFoundError
from maker.executor.launch.agent_runner import AgentRunner
from maker.executor.rules.step_rules import settings
from maker.prompts import load_prompt, prompt_tools

__all__ = ["REVIEWER_PROMPT", "BriefRunner", "Reviewer", "RunnerFactory", "StepSession",
           "sdk_reviewer", "sdk_runner_factory", "session_limit"]

REVIEWER_PROMPT = "reviewer"
"""The plugin's ``agents/reviewer.md`` (via :mod:`maker.prompts`): the reviewer's system
prompt and read-only tools, for the plugin and the engine alike."""


class StepSession(Protocol):
    """One isolated executor session (AgentRunner's shape)."""

    def run(self, step: PlanStep, context: str, config: TaskConfig) -> Awaitable[AgentResult]:
        ...


class RunnerFactory(Protocol):
    def __call__(self, *, max_budget_usd: float | None, model: str | None,
                 can_use_tool: Any = None, hooks: Any = None,
                 disallowed_tools: list[str] | None = None,
                 resume: str | None = None, cwd: Path | None = None) -> StepSession:
        ...


class Reviewer(Protocol):
    """``resume``: the session of an answer maker refused, told why (else a new one)."""

    def __call__(self, prompt: str, *, max_budget_usd: float | None,
                 model: str | None, resume: str | None = None) -> Awaitable[SdkAnswer]:
        ...


class BriefRunner(AgentRunner):
    """An AgentRunner whose prompt is exactly the text it is given: the brief the
    plugin's executor reads (``maker.executor.launch.brief``), plus the engine's feedback on an
    earlier answer. Everything else (options, answer parsing, errors) is AgentRunner's."""

    def build_prompt(self, step: PlanStep, context: str) -> str:
        return context


def sdk_runner_factory(home: Path, *, env: dict[str, str] | None = None,
                       cli_path: str | Path | None = None) -> RunnerFactory:
    """The real executor sessions: one fresh :class:`BriefRunner` per call.

    Each session works in ``home`` (the project), or in the ``cwd`` it is given (the
    worktree of a step run beside others). The SDK warns
    (``CanUseToolShadowedWarning``) that the step's own tools in ``allowed_tools``
    never reach ``can_use_tool``. maker means it: those calls are checked by its
    PreToolUse hook (``maker.engine.tool_limits``), so the warning, printed once per
    step, says nothing a user can act on and is silenced here."""
    _silence_shadowed_warning()

    def factory(*, max_budget_usd: float | None, model: str | None, can_use_tool: Any = None,
                hooks: Any = None, disallowed_tools: list[str] | None = None,
                resume: str | None = None, cwd: Path | None = None) -> StepSession:
        return BriefRunner(cwd=cwd or home, model=model, max_budget_usd=max_budget_usd,
                           can_use_tool=can_use_tool, hooks=hooks,
                           disallowed_tools=disallowed_tools, resume=resume, env=env,
                           cli_path=cli_path)

    return factory


def _silence_shadowed_warning() -> None:
    try:
        from claude_agent_sdk import CanUseToolShadowedWarning
    except ImportError:  # (no SDK: the session says so when it starts)
        return
    warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)


def sdk_reviewer(cwd: Path, *, env: dict[str, str] | None = None,
                 cli_path: str | Path | None = None) -> Reviewer:
    """The real reviewer: one SDK session with the plugin's reviewer prompt and tools."""

    async def review(prompt: str, *, max_budget_usd: float | None,
                     model: str | None, resume: str | None = None) -> SdkAnswer:
        try:
            from claude_agent_sdk import ClaudeAgentOptions, query
        except ImportError:
            raise ClaudeNotFoundError("the headless reviewer needs claude-agent-sdk, which "
                                      f"is not installed: {install_sdk()}",
                                      agent="reviewer") from None
        tools = prompt_tools(REVIEWER_PROMPT)
        options = ClaudeAgentOptions(
            tools=tools, allowed_tools=tools, permission_mode="dontAsk",
            hooks=reviewer_hooks(cwd),  # (its Bash only reads, as in the plugin)
            system_prompt=load_prompt(REVIEWER_PROMPT), cwd=str(cwd), model=model,
            max_budget_usd=max_budget_usd, resume=resume, env=dict(env or {}),
            cli_path=cli_path, **isolated())

        async def stream() -> AsyncIterator[Any]:
            async for message in query(prompt=prompt, options=options):
                yield message

        return await read_answer(stream(), agent="reviewer")

    return review


def session_limit(plans_root: Path, given: float | None) -> float | None:
    """Every session's wall-clock limit in a run (executor, reviewer, planner):
    ``--session-timeout`` when given, else ``plans/settings.yaml``'s ``session_timeout``
    (its default when the file or the plan is not there yet)."""
    return given if given is not None else settings(plans_root).session_timeout
