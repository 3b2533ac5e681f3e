"""The user's approval: a step whose handoff says complete counts as complete only
once the user approves it (seed 004's hard stop), unless ``MAKER_AUTOAPPROVE=1``.

A large step (``REVIEW_THRESHOLD`` changed files or more) waits even then: the
independent reviewer's verdict approves or rejects it in the user's place, so a
headless run cannot skip the review.

While it waits, the step stays ``in-progress`` with ``awaiting_approval: true`` in
its front matter, its handoff is on disk, and nothing blocks the session from
stopping (the handoff was accepted). ``approve_step`` completes it;
``reject_step`` puts it back to pending with the user's revision notes, which the
next brief shows, and keeps the rejected handoff under ``handoffs/reset/``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from maker.errors import TransitionError
from maker.store.plan_store import PlanStore, StepRecord, StoredPlan, utc_now

__all__ = ["AWAITING", "REVIEW_THRESHOLD", "RejectResult", "approve_step", "autoapprove",
           "hold_for_approval", "is_awaiting", "needs_approval", "reject_step",
           "review_required"]

AWAITING = "awaiting_approval"
# Seed 004: an independent review when a step touched this many files or more.
REVIEW_THRESHOLD = 5


def autoapprove(env: Mapping[str, str] | None = None) -> bool:
    """True when ``MAKER_AUTOAPPROVE=1`` (headless runs approve their own steps)."""
    return (os.environ if env is None else env).get("MAKER_AUTOAPPROVE", "") in ("1", "true")


def review_required(files_changed: list[str]) -> bool:
    return len(files_changed) >= REVIEW_THRESHOLD


def needs_approval(files_changed: list[str], env: Mapping[str, str] | None = None) -> bool:
    """Whether an accepted complete handoff waits: always, unless auto-approved and small."""
    return not autoapprove(env) or review_required(files_changed)


def is_awaiting(record: StepRecord) -> bool:
    return record.status == "in-progress" and bool(record.meta.get(AWAITING))


def hold_for_approval(store: PlanStore, record: StepRecord) -> None:
    """Mark an in-progress step whose complete handoff was accepted as awaiting approval."""
    with store.lock():
        record.meta[AWAITING] = True
        record.meta["handoff_accepted_at"] = utc_now()
        store.save_step(record)
        active = store.read_active()
        if active and active.get("step") == record.number:
            store.write_active(None)


def _awaiting(store: PlanStore, n: int) -> tuple[StoredPlan, StepRecord]:
    plan = store.load()
    record = plan.get(n)
    if not is_awaiting(record):
        raise TransitionError(
            f"step {n} is {record.status} and is not awaiting approval; only a step whose "
            "complete handoff was accepted can be approved or rejected", n)
    return plan, record


def approve_step(store: PlanStore, n: int, by: str = "user") -> StepRecord:
    """Complete step ``n`` (awaiting approval). Raises TransitionError otherwise, and
    ReviewMissingError for a large step without its review (in a headless run:
    without an approving one)."""
    from maker.executor.lifecycle import set_status
    from maker.executor.review import ReviewMissingError, latest_review

    with store.lock():
        plan, record = _awaiting(store, n)
        handoff = store.read_handoff(n) or {}
        files = [str(f) for f in handoff.get("files_changed") or []]
        if review_required(files):
            review = latest_review(store, record)
            if review is None:
                raise ReviewMissingError(
                    f"step {n} changed {len(files)} files: it needs the independent review "
                    "first. Launch the maker:reviewer subagent for it, then approve.")
            if autoapprove() and not review.approves:
                raise ReviewMissingError(
                    f"step {n}: the reviewer's verdict is {review.verdict}, and in a headless "
                    f"run only an approving review completes it: `maker step reject {n} "
                    "--from-review` sends its findings back")
        record.meta.pop(AWAITING, None)
        return set_status(store, n, "complete", {"approved_at": utc_now(), "approved_by": by},
                          plan=plan)


@dataclass(frozen=True)
class RejectResult:
    step: int
    notes: str
    archived: Any


def reject_step(store: PlanStore, n: int, notes: str = "",
                from_review: bool = False) -> RejectResult:
    """Send step ``n`` back to pending with revision notes; its handoff is kept aside.

    ``from_review`` takes the notes from the recorded review's findings.
    """
    from maker.executor.lifecycle import reset_step
    from maker.executor.review import ReviewMissingError, findings_for_notes, latest_review

    with store.lock():
        _, record = _awaiting(store, n)
        if from_review:
            review = latest_review(store, record)
            if review is None:
                raise ReviewMissingError(f"step {n} has no recorded review to send back")
            notes = "\n".join(x for x in (findings_for_notes(review), notes.strip()) if x)
        result = reset_step(store, n)
        record = store.load().get(n)
        history = list(record.meta.get("revision_notes") or [])
        history.append(notes.strip() or "rejected by the user (no notes given)")
        record.meta["revision_notes"] = history
        store.save_step(record)
        return RejectResult(n, history[-1], result.archived_handoff)
