"""The headless engine's fakes for unit tests: the scripted model (executor sessions
that pop canned answers and record what they received), a planner, a reviewer, an
in-memory ledger and budget; ``parts`` assembles them into the engine's ``EngineParts``
and ``run`` runs an orchestrator to its end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from maker.core.events import Event, PlanCreated
from maker.core.models import AgentResult, Plan, PlanStep, TaskConfig
from maker.core.sdk import SdkAnswer
from maker.engine.ledger import Call
from maker.engine.orchestrator import Orchestrator, RunResult
from maker.engine.parts import EngineParts
from maker.errors import BudgetExceededError, YAMLCleanError
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["Answer", "FakeBudget", "FakeCall", "FakeLedger", "FakePlanner", "FakeReviewer",
           "ScriptedModel", "oriented", "parts", "run"]

# The real record of a call: the fakes below keep it in memory.
FakeCall = Call


class FakeLedger:
    def __init__(self) -> None:
        self.calls: list[FakeCall] = []

    def record(self, call: FakeCall) -> None:
        self.calls.append(call)

    def total(self) -> float:
        return sum(c.cost_usd for c in self.calls)

    def kinds(self) -> list[tuple[str, int | None]]:
        return [(c.kind, c.step) for c in self.calls]


class FakeBudget:
    def __init__(self, max_usd: float, ledger: FakeLedger) -> None:
        self.max_usd, self.ledger = max_usd, ledger

    @property
    def spent(self) -> float:
        return self.ledger.total()

    @property
    def remaining(self) -> float:
        return max(0.0, self.max_usd - self.spent)

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.max_usd

    def for_call(self) -> float:
        return self.remaining

    def check(self) -> None:
        if self.exhausted:
            raise BudgetExceededError(f"the run's budget of ${self.max_usd} is spent")


Answer = str | Callable[[str], str]


def oriented(store: Any, n: int, answer: str) -> Callable[[str], str]:
    """``answer``, given by an executor that first records its orientation of step ``n``
    (``maker orient n none``, as its brief tells it): a step whose tools can write is
    handed off complete only after that."""
    def orient_then_answer(_: str) -> str:
        from maker.executor.protocol.orient import record_orient

        record_orient(store, n, "none")
        return answer

    return orient_then_answer


@dataclass
class ScriptedModel:
    """Executor sessions: each call pops the next canned answer (text, or a function of
    the prompt that may touch the project first) and records what it received."""

    answers: list[Answer]
    cost: float = 0.01
    prompts: list[tuple[int, str]] = field(default_factory=list)
    options: list[dict[str, Any]] = field(default_factory=list)
    resumable: bool = True  # False: resuming a session fails, as a lost transcript would

    def factory(self, **options: Any) -> ScriptedModel.Session:
        self.options.append(options)
        return ScriptedModel.Session(self, options.get("resume") or
                                     f"session-{len(self.options)}")

    @dataclass
    class Session:
        model: ScriptedModel
        session_id: str

        async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
            self.model.prompts.append((step.step, context))
            if not self.model.resumable and self.model.options[-1].get("resume"):
                return AgentResult(None, "", cost_usd=self.model.cost, duration_ms=5,
                                   error="No conversation found with session ID",
                                   session_id=self.session_id)
            if not self.model.answers:
                raise AssertionError(f"no canned answer left for step {step.step}")
            answer = self.model.answers.pop(0)
            raw = answer(context) if callable(answer) else answer
            try:
                output, repaired = YAMLCleaner().clean(raw)
            except YAMLCleanError as exc:
                return AgentResult(None, raw, cost_usd=self.model.cost, duration_ms=5,
                                   error=f"no YAML: {exc}")
            return AgentResult(output, raw, was_repaired=repaired, tokens=100,
                               cost_usd=self.model.cost, duration_ms=5,
                               session_id=self.session_id)


class FakePlanner:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.max_budget_usd: float | None = None
        self.calls: list[SdkAnswer] = []
        self.received: list[Event] = []

    async def process(self, event: Event) -> AsyncIterator[Event]:
        self.received.append(event)
        self.calls = [SdkAnswer(text="plan", cost_usd=0.02, duration_ms=7, tokens=50,
                                session_id="planner-1")]
        yield PlanCreated(timestamp=0.0, plan=self.plan)


class FakeReviewer:
    """Answers each review with the next verdict (``GREEN: fine`` then ``VERDICT: v``), or
    with an answer given whole (one with a ``VERDICT:`` line of its own)."""

    def __init__(self, *verdicts: str) -> None:
        self.verdicts = list(verdicts)
        self.prompts: list[str] = []
        self.resumed: list[str | None] = []  # the session each call resumed (None: new)

    async def __call__(self, prompt: str, *, max_budget_usd: float | None,
                       model: str | None, resume: str | None = None) -> SdkAnswer:
        self.prompts.append(prompt)
        self.resumed.append(resume)
        said = self.verdicts.pop(0)
        return SdkAnswer(text=said if "VERDICT:" in said else f"GREEN: fine\nVERDICT: {said}",
                         cost_usd=0.005, duration_ms=3,
                         session_id=f"review-{len(self.prompts)}")


def parts(model: ScriptedModel, ledger: FakeLedger | None = None, budget: float | None = None,
          reviewer: FakeReviewer | None = None) -> EngineParts:
    ledger = ledger or FakeLedger()
    return EngineParts(runner_factory=model.factory, ledger=ledger, call_type=FakeCall,
                       budget=FakeBudget(budget, ledger) if budget is not None else None,
                       reviewer=reviewer)


def run(orch: Orchestrator, task: str | None = None) -> RunResult:
    return asyncio.run(orch.run(task))
