"""Starting a step in a worktree of its own, making that worktree whole again, and
removing the ones no step needs.

Each change happens under the plan lock, one after another (no two ``git worktree add``
race on git's lock files). The step file and the new worktree are made in one
transaction of the plan lock: a kill before it commits puts the step file back, and the
worktree it was making (whole or half) is a folder no step names: an orphan, which
:func:`prune_worktrees` removes (with git's record of it). A step whose file names a
worktree that is not whole (``worktree_ready`` unset, or the folder gone) gets it made
again from its recorded base by :func:`ensure_worktree`. A worktree a step no longer
needs (its old one, after a new base) is removed only once the transaction that gives
the step its new one has committed: a kill before leaves the old state whole, the old
worktree and the step's work in it included.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from maker.core.clock import utc_now
from maker.errors import StepError
from maker.executor.parallel.waves import together
from maker.executor.state.kept_work import clear_attempt, kept, plans_inside
from maker.store.records import occupying
from maker.store.step_file import ATTEMPT_META
from maker.store.workspace import BASE_KEY, LANDED_KEY, READY_KEY, WORKTREE_KEY, worktree_of
from maker.tools.git import worktrees

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["ensure_worktree", "new_base", "on_new_base", "prune_worktrees",
           "start_in_worktree"]

def new_base(store: PlanStore, record: StepRecord) -> None:
    """Give ``record`` a new base (the main checkout as it is now) and a new worktree
    folder name; the caller saves it, then :func:`ensure_worktree` makes the folder."""
    rel = plans_inside(store)
    commit, tree = worktrees.base_commit(store.project, exclude=rel if rel != "." else "")
    record.meta[WORKTREE_KEY] = os.path.join(worktrees.WORKTREES, f"step-{record.number}-"
                                             f"{commit[:12]}")
    record.meta[BASE_KEY] = commit
    record.meta["measured_from"] = tree
    record.meta.pop(READY_KEY, None)
    record.meta.pop(LANDED_KEY, None)


def start_in_worktree(store: PlanStore, n: int, session_id: str | None,
                      limit: int = 1 << 20) -> StepRecord:
    """Start ready step ``n`` in a worktree of its own, beside the worktree steps
    already in progress (it must be able to run with them: ``waves.together``); a step
    already in progress in its worktree is resumed. Raises StepError, and
    ``WorktreeError`` when git cannot make the worktree."""
    from maker.executor.state.lifecycle import refresh_overview
    from maker.executor.state.schedule import plan_schedule
    from maker.store.settings import load_settings

    with store.lock():
        plan = store.load()
        record = plan.get(n)
        if record.status == "in-progress" and record.meta.get(WORKTREE_KEY):
            ensure_worktree(store, record)
            return record
        sched = plan_schedule(store, plan)
        if n not in sched.ready:
            raise StepError(f"step {n} ({record.title}) is not ready to start: "
                            f"it is {sched.statuses.get(n)}", n)
        busy = [r for r in occupying(plan) if not r.meta.get(LANDED_KEY)]
        if any(worktree_of(store, r) is None for r in busy):
            raise StepError(f"step {busy[0].number} runs in the main checkout: step {n} "
                            "waits for it", n)
        running = [r for r in busy if r.status == "in-progress"]
        if together(plan, sched, [n], load_settings(store.root).shared, limit,
                    running) != [n]:
            raise StepError(f"step {n} cannot run beside the steps in progress "
                            f"({', '.join(str(r.number) for r in running)})", n)
        record.status = "in-progress"
        clear_attempt(store, record, ATTEMPT_META)
        record.meta["started_at"] = utc_now()
        record.meta["started_by"] = session_id or "cli"
        new_base(store, record)
        store.save_step(record)  # (with the worktree, one transaction: see above)
        wave = sorted({r.number for r in running} | {n})
        runs = {str(r.number): str(r.meta.get("started_at") or "") for r in running}
        runs[str(n)] = record.meta["started_at"]
        store.write_active({"step": wave[0], "wave": wave, "started_at": runs[str(wave[0])],
                            "session_id": session_id, "attempts": {}, "runs": runs})
        ensure_worktree(store, record)
        refresh_overview(store, store.load())
        return record


def ensure_worktree(store: PlanStore, record: StepRecord) -> Path:
    """``record``'s worktree, made (again) from its base unless it is already whole.
    Call under the plan lock; saves the record when it makes the worktree."""
    path = worktree_of(store, record)
    base = record.meta.get(BASE_KEY)
    if path is None or not isinstance(base, str):
        raise StepError(f"step {record.number} has no worktree of its own", record.number)
    if record.meta.get(READY_KEY) and worktrees.is_worktree(path):
        return path
    worktrees.remove_worktree(store.project, path)  # (half made by a killed run)
    worktrees.add_worktree(store.project, path, base)
    record.meta[READY_KEY] = True
    store.save_step(record)
    return path


def on_new_base(store: PlanStore, n: int, why: str, kept: str | None = None,
                bound: int = 3) -> StepRecord:
    """Step ``n`` (in progress in its worktree) runs again from the main checkout as it
    is now: a new base and a new worktree; the old one's tree id is kept in
    ``unlanded`` (``kept``: nothing is lost). Past ``bound`` such runs the step fails
    with ``why``. Returns the record as saved."""
    from maker.executor.state.lifecycle import fail_step

    with store.lock():
        record = store.load_step(n)
        tries = int(record.meta.get("land_attempts") or 0) + 1
        if tries >= bound:
            return fail_step(store, n, f"{why} ({tries} runs on a new base; maker stops "
                                       "there)")
        old = worktree_of(store, record)
        record.meta["land_attempts"] = tries
        record.meta["land_failure"] = why
        if kept:
            record.meta["unlanded"] = [*list(record.meta.get("unlanded") or [])[-9:], kept]
        record.meta["started_at"] = utc_now()
        new_base(store, record)
        store.save_step(record)
        ensure_worktree(store, record)
    if old is not None and old != worktree_of(store, record):
        # (committed: only now is the old worktree no step's. The same base in the same
        # second names the same folder, made again just now: it stays.)
        with store.lock():
            worktrees.remove_worktree(store.project, old)
    return record


def prune_worktrees(store: PlanStore) -> list[str]:
    """Remove every worktree folder no step in progress or awaiting approval needs;
    returns the folders removed."""
    folder = store.root / worktrees.WORKTREES
    if not folder.is_dir():
        return []
    with store.lock():
        plan = store.load()
        needed = {str(store.root / r.meta[WORKTREE_KEY]) for r in plan.steps
                  if r.status in ("in-progress", "awaiting-approval")
                  and isinstance(r.meta.get(WORKTREE_KEY), str)
                  and not r.meta.get(LANDED_KEY)}
        named = {str(store.root / r.meta[WORKTREE_KEY]): r.number for r in plan.steps
                 if isinstance(r.meta.get(WORKTREE_KEY), str) and not r.meta.get(LANDED_KEY)}
        gone = []
        for entry in sorted(folder.iterdir()):
            if entry.name == ".gitignore" or str(entry) in needed:
                continue
            if entry.is_symlink() or not entry.is_dir():  # (a scratch file a kill left)
                entry.unlink(missing_ok=True)
                continue
            if str(entry) in named:  # (a failed or blocked step's: its work kept)
                record = store.load_step(named[str(entry)])  # (a copy of its own)
                done = kept(store, record, entry)
                if done is None:
                    continue  # (git cannot read it: the folder stays, with the work)
                if done:
                    store.save_step(record)
            worktrees.remove_worktree(store.project, entry)
            gone.append(entry.name)
        # (always: a kill inside `git worktree remove` leaves the folder gone and git's
        # record of it kept, which only a prune forgets)
        worktrees.prune(store.project)
        return gone
