"""The reviewer's verdict on a step awaiting approval, applied: one rule for the plugin's
hook (``maker.hooks.deliver``) and ``maker run`` (``maker.engine.orchestrator``).

    verdict changes-needed ──rounds < max_review_attempts──▶ back to implementation
         │                                                   (in progress again, the
         │ rounds spent                                      findings in its brief)
         ▼
    awaiting a person, with the findings          verdict approve ──▶ the policy's
                                                  route: the reviewer approves it
                                                  (``auto`` large, ``reviewer``), or a
                                                  person decides (``never``)

- RED findings (``VERDICT: changes-needed``) send the step back to implementation
  under every policy, as seed 004's ``independent_review`` does (docs/architecture.md#the-seeds):
  the step is rejected
  with the findings as revision notes (``maker.executor.acceptance.approval.reject_step``) and
  started again at once, keeping its start (its changes are measured from where the
  step first began), so the next executor's brief carries the findings. At most
  ``max_review_attempts`` times (``plans/settings.yaml``, seed default 1).
- Past that bound the step stays awaiting approval and a person decides, with the
  findings: a reviewer that keeps rejecting never approves (nor fails) the step by
  itself. A reviewer that gives no verdict leaves the decision to a person too.

Before that, the answer is taken (``take_review``: recorded, its facts in NOTES.md) or
refused for malformed context fields (``refuse_review``, within ``REVIEW_ANSWERS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from maker.executor.acceptance.accept import add_step_facts
from maker.executor.acceptance.approval import approve_step, read_policy, reject_step
from maker.executor.acceptance.review import Review, read_review, record_review, refused_review
from maker.executor.acceptance.review_route import ROUNDS_META, review_need, review_rounds
from maker.executor.rules.step_rules import REVIEW_ANSWERS
from maker.executor.state.attempts import bump, clear
from maker.executor.state.lifecycle import start_step

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["ReviewDecision", "apply_review", "refuse_review", "take_review"]


@dataclass(frozen=True)
class ReviewDecision:
    """What the reviewer's verdict did: ``kind`` is ``approved`` (complete),
    ``sent-back`` (in progress again, for the next executor), ``person`` (awaiting a
    person's decision); ``text`` says it for the user."""

    kind: str
    text: str
    round: int = 0  # the review round that sent it back (sent-back)
    bound: int = 0  # max_review_attempts


def take_review(store: PlanStore, record: StepRecord, text: str) -> Review:
    """Record the reviewer's answer ``text`` as the review of step ``record`` (awaiting
    approval), and add its discoveries, decisions and blockers to NOTES.md, tagged with
    the step and the attempt it reviewed, as an accepted handoff's are: one transaction.
    Both front ends call it once they take the answer (not for one they refuse)."""
    with store.lock():
        review = record_review(store, record, text)
        if any(review.context.facts().values()):
            add_step_facts(store, store.load(), record, review.context)
    return review


def apply_review(store: PlanStore, record: StepRecord, review: Review,
                 session_id: str | None = None) -> ReviewDecision:
    """Apply ``review`` to step ``record`` (awaiting approval). ``session_id``: the
    session the step goes on in when it is sent back. Raises MakerError (a broken
    settings file; a step that can no longer be started)."""
    n = record.number
    policy = read_policy(store)
    need = review_need(store, record, policy.name)
    rounds, bound = review_rounds(record), need.max_rounds
    if review.verdict == "changes-needed":
        if rounds < bound:
            with store.lock():  # one transaction: rejected and started again, or neither
                reject_step(store, n, from_review=True, by=f"the independent reviewer "
                            f"(review round {rounds + 1} of {bound})")
                again = store.load_step(n)
                again.meta[ROUNDS_META] = rounds + 1
                store.save_step(again)
                start_step(store, n, session_id=session_id, take_over=True)
            return ReviewDecision(
                "sent-back", f"sent back to implementation with the reviewer's findings "
                f"(review round {rounds + 1} of {bound}, max_review_attempts): it is in "
                "progress again, and the next executor's brief carries the findings",
                rounds + 1, bound)
        return ReviewDecision(
            "person", f"not sent back again: the reviewer's findings already sent it back "
            f"{rounds} time(s), the bound (max_review_attempts: {bound}); it awaits a "
            "person's decision, with these findings", rounds, bound)
    if review.approves and need.route == "reviewer":
        approve_step(store, n, f"policy:{policy.name} (reviewer approved)")
        return ReviewDecision("approved", f"approved by the reviewer under the "
                              f"`{policy.name}` policy: complete")
    why = "the reviewer gave no verdict" if not review.approves else \
        f"under the `{policy.name}` policy a person approves it"
    return ReviewDecision("person", f"awaiting a person's decision ({why})")


def refuse_review(store: PlanStore, key: str, text: str) -> str | None:
    """What the reviewer is told when maker refuses its answer ``text``: its context
    fields are malformed and it has answers left (``REVIEW_ANSWERS`` in all, counted
    under ``key``: one reviewer's answers). None when maker takes the answer."""
    problems = read_review(text).problems
    count = bump(store, "review", key) if problems else REVIEW_ANSWERS
    if count >= REVIEW_ANSWERS:
        clear(store, "review", key)
        return None
    return refused_review(problems, count, REVIEW_ANSWERS)
