"""a call whose cost maker does not know must count as unknown, not as $0.

README ("What a run looks like"): "`--max-budget-usd X` stops the run before its next
call once it has spent X (a call whose cost the SDK did not report stops it too: unknown
is not zero)". The engine records a session cut by ``session_timeout`` and an SDK call
that failed before any result (the CLI crashed) with ``cost_usd=0`` and the default
``cost_known=True``, although its own error text says "its cost is not known to maker".
Such calls are counted as $0 known: a budget never trips on them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from harness.engine_fakes import run
from harness.step_plans import handoff, linear
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.budget import Budget
from maker.engine.ledger import Call, Ledger
from maker.engine.orchestrator import Orchestrator
from maker.engine.parts import EngineParts
from maker.errors import AgentProcessError


class _Hangs:
    def factory(self, **options: Any) -> _Hangs:
        return self

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        await asyncio.sleep(30)
        return AgentResult({"step": step.step}, handoff(step.step), cost_usd=0.01)


class _Crashes:
    def factory(self, **options: Any) -> _Crashes:
        return self

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        # The CLI ran (and spent tokens), then died before its ResultMessage: the SDK
        # reported no cost (what sdk.translate_error gives: cost_usd 0.0).
        raise AgentProcessError("the Claude Code CLI failed with exit code 137",
                                agent=f"step {step.step}")


def _budget_run(project: Path, session: Any, timeout: float | None) -> tuple[Ledger, Budget]:
    store = linear(project, 1)
    ledger = Ledger(store)
    budget = Budget(5.0, ledger)
    parts = EngineParts(runner_factory=session.factory, ledger=ledger, call_type=Call,
                        budget=budget)
    parts.session_timeout = timeout
    run(Orchestrator(store, parts))
    return ledger, budget


def test_a_session_cut_by_session_timeout_has_an_unknown_cost(project: Path) -> None:
    ledger, budget = _budget_run(project, _Hangs(), 0.2)
    (call,) = ledger.calls()
    assert "its cost is not known to maker" in (call.error or "")
    # maker says it does not know the cost, yet records it as a known $0:
    assert call.cost_known is False, "a timed-out session's cost is recorded as a known $0"
    assert ledger.unknown_costs() == 1


def test_a_call_the_cli_died_in_has_an_unknown_cost(project: Path) -> None:
    ledger, budget = _budget_run(project, _Crashes(), None)
    (call,) = ledger.calls()
    assert call.error and call.cost_usd == 0.0
    assert call.cost_known is False, "a crashed call with no reported cost counts as $0 known"


def test_a_call_that_ended_in_an_error_result_keeps_the_tokens_it_reported(
        project: Path) -> None:
    """An error result (a budget, an API error) still says what the call used: the
    ledger keeps its tokens, split as the SDK split them, and its cost."""
    from maker.core.sdk import _result_error

    result = {"subtype": "error_max_budget_usd", "total_cost_usd": 0.04, "duration_ms": 900,
              "session_id": "s1", "usage": {"input_tokens": 1200, "output_tokens": 30,
                                            "cache_read_input_tokens": 500}}
    exc = _result_error(result, "step 1")
    assert exc.usage == {"input_tokens": 1200, "output_tokens": 30,
                         "cache_read_input_tokens": 500}  # (as the SDK's usage names them)
    store = linear(project, 1)
    ledger = Ledger(store)
    parts = EngineParts(runner_factory=_Crashes().factory, ledger=ledger, call_type=Call)
    parts.record_answer("executor", 1, 1, exc, "m")
    (call,) = ledger.calls()
    assert (call.input_tokens, call.output_tokens, call.cache_read_tokens) == (1200, 30, 500)
    assert call.cost_usd == 0.04 and call.cost_known and "budget" in (call.error or "")


def test_a_session_its_budget_cut_keeps_the_tokens_its_result_counted_per_model() -> None:
    """The CLI's result for a session cut by its budget says 0 in ``usage`` and the real
    counts in ``model_usage`` (seen on 2.1.332): maker reads those, and where neither
    says anything, what the session's messages said, each model turn once."""
    from maker.core.sdk import StreamReader

    async def stream(*messages: Any) -> Any:
        for m in messages:
            yield m

    def assistant(mid: str, **usage: int) -> Any:
        return type("AssistantMessage", (), {"usage": usage, "message_id": mid,
                                             "content": [], "parent_tool_use_id": None})()

    def result(**fields: Any) -> Any:
        return type("ResultMessage", (), {"subtype": "error_max_budget_usd", **fields})()

    cut = result(usage={"input_tokens": 0, "output_tokens": 0},
                 model_usage={"m": {"inputTokens": 13137, "outputTokens": 5,
                                    "cacheReadInputTokens": 7}})
    reader = StreamReader()
    asyncio.run(reader.read(stream(assistant("a", input_tokens=13137, output_tokens=1), cut)))
    assert reader.usage() == {"input_tokens": 13137, "output_tokens": 5,
                              "cache_read_input_tokens": 7}
    silent = result(usage=None, model_usage=None)
    reader = StreamReader()
    asyncio.run(reader.read(stream(assistant("a", input_tokens=100, output_tokens=1),
                                   assistant("a", input_tokens=100, output_tokens=1),
                                   assistant("b", input_tokens=120, output_tokens=3),
                                   silent)))
    assert reader.usage() == {"input_tokens": 220, "output_tokens": 4}
