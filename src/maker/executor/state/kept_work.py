"""A worktree step's work, kept before maker forgets its worktree: its tree
id in the step's ``unlanded`` (``git checkout <id> -- .`` brings it back). Nothing is
lost when a step is reset, started again, or fails with its worktree removed.

Apart from ``maker.executor.parallel.worktree_step`` (which starts, remakes and prunes the
worktrees) so that ``maker.executor.state.lifecycle`` can call it without the two importing
each other.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from maker.errors import StepError, WorktreeError
from maker.store.workspace import READY_KEY, worktree_of
from maker.tools.git import worktrees

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["clear_attempt", "kept", "plans_inside"]


def plans_inside(store: PlanStore) -> str:
    """The plans folder relative to the project (left out of every worktree), or "."
    when it is not inside the project."""
    rel = os.path.relpath(store.root.resolve(), store.project.resolve())
    return "." if rel.startswith("..") else rel


def clear_attempt(store: PlanStore, record: StepRecord, keys: tuple[str, ...]) -> None:
    """Forget ``record``'s attempt (``keys`` of its front matter: a reset, a new start),
    its worktree's work first kept in ``unlanded`` (see :func:`kept`); the caller
    saves the record, in the same transaction."""
    path = worktree_of(store, record)
    if path is not None and record.meta.get(READY_KEY) and kept(store, record, path) is None:
        raise StepError(f"maker cannot read step {record.number}'s worktree {path} with git "
                        "to keep its work, so it does not forget it. Copy what you need "
                        "from that folder and remove it, then try again", record.number)
    for key in keys:
        record.meta.pop(key, None)


def kept(store: PlanStore, record: StepRecord, entry: Path) -> bool | None:
    """Before a worktree no step needs goes (its step failed, was reset or started
    again): its work, as a tree id added to ``record``'s ``unlanded`` (``git checkout
    <id> -- .`` brings it back), unless it holds none (as its base). Nothing is lost.
    Whether ``record`` changed; None when git cannot read the worktree, or maker runs
    no git there (the caller keeps the folder: the work is nowhere else)."""
    base = record.meta.get("measured_from")
    if not worktrees.is_worktree(entry):
        return False
    rel = plans_inside(store)
    try:
        tree = worktrees.snapshot(entry, exclude=rel if rel != "." else None)
    except WorktreeError:
        tree = None  # (maker runs no git there: the folder is kept all the same)
    if not tree:
        return None
    listed = list(record.meta.get("unlanded") or [])
    if tree in listed or tree == base:
        return False
    record.meta["unlanded"] = [*listed[-9:], tree]
    return True
