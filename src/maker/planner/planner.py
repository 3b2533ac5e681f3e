"""The headless planner (seed 001, Task 2; docs/architecture.md#the-seeds): ``TaskSubmitted`` in,
``PlanCreated`` out.

One claude-agent-sdk session plans the task with the plugin planner's own prompt and
read-only tools (``agents/planner.md``, via :mod:`maker.prompts`). Its answer goes
through maker's linter, then through :attr:`PlannerModule.plan_checks` (what the project
adds: the engine refuses there, as the plugin's planner hook does, a vote on a code step
where maker cannot run the project's tests with pytest); a refused plan goes back to the
model with every problem (MAKER: flag, do not repair), in the same session, at most
``max_attempts`` times in all. Then :class:`~maker.errors.PlanRefusedError` carries the
last problems. SDK failures are raised as :class:`~maker.errors.AgentSDKError`, never
retried here.

Every call's cost, duration, tokens and session are in :attr:`PlannerModule.calls`
(failed calls too), for the run's ledger.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from maker.core.events import Event, PlanCreated, TaskSubmitted
from maker.core.isolation import isolated
from maker.core.models import Plan, TaskConfig
from maker.core.module import Module
from maker.core.sdk import SdkAnswer, bounded, install_sdk, read_answer
from maker.errors import (
    AgentSDKError,
    BudgetExceededError,
    ClaudeNotFoundError,
    PlanRefusedError,
    Problem,
    SessionTimeoutError,
)
from maker.planner.linter import lint_text
from maker.prompts import load_prompt, prompt_tools
from maker.tools.registry import ToolRegistry

__all__ = ["DEFAULT_MAX_ATTEMPTS", "PlannerModule", "refusal_message"]

DEFAULT_MAX_ATTEMPTS = 3  # as the plugin's SubagentStop hook: answers in all, not retries
_AGENT = "planner"
_PROMPT = "planner"  # agents/planner.md: the plugin's planner, system prompt and tools


def refusal_message(problems: Sequence[Problem | str], attempt: int, max_attempts: int) -> str:
    """What the planner model is told when maker refuses its plan: every problem."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (f"maker rejected the plan (attempt {attempt} of {max_attempts}); nothing was "
            "written. Fix every problem below and answer again with the whole corrected "
            f"plan YAML as your final message, nothing else:\n{listed}")


