"""The independent reviewer's session in a headless run: one verdict on a step.

A review session cut at its bound (``session_timeout``) is drawn again from a fresh
session, at most ``max_samples`` times, as a step's cut session is; then a person
decides (the run stops for them, saying why). Every call goes to the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.core.sdk import bounded
from maker.engine.sessions import session_limit
from maker.engine.stops import review_cut
from maker.errors import AgentSDKError, SessionTimeoutError
from maker.executor.acceptance.review import Review, record_review
from maker.executor.acceptance.review_route import ReviewNeed, review_prompt, review_rounds

if TYPE_CHECKING:
    from maker.engine.parts import EngineParts
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["review_session"]


async def review_session(store: PlanStore, parts: EngineParts, record: StepRecord,
                         need: ReviewNeed) -> tuple[Review, float]:
    """The reviewer's recorded verdict on ``record``, and what its answer cost. Raises
    RunStop when every session was cut, and AgentSDKError when one cannot run."""
    assert parts.reviewer is not None
    n = record.number
    attempt = review_rounds(record) + 1
    model = parts.model_for(record)
    for cut in range(1, parts.max_samples + 1):
        budget = parts.call_budget()
        try:
            answer = await bounded(session_limit(store.root, parts.session_timeout),
                                   parts.reviewer(review_prompt(store, record, need),
                                                  max_budget_usd=budget, model=model),
                                   f"step {n}'s review")
            break
        except AgentSDKError as exc:
            parts.record_answer("reviewer", n, attempt, exc, model)
            if not isinstance(exc, SessionTimeoutError):
                raise
            if cut == parts.max_samples:
                raise review_cut(n, record.title, cut, exc) from None
    parts.record_answer("reviewer", n, attempt, answer, model)
    return record_review(store, record, answer.text), answer.cost_usd
