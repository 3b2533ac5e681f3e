"""Moving a step through its statuses: start, fail, reset, and the allowed transitions.

    pending ──start──▶ in-progress ──handoff──▶ awaiting-approval ──approve──▶ complete
       ▲                    │        └─────────▶ blocked | failed          │
       └───────reset────────┴──────────reset (or reject)───────────────────┘

One step is in progress at a time. Every change happens under the plan lock, and
``plans/.maker/active.json`` names the step in progress so the hooks can find it
without loading the plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.bounded import read_text_file
from maker.core.clock import file_stamp, utc_now
from maker.errors import DependencyError, StepError, TransitionError
from maker.executor.rules.instructions import decide_hint
from maker.executor.state.kept_work import clear_attempt
from maker.executor.state.schedule import (
    SKIPPED,
    Schedule,
    decided_next,
    decision_outputs,
    nothing_ready_reason,
    plan_schedule,
    unmet_dependencies,
)
from maker.store.records import in_progress, occupying
from maker.store.step_file import ATTEMPT_META, REVISION_META

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = [
    "ALLOWED_TRANSITIONS",
    "ResetResult",
    "StartResult",
    "default_step",
    "check_transition",
    "fail_step",
    "flush_overview",
    "reset_step",
    "set_status",
    "start_step",
]

ALLOWED_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "pending": ("in-progress",),
    "in-progress": ("awaiting-approval", "complete", "blocked", "failed"),
    "awaiting-approval": ("complete",),
    "complete": (),
    "blocked": (),
    "failed": (),
}


@dataclass(frozen=True)
class StartResult:
    """A started (or resumed) step."""

    step: int
    title: str
    started_at: str
    restarted: bool = False  # it was already in progress: nothing changed
    forced: bool = False
    overridden: dict[int, str] = field(default_factory=dict)  # unmet deps --force ignored

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "title": self.title, "started_at": self.started_at,
                "restarted": self.restarted, "forced": self.forced,
                "overridden": {str(k): v for k, v in self.overridden.items()}}


@dataclass(frozen=True)
class ResetResult:
    """A step put back to pending, and where its old handoff went (if it had one)."""

    step: int
    previous_status: str
    archived_handoff: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "previous_status": self.previous_status,
                "archived_handoff": str(self.archived_handoff) if self.archived_handoff
                else None}


def check_transition(record: StepRecord, to: str) -> None:
    """Raise TransitionError unless ``record`` may move to status ``to``."""
    now = record.status
    if to == now or to in ALLOWED_TRANSITIONS.get(now, ()):
        return
    allowed = ALLOWED_TRANSITIONS.get(now, ())
    moves = ", ".join(allowed) if allowed else "none"
    hint = (f"; `maker step reset {record.number}` puts it back to pending"
            if now != "pending" else "; start it first with "
            f"`maker step start {record.number}`")
    raise TransitionError(
        f"step {record.number} cannot go from {now} to {to}: from {now} the allowed "
        f"moves are: {moves}{hint}", record.number)


def default_step(plan: StoredPlan, sched: Schedule) -> int:
    """The step a command means when it names none: the one in progress, else the first
    ready one. Raises StepError saying why nothing is ready."""
    running = in_progress(plan)
    if running:
        return running[0].number
    if sched.ready:
        return sched.ready[0]
    raise StepError(nothing_ready_reason(sched, plan))


def start_step(store: PlanStore, n: int | None = None, force: bool = False,
               session_id: str | None = None, take_over: bool = False) -> StartResult:
    """Mark step ``n`` in progress (its brief: ``maker.executor.launch.brief.build_brief``).

    With no ``n``: the step already in progress, else the first ready step.
    Starting the step that is already in progress changes nothing; a step another
    session owns only with ``take_over`` (the user's consent, or its owner is gone:
    ``maker.executor.votes.runs``). Raises DependencyError
    (unmet depends_on; ``force`` overrides and records the override in the step's
    front matter), StepError (another step is in progress, nothing is ready, or the
    step is on a branch not taken),
    TransitionError (the step is complete, blocked or failed: reset it first) and
    StepNotFoundError.
    """
    with store.lock():
        plan = store.load()
        running = occupying(plan)
        sched = plan_schedule(store, plan)
        if n is None:
            n = default_step(plan, sched)
        record = plan.get(n)
        if record.status == "in-progress":
            return _resume(store, plan, record, session_id, take_over)
        if running and running[0].status == "awaiting-approval":
            other = running[0]
            raise StepError(
                f"step {other.number} ({other.title}) is done and awaits approval first: "
                f"{decide_hint(other.number)}", n)
        if running:
            other = running[0]
            raise StepError(
                f"step {other.number} ({other.title}) is already in progress, and maker runs "
                f"one step at a time: finish it with a handoff, or put it back with "
                f"`maker step reset {other.number}`", n)
        check_transition(record, "in-progress")
        missing = unmet_dependencies(record, sched.statuses)
        skipped = sched.statuses[n] == SKIPPED
        if not force:
            if missing:
                raise DependencyError(n, missing)
            if skipped:
                raise StepError(_branch_not_taken(store, plan, n), n)
        started = utc_now()
        record.status = "in-progress"
        clear_attempt(store, record, ATTEMPT_META)  # (a wave step's work kept first)
        record.meta["started_at"] = started
        record.meta["started_by"] = session_id or "cli"
        _measure_from_now(store, record)
        overridden = dict(missing)
        if force and (missing or skipped):
            record.meta["forced"] = True
            over = [f"step {d} was {s}" for d, s in sorted(missing.items())]
            if skipped:
                over.append(f"step {n} was on a branch not taken")
            record.meta["forced_over"] = over
        store.save_step(record)
        store.write_active({"step": n, "started_at": started, "session_id": session_id,
                            "attempts": {}})
        refresh_overview(store, plan)
        return StartResult(n, record.title, started,
                           forced=bool(force and (missing or skipped)), overridden=overridden)


def _measure_from_now(store: PlanStore, record: StepRecord) -> None:
    """Record the tree the step's changes are measured from (``maker.handoff.measured``);
    a step sent back for revision keeps the one it first started from."""
    from maker.handoff.measured import MEASURE_KEY, measure_start

    if not record.meta.get(MEASURE_KEY):
        tree = measure_start(store, record.number)
        if tree:
            record.meta[MEASURE_KEY] = tree


def _resume(store: PlanStore, plan: StoredPlan, record: StepRecord,
            session_id: str | None, take_over: bool = False) -> StartResult:
    started = str(record.meta.get("started_at") or "")
    active = store.read_active()
    owner = (active or {}).get("session_id") if (active or {}).get("step") == record.number \
        else None
    if owner and session_id and owner != session_id and not take_over:
        from maker.executor.state.owner import take_over_instruction

        raise StepError(
            f"step {record.number} ({record.title}) is in progress in another Claude Code "
            f"session ({owner}); maker runs one step at a time. "
            f"{take_over_instruction(record.number)}", record.number)
    if owner and not session_id and not take_over:
        session_id = owner  # a shell asking for the brief again does not take it over
    if record.meta.get("worktree") and (active or {}).get("wave"):
        pass  # (one of a wave: the marker names them all)
    elif not active or active.get("step") != record.number:
        store.write_active({"step": record.number, "started_at": started or utc_now(),
                            "session_id": session_id, "attempts": {}})
    elif (session_id or take_over) and active.get("session_id") != session_id:
        store.write_active(dict(active, session_id=session_id))
    return StartResult(record.number, record.title, started, restarted=True,
                       forced=bool(record.meta.get("forced")))


def _branch_not_taken(store: PlanStore, plan: StoredPlan, n: int) -> str:
    outputs = decision_outputs(store, plan)
    chose = [f"step {r.number} chose step {decided_next(r, outputs)}" for r in plan.steps
             if r.number < n and r.spec.is_conditional and r.status == "complete"
             and decided_next(r, outputs) is not None]
    why = f" ({'; '.join(chose)})" if chose else ""
    return (f"step {n} is on a branch the plan did not take{why}: it is skipped. "
            f"Start it anyway with `maker step start {n} --force`")


def set_status(store: PlanStore, n: int, status: str, meta: dict[str, Any] | None = None,
               plan: StoredPlan | None = None) -> StepRecord:
    """Move step ``n`` to ``status`` within the allowed transitions; returns the record.

    Setting the status a step already has only updates ``meta``. Leaving
    in-progress clears active.json (when it names this step). ``plan``, when
    given, is a plan the caller loaded under the lock; it is updated in place.
    Raises TransitionError and StepNotFoundError.
    """
    with store.lock():
        plan = plan or store.load()
        record = plan.get(n)
        check_transition(record, status)
        record.status = status
        record.meta.update(meta or {})
        if status == "complete" and record.number is not None:
            from maker.store.approval_seal import seal_approval

            if not record.meta.get("approved_by") or not record.meta.get("approved_at"):
                raise TransitionError(
                    f"step {n} becomes complete only by an approval (approved_by, "
                    "approved_at): the user's, or their approval policy's", n)
            seal_approval(record, plan.created_at)
        if status in ("awaiting-approval", "complete", "blocked", "failed") \
                and "finished_at" not in (meta or {}):
            record.meta["finished_at"] = utc_now()
        store.save_step(record)
        if status != "in-progress":
            _clear_active(store, n)
        refresh_overview(store, plan)
        return record


def fail_step(store: PlanStore, n: int, reasons: Iterable[str] | str) -> StepRecord:
    """Record step ``n`` as failed with ``reasons`` (kept in its front matter).

    For the hooks' bounded retries, and ``maker step fail``. Failing a failed step
    again replaces its reasons. Raises TransitionError (the step is not in
    progress) and StepNotFoundError.
    """
    listed = [reasons] if isinstance(reasons, str) else [str(r) for r in reasons]
    listed = [r for r in (r.strip() for r in listed) if r] or ["no reason given"]
    now = utc_now()
    return set_status(store, n, "failed", {"reasons": listed, "failed_at": now,
                                           "finished_at": now})


def reset_step(store: PlanStore, n: int) -> ResetResult:
    """Put step ``n`` back to pending, whatever its status.

    Its handoff, if any, is moved to ``plans/handoffs/reset/`` (nothing is lost),
    and active.json is cleared when it named this step. Raises StepNotFoundError, and
    StepError while a step that depends on it is in progress (it would be running on
    an output that no longer counts).
    """
    with store.lock():
        plan = store.load()
        record = plan.get(n)
        users = [r for r in in_progress(plan) if n in r.depends_on and r.number != n]
        if users:
            other = users[0]
            raise StepError(
                f"step {other.number} ({other.title}) is in progress and depends on step {n}: "
                f"reset step {other.number} first (`maker step reset {other.number}`)", n)
        previous = record.status
        archived = _archive_handoff(store, n)
        record.status = "pending"
        clear_attempt(store, record, ATTEMPT_META + REVISION_META)
        if previous != "pending" or archived:
            attempt = int(record.meta.get("resets") or 0) + 1
            record.meta["resets"] = attempt
            if store.notes_path.is_file():  # what that attempt found is no longer current
                from maker.store.atomic import atomic_write
                from maker.store.notes import retire_attempt

                atomic_write(store.notes_path,
                             retire_attempt(read_text_file(store.notes_path), n, attempt))
        store.save_step(record)
        _clear_active(store, n)
        refresh_overview(store, plan)
        return ResetResult(n, previous, archived)


def _archive_handoff(store: PlanStore, n: int) -> Path | None:
    path = store.handoff_path(n)
    if not path.exists():
        return None
    from maker.store.journal import journaled_move

    target = path.parent / "reset" / f"{path.stem}.{file_stamp()}.md"
    journaled_move(path, target)
    return target


def _clear_active(store: PlanStore, n: int) -> None:
    from maker.core.paths import forget_step_tmp
    from maker.store.active import without_step
    active = store.read_active()
    if active is not None and (active.get("step") == n or n in (active.get("wave") or ())):
        store.write_active(without_step(active, n))
    forget_step_tmp(store.root, n)  # (its box's own /tmp: nothing of the step outlives it)


def refresh_overview(store: PlanStore, plan: StoredPlan, force: bool = False) -> None:
    """Rewrite PLAN.md with the statuses a person should read (skipped, awaiting approval).
    A store with ``overview_every`` set (the headless engine's) rewrites it at most that
    often, unless ``force``; :func:`flush_overview` writes what was held back."""
    if force or store.overview_due():
        store.refresh_overview(plan, dict(plan_schedule(store, plan).statuses))


def flush_overview(store: PlanStore) -> None:
    """PLAN.md rewritten from a full read (hand edits of the last second too) if ``store``
    holds changes back (``overview_every``), whatever ``overview_stale`` says: a rewrite
    undone with its transaction (an error, Ctrl-C) put back the PLAN.md of before."""
    if (store.overview_stale or store.overview_every) and store.exists():
        from maker.store.plan_store import PlanStore
        fresh = PlanStore(store.root)  # (not the store's kept plan: it may be a second old)
        with fresh.lock():
            refresh_overview(fresh, fresh.load(), force=True)
        store.overview_stale = False
