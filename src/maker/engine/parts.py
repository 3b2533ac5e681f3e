"""What a headless run is made of (``EngineParts``): its SDK sessions, ledger and budget,
the executor's limits, and the bounds of its loops; injected, so tests use scripted fakes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from maker.core.clock import utc_now
from maker.core.models import TaskConfig
from maker.engine.ledger import token_split
from maker.engine.sessions import Reviewer, RunnerFactory
from maker.engine.tool_limits import session_limits
from maker.errors import AgentSDKError
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord

__all__ = ["EngineParts"]


@dataclass
class EngineParts:
    """What a run is made of: the SDK sessions, the ledger and budget, the tool limits
    (all injected: tests use scripted fakes), and the bounds of its loops.

    ``budget`` may be None (no ``--max-budget-usd``): nothing is checked and no call is
    capped. ``call_type`` builds a ledger entry (``maker.engine.ledger.Call``).
    """

    runner_factory: RunnerFactory
    ledger: Any
    call_type: Callable[..., Any]
    budget: Any = None
    reviewer: Reviewer | None = None
    # The executor's limits in its session: ``limits(store, record)`` gives the session
    # options that hold them (and, for a step beside others, its worktree as ``cwd``).
    limits: Callable[[PlanStore, StepRecord], dict[str, Any]] = session_limits
    model: str | None = None
    config: TaskConfig = field(default_factory=lambda: TaskConfig(instruction=""))
    # Whether to start another step (None: always): a person's graceful stop of a
    # /maker:run lets what runs finish and starts nothing more.
    keep_going: Callable[[], bool] | None = None
    flagger: RedFlagger = field(default_factory=RedFlagger)
    session_id: str = "maker-run"
    max_samples: int = 3  # red-flagged samples of one answer before the step fails
    # The bounds of one step (the gate's, the fixes'): plans/settings.yaml, read through
    # maker.executor.rules.step_rules when the step starts, as /maker:step reads them.
    session_timeout: float | None = None  # --session-timeout: this run's (else the file's)
    votes: int = 1  # --vote K: the lead a side-effect-free step's answer needs (1: none)
    stopping: bool = False  # set by the signal handler of `maker run`

    def model_for(self, record: StepRecord) -> str | None:
        """The step's own ``model``, else the run's ``--model``, else the config's."""
        return record.spec.model or self.model or self.config.model

    def check_stop(self) -> None:
        """Raise CancelledError once the run was asked to stop (Ctrl-C, SIGTERM). The
        task is cancelled too; this catches a cancellation the SDK's own task groups
        absorbed (the CLI, interrupted with it, ends its session in error)."""
        if self.stopping:
            raise asyncio.CancelledError("maker run was asked to stop")

    def call_budget(self) -> float | None:
        """Before every SDK call: stop if asked (``check_stop``); raise
        BudgetExceededError when the run's budget is spent, else the remaining budget
        (the call's own ``max_budget_usd``)."""
        self.check_stop()
        if self.budget is not None:
            self.budget.check()
        remaining = self.budget.for_call() if self.budget is not None else None
        return None if remaining is None else float(remaining)

    def record(self, kind: str, step: int | None, attempt: int, *, cost_usd: float = 0.0,
               duration_ms: int = 0, tokens: int = 0, model: str | None = None,
               error: str | None = None, session_id: str | None = None,
               detail: dict[str, Any] | None = None, usage: dict[str, int] | None = None,
               cost_known: bool = True) -> None:
        """One SDK call in the ledger, its tokens as the SDK split them (``token_split``)."""
        self.ledger.record(self.call_type(
            kind=kind, step=step, attempt=attempt, cost_usd=cost_usd, duration_ms=duration_ms,
            model=model, error=error, at=utc_now(), session_id=session_id, detail=detail,
            cost_known=cost_known, **token_split(usage, tokens)))

    def record_answer(self, kind: str, step: int | None, attempt: int, answer: Any,
                      model: str | None) -> None:
        """One SDK call as reported: one that answered (an ``AgentResult``, an
        ``SdkAnswer``), or one that failed (an ``AgentSDKError``: what its result said)."""
        failed = isinstance(answer, AgentSDKError)
        self.record(kind, step, attempt, cost_usd=answer.cost_usd,
                    duration_ms=answer.duration_ms, tokens=0 if failed else answer.tokens,
                    model=model, usage=answer.usage, cost_known=answer.cost_known,
                    error=str(answer) if failed else answer.error, session_id=answer.session_id)
