"""A worktree step's change lands when its complete handoff arrives, in code
(``maker.executor.parallel.land_gate``): landed, sent to a new base on a conflict, or, when the
project's checks on the merged tree outlast what a hook may wait, undone and left to
``maker land N`` (the step's own verification record kept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.crash_wave_states import wave_conflict, wave_working
from harness.step_plans import handoff
from maker.executor.parallel.land_gate import land_before_accept
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of

COMPLETE = handoff(1, files_changed=["a/x.txt", "a/new/y.txt"])


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verification_off: None) -> None:
    monkeypatch.chdir(tmp_path)


def test_a_complete_handoff_lands_the_change_first(tmp_path: Path) -> None:
    store = wave_working(tmp_path)
    assert land_before_accept(store, 1, COMPLETE, 18.0) is None  # the gate goes on
    assert (tmp_path / "a" / "x.txt").read_text() == "one\n"
    assert (tmp_path / "a" / "new" / "y.txt").read_text() == "new\n"
    assert store.load_step(1).meta["landed_files"] == ["a/new/y.txt", "a/x.txt"]


def test_a_blocked_or_failed_handoff_lands_nothing(tmp_path: Path) -> None:
    store = wave_working(tmp_path)
    assert land_before_accept(store, 1, handoff(1, status="blocked"), 18.0) is None
    assert (tmp_path / "a" / "x.txt").read_text() == "a\n"
    assert not store.load_step(1).meta.get("landed_files")


def test_a_conflict_sends_the_step_to_a_new_worktree(tmp_path: Path) -> None:
    store = wave_conflict(tmp_path)
    said = land_before_accept(store, 1, COMPLETE, 18.0)
    assert said is not None and "could not land" in said and "a/x.txt" in said
    assert "new worktree" in said and "hand off again" in said
    assert (tmp_path / "a" / "x.txt").read_text() == "the person's\n"  # untouched
    assert worktree_of(store, store.load_step(1)) is not None


def test_checks_that_outlast_the_hook_leave_the_landing_to_maker_land(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store: PlanStore = wave_working(tmp_path)
    monkeypatch.setenv("TEST_CMD", "sleep 30")
    said = land_before_accept(store, 1, COMPLETE, 1.0)
    assert said is not None and "did not land" in said and "`maker land 1`" in said
    assert (tmp_path / "a" / "x.txt").read_text() == "a\n"  # undone
    assert not (tmp_path / "a" / "new").exists()
    record = store.load_step(1)
    assert not record.meta.get("landed_files") and not record.meta.get("land_attempts")
    assert worktree_of(store, record) is not None  # the same worktree: nothing to redo
    assert not (store.root / ".maker" / "landing.json").exists()
