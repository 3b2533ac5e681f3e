"""QA pass 13: a store that keeps its plan between loads (the engine's, ``full_read_every``)
loads what a fresh ``PlanStore(root).load()`` loads: after a change by maker (any
process) at once, after a hand edit once the window has passed (maker.store.changes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from maker.executor import lifecycle
from maker.store import changes, snapshot
from maker.store.plan_store import PlanStore

from ._step_plans import isolated_project, linear  # noqa: F401 - `project`

TOKEN = Path(".maker") / "generation"


def engine_store(root: Path) -> PlanStore:
    store = PlanStore(root)
    store.full_read_every = changes.FULL_EVERY
    return store


def _another_process_retitles(root: Path, n: int) -> None:
    """What another maker process's commit leaves: step ``n``'s file changed, a new token."""
    path = PlanStore(root).load().get(n).path
    path.write_text(path.read_text().replace("title: Step", "title: Else"))
    (root / TOKEN).write_text(os.urandom(16).hex() + "\n")


def test_a_commit_by_another_process_during_a_quick_load_is_seen_by_the_next(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = linear(project, 3).root
    kept = engine_store(root)
    kept.load()
    lifecycle.start_step(PlanStore(root), 1)  # a change of ours: the next load is quick
    real = snapshot.stat_stamp
    commits: list[int] = []

    def meanwhile(path: Path) -> Any:  # while the quick load re-reads step 1's file
        if not commits:
            commits.append(1)
            _another_process_retitles(root, 3)
        return real(path)

    monkeypatch.setattr(snapshot, "stat_stamp", meanwhile)
    kept.load()
    monkeypatch.setattr(snapshot, "stat_stamp", real)
    assert commits
    assert kept.load().get(3).title == "Else number 3"  # (a fresh store's)
