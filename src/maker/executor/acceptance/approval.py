"""The approval gate: a step whose complete handoff was accepted counts as complete only
once a person approves it, or an approval policy that a person set does (seed 004's
hard stop, docs/architecture.md#the-seeds: never an environment variable, never the model).

    in-progress ──complete handoff──▶ awaiting-approval ──approve──▶ complete
                                             │
                                             └──reject (revision notes)──▶ pending

Who may approve is decided where the approval comes from (the user's answer or typed
``/maker:approve``, seen by a hook; ``maker step approve`` at a terminal, which refuses
to run inside Claude Code); this module records who did, in ``approved_by``.

The policy (``plans/.maker/policy.json``, set with ``/maker:policy`` or
``maker policy`` by a person):

- ``never`` (the default): a person approves every step;
- ``reviewer``: the independent reviewer's verdict approves or rejects every step;
- ``auto``: an accepted handoff is approved, except a large step (``REVIEW_THRESHOLD``
  changed files or more, or files in two or more declared boundaries), which the
  reviewer's verdict decides.

Who decides which step is one rule for both front ends:
``maker.executor.rules.step_rules.approval_route``, read for a step by
``maker.executor.acceptance.review_route.review_need``; a large step is reviewed before anyone
approves it, unless a person set ``STEP_SKIP_REVIEW=1`` (then a person decides it). The
reviewer's verdict is applied by ``maker.executor.acceptance.review_loop``.

An approval by policy is recorded as ``approved_by: policy:<name>``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from maker.core.clock import utc_now
from maker.core.statuses import AWAITING
from maker.errors import ReviewMissingError, StepError, TransitionError
from maker.executor.acceptance.review_route import review_need, skip_meta
from maker.executor.rules.step_rules import REVIEW_THRESHOLD
from maker.store.approval_seal import approval_sealed, seal_approval
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord, StoredPlan
from maker.store.seal import seal
from maker.store.step_file import REVISION_META

__all__ = ["APPROVE_LABEL", "APPROVE_REST_LABEL", "POLICIES", "QUESTION_PREFIX",
           "REJECT_LABEL", "Policy", "RejectResult", "adopt_approvals", "approval_question",
           "approve_step", "hold_or_approve", "is_awaiting", "read_policy", "reject_step",
           "set_policy"]

POLICIES: dict[str, str] = {
    "never": "a person approves every step",
    "reviewer": "the independent reviewer's verdict approves or rejects every step",
    "auto": "an accepted handoff is approved; a step that changed "
            f"{REVIEW_THRESHOLD}+ files (or crossed two declared boundaries) needs the "
            "reviewer's approving verdict",
}


@dataclass(frozen=True)
class Policy:
    name: str = "never"
    set_by: str = ""
    set_at: str = ""

    def describe(self) -> str:
        who = f" (set by {self.set_by})" if self.set_by else " (the default)"
        return f"{self.name}: {POLICIES[self.name]}{who}"


def read_policy(store: PlanStore) -> Policy:
    """The approval policy: the one a person chose for the rest of a ``/maker:run``
    while it runs, else the plan's; ``never`` when none was set or the file is
    unreadable (an unreadable policy must not open the gate)."""
    from maker.executor.state.run import run_policy

    chosen = run_policy(store)
    if chosen and chosen.get("name") in POLICIES:
        return Policy(str(chosen["name"]), str(chosen.get("set_by") or ""),
                      str(chosen.get("set_at") or ""))
    data = store.read_policy_data()
    policy = Policy(str(data.get("name")), str(data.get("set_by") or ""),
                    str(data.get("set_at") or ""))
    return policy if policy.name in POLICIES else Policy()


def set_policy(store: PlanStore, name: str, by: str) -> Policy:
    """Record the approval policy ``name``, set by ``by`` (a person). Raises StepError
    for an unknown name."""
    if name not in POLICIES:
        raise StepError(f"{name!r} is not an approval policy: use one of "
                        + ", ".join(f"{k} ({v})" for k, v in POLICIES.items()))
    from maker.executor.state.lifecycle import refresh_overview
    from maker.executor.state.run import clear_policy

    policy = Policy(name, by, utc_now())
    with store.lock():
        atomic_write(store.policy_path, json.dumps(seal(asdict(policy)), indent=2))
        clear_policy(store)  # (a run's own choice gives way to the person's new one)
        if store.overview_path.exists():
            refresh_overview(store, store.load())
    return policy


def is_awaiting(record: StepRecord) -> bool:
    return record.status == AWAITING


# maker's approval question, asked with AskUserQuestion; the hook that records the
# answer recognises it by this prefix and these labels.
QUESTION_PREFIX = "maker: approve step "
APPROVE_LABEL = "Approve step {n}"
REJECT_LABEL = "Reject step {n}"
APPROVE_REST_LABEL = "Approve {n} and the rest"
"""In a ``/maker:run``: approve the step, and let policy ``auto`` approve the rest of
the run (a person's choice, recorded in the run)."""


def approval_question(n: int, title: str, note: str = "", in_run: bool = False
                      ) -> dict[str, Any]:
    """The AskUserQuestion input that asks the user to approve step ``n``; ``note`` is
    what they must not miss (``maker.handoff.measured.files_note``), said first.
    ``in_run``: asked by a ``/maker:run``, with a third answer (``APPROVE_REST_LABEL``)."""
    rest = [{"label": APPROVE_REST_LABEL.format(n=n),
             "description": "And policy auto for the rest of this run."}]
    return {"questions": [{
        "question": f"{QUESTION_PREFIX}{n} ({title[:80]})?" + (f" {note}." if note else ""),
        "header": f"Step {n}"[:12],
        "multiSelect": False,
        "options": [
            {"label": APPROVE_LABEL.format(n=n),
             "description": "It becomes complete."},
            *(rest if in_run else []),
            {"label": REJECT_LABEL.format(n=n),
             "description": "Back to pending; or Other: say what to change."},
        ]}]}


def hold_or_approve(store: PlanStore, plan: StoredPlan, record: StepRecord,
                    handoff: dict[str, Any]) -> str:
    """For a step whose complete handoff (``handoff``, as written) was just accepted:
    complete it if the policy approves it, else hold it for approval. Returns the
    step's new status."""
    from maker.executor.state.lifecycle import set_status

    policy = read_policy(store)
    now = utc_now()
    if review_need(store, record, policy.name, handoff).route == "policy":
        from maker.executor.state.run import run_policy

        by = "policy:auto" + (" (the user's choice for this run)" if run_policy(store) else "")
        set_status(store, record.number, "complete",
                   {"finished_at": now, "handoff_accepted_at": now,
                    "approved_at": now, "approved_by": by}, plan=plan)
        return "complete"
    set_status(store, record.number, AWAITING, {"handoff_accepted_at": now, **skip_meta()},
               plan=plan)
    return AWAITING


def _awaiting(store: PlanStore, n: int) -> tuple[StoredPlan, StepRecord]:
    plan = store.load()
    record = plan.get(n)
    if not is_awaiting(record):
        raise TransitionError(
            f"step {n} is {record.status} and is not awaiting approval; only a step whose "
            "complete handoff was accepted can be approved or rejected", n)
    return plan, record


def approve_step(store: PlanStore, n: int, by: str) -> StepRecord:
    """Complete step ``n`` (awaiting approval), approved by ``by``. Raises
    TransitionError otherwise, and ReviewMissingError for a large step without its
    review (unless a person skipped it: ``STEP_SKIP_REVIEW=1``)."""
    from maker.executor.acceptance.review import latest_review
    from maker.executor.state.lifecycle import set_status

    with store.lock():
        plan, record = _awaiting(store, n)
        need = review_need(store, record, read_policy(store).name)
        if need.reasons and not need.skipped and latest_review(store, record) is None:
            raise ReviewMissingError(
                f"step {n} needs the independent review first ({need.why()}). Launch the "
                "maker:reviewer subagent for it, then approve (or set STEP_SKIP_REVIEW=1 "
                "to decide without it).")
        return set_status(store, n, "complete", {"approved_at": utc_now(), "approved_by": by},
                          plan=plan)


@dataclass(frozen=True)
class RejectResult:
    step: int
    notes: str
    archived: Any


def reject_step(store: PlanStore, n: int, notes: str = "", from_review: bool = False,
                by: str = "user") -> RejectResult:
    """Send step ``n`` back to pending with revision notes; its handoff is kept aside.

    ``from_review`` takes the notes from the recorded review's findings. The step's
    revision record (where its changes are measured from, its review rounds) is kept:
    it goes on with the same work.
    """
    from maker.executor.acceptance.review import findings_for_notes, latest_review
    from maker.executor.state.lifecycle import reset_step

    with store.lock():
        _, record = _awaiting(store, n)
        if from_review:
            review = latest_review(store, record)
            if review is None:
                raise ReviewMissingError(f"step {n} has no recorded review to send back")
            notes = "\n".join(x for x in ("The independent reviewer's findings:\n"
                                           + findings_for_notes(review), notes.strip()) if x)
        kept = {k: record.meta[k] for k in REVISION_META if k in record.meta}
        result = reset_step(store, n)
        record = store.load().get(n)
        record.meta.update(kept)
        history = list(record.meta.get("revision_notes") or [])
        history.append(notes.strip() or f"rejected by {by} (no notes given)")
        record.meta["revision_notes"] = history
        record.meta["rejected_by"] = by
        store.save_step(record)
        return RejectResult(n, history[-1], result.archived_handoff)


def adopt_approvals(store: PlanStore, by: str) -> list[StepRecord]:
    """Re-seal, with this machine's key, the approvals of complete steps that carry none
    valid here (a plan approved on another machine). A person's act: ``by`` says who.
    Returns the steps adopted."""

    adopted = []
    with store.lock():
        plan = store.load(check_approvals=False)
        for shared in plan.steps:
            if shared.status != "complete" or approval_sealed(shared, plan.created_at):
                continue
            record = plan.get(shared.number)
            before = str(record.meta.get("approved_by") or "no approval recorded")
            record.meta["approved_by"] = f"{before} (adopted by {by})"
            record.meta["approved_at"] = record.meta.get("approved_at") or utc_now()
            seal_approval(record, plan.created_at)
            store.save_step(record)
            adopted.append(record)
    return adopted
