"""Where a step ended up after its executor returned, and what the main agent does next.

One state machine for every caller: ``maker step outcome`` prints it, and the hook
that tells the main agent maker's verdict (``maker.hooks.verdicts``) words it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maker.executor.acceptance.approval import (
    approval_question,
    is_awaiting,
    read_policy,
)
from maker.executor.acceptance.review import latest_review
from maker.executor.acceptance.review_route import review_need, review_request
from maker.executor.protocol.orient import deviation_question, pending_deviation
from maker.executor.rules.instructions import decide_hint
from maker.handoff.measured import files_note

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["outcome"]


def outcome(store: PlanStore, n: int) -> dict[str, Any]:
    """Where step ``n`` ended up after its executor returned, and what to do next."""
    record = store.load_step(n)
    handoff = store.read_handoff(n) or {}
    policy = read_policy(store)
    need = review_need(store, record, policy.name, handoff)
    out: dict[str, Any] = {"step": n, "title": record.title, "status": record.status,
                           "handoff": str(store.handoff_path(n)) if handoff else None,
                           "summary": str(handoff.get("summary") or "").strip(),
                           "files_changed": need.files, "files_measured": need.measured,
                           "review_required": bool(need.reasons) and not need.skipped,
                           "review_why": need.why(), "review_skipped": need.skipped,
                           "reasons": [str(r) for r in record.meta.get("reasons") or []],
                           "files_note": files_note(record, handoff)}
    if is_awaiting(record):
        out["review_required"] = need.wants_review
        out["policy"] = policy.name
        if need.wants_review and latest_review(store, record) is None:
            out["next"] = (f"launch maker:reviewer with the Agent tool and the prompt "
                           f"\"{review_request(store, need)}\"; maker records its verdict"
                           + (" and decides the step by the approval policy"
                              if policy.name != "never" else "")
                           + ", and RED findings send the step back to implementation")
        else:
            question = approval_question(n, record.title, files_note(record, handoff))
            out["ask"] = question
            out["next"] = ("ask the user with AskUserQuestion, with exactly the input on "
                           "the `ask:` line (never answer it yourself); maker records their "
                           "answer and tells you what it did. Without AskUserQuestion (print "
                           f"mode), end by telling the user how to decide: {decide_hint(n)}")
        out["sentinel"] = "STEP_AWAITING_APPROVAL"
    elif record.status == "complete":
        out["approved_by"] = str(record.meta.get("approved_by") or "")
        out["next"], out["sentinel"] = "report the step's summary", "STEP_COMPLETE"
    elif record.status == "failed":
        out["next"], out["sentinel"] = "report why it failed", "STEP_FAILED"
    elif record.status == "blocked":
        out["next"], out["sentinel"] = "report what blocks it", "STEP_BLOCKED"
    elif record.status == "in-progress" and pending_deviation(record) is not None:
        dev = pending_deviation(record) or {}
        out["deviation"] = dev
        out["ask"] = deviation_question(n, dev)
        out["next"] = ("show the user what changed and the revised step, then ask them with "
                       "AskUserQuestion, with exactly the input on the `ask:` line (never "
                       "answer it yourself); maker records their answer and tells you what it "
                       "did. Without AskUserQuestion (print mode), end by telling the user how "
                       f"to decide: type `/maker:approve {n}` (the revised step) or "
                       f"`/maker:reject {n} <what to change>`")
        out["sentinel"] = "STEP_AWAITING_APPROVAL"
    elif record.status == "in-progress":
        from maker.executor.votes.ballots import launch_instruction

        out["next"] = f"no accepted handoff yet: {launch_instruction(store, n)}"
        out["sentinel"] = None
    else:
        out["next"], out["sentinel"] = "the step is not running", "STEP_BLOCKED"
    return out
