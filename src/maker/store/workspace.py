"""Where a step works: the project, or, for a step run beside others, the git
worktree maker made for it (``maker.executor.parallel.worktree_step``), named in its front
matter until its change is brought back (``maker.executor.parallel.land``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["BASE_KEY", "LANDED_KEY", "READY_KEY", "WORKTREE_KEY", "step_project",
           "worktree_of"]

WORKTREE_KEY = "worktree"  # the step's worktree, relative to the plans folder
BASE_KEY = "worktree_base"  # the commit it was cut from
READY_KEY = "worktree_ready"  # the worktree was made whole (a kill before: made again)
LANDED_KEY = "landed_at"  # its change was brought into the main checkout


def worktree_of(store: PlanStore, record: StepRecord) -> Path | None:
    """The folder step ``record`` works in when it runs beside others, else None."""
    rel = record.meta.get(WORKTREE_KEY)
    if not isinstance(rel, str) or not rel or record.meta.get(LANDED_KEY):
        return None
    parts = Path(rel).parts
    if len(parts) != 3 or parts[:2] != (".maker", "worktrees") or ".." in parts:
        return None  # (a hand edit: not a folder maker made)
    return store.root / rel


def step_project(store: PlanStore, record: StepRecord) -> Path:
    """Where step ``record`` works and is verified: its worktree, else the project."""
    return worktree_of(store, record) or store.project