class PlannerModule(Module):
    """Plans a submitted task through claude-agent-sdk.

    ``max_budget_usd`` caps the whole planning (every attempt); the orchestrator may
    set it before each task to the run's remaining budget. ``env`` and ``cli_path``
    go to the SDK as they are (tests point the CLI at a scripted API with them).
    """

    def __init__(self, registry: ToolRegistry, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 max_budget_usd: float | None = None, env: Mapping[str, str] | None = None,
                 cli_path: str | Path | None = None) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be 1 or more, got {max_attempts}")
        self._registry = registry
        self.max_attempts = max_attempts
        self.max_budget_usd = max_budget_usd
        self._env = dict(env or {})
        self._cli_path = cli_path
        self.calls: list[SdkAnswer] = []
        """The SDK calls of the last task, in order, failed ones included."""
        self.session_timeout: float | None = None
        """Each call's wall-clock limit in seconds (None: none): past it the session is
        cut and SessionTimeoutError raised, its cost unknown."""
        self.plan_checks: Callable[[Plan], Sequence[Problem]] | None = None
        """The problems of a linted plan in the project it is for (None: none checked);
        the orchestrator sets it before each task. A plan with any is refused as the
        linter refuses one."""

    @property
    def cost_usd(self) -> float:
        """What the last task's planning cost, refused and failed attempts included."""
        return sum(c.cost_usd for c in self.calls)

    async def process(self, event: Event) -> AsyncIterator[Event]:
        """Yield PlanCreated for a TaskSubmitted (nothing for any other event).

        Raises PlanRefusedError when every answer was refused (with the last answer's
        problems), AgentSDKError when a call fails; anything ``_call_sdk`` raises
        propagates unchanged. A budget stop that came after a valid plan (the SDK ends
        the session in error once its budget is spent) yields the plan first.
        """
        if not isinstance(event, TaskSubmitted):
            return
        self.calls = []
        system_prompt = load_prompt(_PROMPT)
        first = self._user_prompt(event.instruction)
        prompt, session = first, None
        problems: list[Problem] = []
        for attempt in range(1, self.max_attempts + 1):
            before = len(self.calls)
            try:
                text = await self._bounded(prompt, system_prompt, event.config, session)
            except BudgetExceededError as exc:
                # The budget stopped the call after the model answered: a valid plan
                # was paid for, and is kept (the caller writes it); the stop stands.
                paid = self._lint(exc.answer)[0] if exc.answer else None
                if paid is not None:
                    paid.task = event.instruction
                    yield PlanCreated(timestamp=time.time(), plan=paid)
                raise
            session = next((c.session_id for c in reversed(self.calls[before:])), None)
            plan, problems = self._lint(text)
            if plan is not None:
                plan.task = event.instruction  # the user's words, not the model's echo
                yield PlanCreated(timestamp=time.time(), plan=plan)
                return
            prompt = refusal_message(problems, attempt, self.max_attempts)
            if session is None:  # a fresh session: it must see the task and its answer
                prompt = f"{first}\n\nYour previous answer:\n\n{text}\n\n{prompt}"
        raise PlanRefusedError(problems, attempts=self.max_attempts)

    def _lint(self, text: str) -> tuple[Plan | None, list[Problem]]:
        """``lint_text``'s answer, then :attr:`plan_checks`' on a plan it passed."""
        plan, problems = lint_text(text, self._registry)
        if plan is not None and self.plan_checks is not None:
            problems = list(self.plan_checks(plan))
        return (None, problems) if problems else (plan, [])

    async def _bounded(self, prompt: str, system_prompt: str, config: TaskConfig,
                       resume: str | None) -> str:
        """One call's answer, within ``session_timeout`` (a call cut there is recorded
        in :attr:`calls`, its cost unknown)."""
        async def call() -> str:
            raw = await self._call_sdk(prompt, system_prompt=system_prompt, config=config,
                                       resume=resume)
            return await self._text_of(raw)

        try:
            return await bounded(self.session_timeout, call(), "the planner's")
        except SessionTimeoutError as exc:
            self.calls.append(SdkAnswer(text="", cost_known=False, duration_ms=exc.duration_ms,
                                        error=str(exc)))
            raise

    async def _text_of(self, raw: Any) -> str:
        """The answer's text: ``raw`` itself, or read from a stream of SDK messages."""
        if isinstance(raw, str):
            return raw
        if isinstance(raw, AsyncIterable):
            try:
                answer = await read_answer(raw, agent=_AGENT)
            except AgentSDKError as exc:  # what a failed call cost counts too
                self.calls.append(SdkAnswer(text="", cost_usd=exc.cost_usd,
                                            cost_known=exc.cost_known,
                                            duration_ms=exc.duration_ms, usage=exc.usage,
                                            tokens=sum(exc.usage.values()),
                                            session_id=exc.session_id, error=str(exc)))
                raise
            self.calls.append(answer)
            return answer.text
        raise TypeError(f"_call_sdk must return text or an async iterable of SDK messages, "
                        f"got {type(raw).__name__}")

    async def _call_sdk(self, prompt: str, *, system_prompt: str, config: TaskConfig,
                        resume: str | None = None) -> str:
        """Call claude-agent-sdk ``query()`` and return the final text.

        The text is the last TextBlock of the final AssistantMessage; an error result
        raises. The call is recorded in :attr:`calls` (cost, duration, tokens, session),
        also when it fails. Raises AgentSDKError (BudgetExceededError when the budget is
        spent, ClaudeNotFoundError without the SDK or its CLI).
        """
        try:
            from claude_agent_sdk import ClaudeAgentOptions, query
        except ImportError:
            raise ClaudeNotFoundError("the headless planner needs claude-agent-sdk, which "
                                      f"is not installed: {install_sdk()}",
                                      agent=_AGENT) from None
        budget = self._remaining_budget()
        tools = prompt_tools(_PROMPT)
        options = ClaudeAgentOptions(
            tools=tools, allowed_tools=tools, permission_mode="dontAsk",
            system_prompt=system_prompt, cwd=config.cwd, model=config.model,
            max_turns=config.max_turns, max_budget_usd=budget, resume=resume,
            env=dict(self._env), cli_path=self._cli_path, **isolated())
        try:
            answer = await read_answer(query(prompt=prompt, options=options), agent=_AGENT)
        except AgentSDKError as exc:
            self.calls.append(SdkAnswer(text="", cost_usd=exc.cost_usd, cost_known=exc.cost_known,
                                        duration_ms=exc.duration_ms,
                                        session_id=exc.session_id, error=str(exc)))
            raise
        self.calls.append(answer)
        return answer.text

    def _remaining_budget(self) -> float | None:
        if self.max_budget_usd is None:
            return None
        left = self.max_budget_usd - self.cost_usd
        if left <= 0:
            raise BudgetExceededError(f"the planning budget of ${self.max_budget_usd:g} is "
                                      f"spent (${self.cost_usd:.4f}): raise it, or plan "
                                      "later", agent=_AGENT)
        return left

    def _user_prompt(self, instruction: str) -> str:
        """The task, as the plugin's /maker:plan words it, and the tools steps may name."""
        return load_prompt("planner_user", instruction=instruction,
                           tools_list=self._format_tools()).rstrip("\n")

    def _format_tools(self) -> str:
        """Format tool list for insertion into planner prompt."""
        return self._registry.describe()
