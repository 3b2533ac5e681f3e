"""The independent reviewer's session in a headless run: one verdict on a step.

A review session cut at its bound (``session_timeout``) is drawn again from a fresh
session, at most ``max_samples`` times, as a step's cut session is; then a person
decides (the run stops for them, saying why). Every call goes to the ledger.

An answer whose context fields are malformed is refused, as the plugin's hook refuses
it (``review_loop.refuse_review``): the session is resumed with the problems. The
answer maker takes is recorded with its facts (``review_loop.take_review``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.core.sdk import SdkAnswer, bounded
from maker.engine.sessions import session_limit
from maker.engine.stops import review_cut
from maker.errors import AgentSDKError, SessionTimeoutError
from maker.executor.acceptance.review import Review
from maker.executor.acceptance.review_loop import refuse_review, take_review
from maker.executor.acceptance.review_route import ReviewNeed, review_prompt, review_rounds
from maker.executor.state.attempts import clear

if TYPE_CHECKING:
    from maker.engine.parts import EngineParts
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["review_session"]


async def review_session(store: PlanStore, parts: EngineParts, record: StepRecord,
                         need: ReviewNeed) -> tuple[Review, float]:
    """The reviewer's recorded verdict on ``record``, and what its answers cost. Raises
    RunStop when every session was cut, and AgentSDKError when one cannot run."""
    first = review_prompt(store, record, need)
    prompt, resume, cost = first, None, 0.0
    key = f"run-step{record.number}-{review_rounds(record)}"
    clear(store, "review", key)  # (a review session counts its own answers)
    while True:
        answer = await _answer(store, parts, record, prompt, resume)
        cost += answer.cost_usd
        refused = refuse_review(store, key, answer.text)
        if refused is None:
            return take_review(store, record, answer.text), cost
        resume = answer.session_id
        prompt = refused if resume else \
            f"{first}\n\nYour previous answer:\n\n{answer.text}\n\n{refused}"


async def _answer(store: PlanStore, parts: EngineParts, record: StepRecord, prompt: str,
                  resume: str | None) -> SdkAnswer:
    """One answer of the reviewer, a cut session drawn again (``max_samples``)."""
    assert parts.reviewer is not None
    n = record.number
    attempt = review_rounds(record) + 1
    model = parts.model_for(record)
    for cut in range(1, parts.max_samples + 1):
        budget = parts.call_budget()
        try:
            answer = await bounded(session_limit(store.root, parts.session_timeout),
                                   parts.reviewer(prompt, max_budget_usd=budget, model=model,
                                                  resume=resume),
                                   f"step {n}'s review")
            break
        except AgentSDKError as exc:
            parts.record_answer("reviewer", n, attempt, exc, model)
            if not isinstance(exc, SessionTimeoutError):
                raise
            if cut == parts.max_samples:
                raise review_cut(n, record.title, cut, exc) from None
    parts.record_answer("reviewer", n, attempt, answer, model)
    return answer
