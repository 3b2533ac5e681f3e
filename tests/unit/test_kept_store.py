"""A store that keeps its plan between loads (the engine's, ``full_read_every``)
loads what a fresh ``PlanStore(root).load()`` loads: after a change by maker (any
process) at once, after a hand edit once the window has passed (maker.store.changes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from harness.engine_fakes import ScriptedModel, parts, run
from harness.step_plans import complete, handoff, linear, make_step, write
from maker.engine.orchestrator import Orchestrator
from maker.errors import PlanFileError
from maker.executor.state import lifecycle
from maker.store import changes, snapshot
from maker.store.plan_store import PlanStore

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


def test_a_hand_edit_made_during_a_full_read_is_seen_a_window_after_it(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = linear(project, 3).root
    kept = engine_store(root)
    now = [1000.0]
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: now[0])
    first = PlanStore(root).load().get(1).path
    real = snapshot.read_step

    def slow(path: Path) -> Any:  # a long full read: step 1 is edited once it was read
        record = real(path)
        if path.name.startswith("02-") and now[0] == 1000.0:
            now[0] += 0.1
            first.write_text(first.read_text().replace("title: Step", "title: Hand"))
            now[0] += 0.5  # (the read goes on)
        return record

    monkeypatch.setattr(snapshot, "read_step", slow)
    kept.load()
    now[0] = 1000.1 + changes.FULL_EVERY  # the window, counted from the edit
    assert kept.load().get(1).title == "Hand number 1"


def test_a_handoff_of_no_step_is_in_the_handoff_heads_once_the_window_has_passed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.executor.launch.previous_work import _key, previous_handoff

    root = linear(project, 3).root
    kept = engine_store(root)
    complete(kept, 1)
    assert kept.handoff_heads(_key) == PlanStore(root).handoff_heads(_key)
    stray = root / "handoffs" / "03-old-title.md"  # by hand: no step file has that name
    stray.write_text("---\nstep: 3\naccepted_at: '2999-01-01T00:00:00Z'\n---\nMine.\n")
    real = snapshot.time.monotonic
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + changes.FULL_EVERY)
    for _ in range(2):  # (a second time: an edit of it is seen too)
        assert kept.handoff_heads(_key) == PlanStore(root).handoff_heads(_key)
        assert previous_handoff(kept, 2) == previous_handoff(PlanStore(root), 2)
        stray.write_text(stray.read_text().replace("2999", "2998") + "More.\n")
        monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + 2 * changes.FULL_EVERY)
    stray.unlink()
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + 3 * changes.FULL_EVERY)
    assert kept.handoff_heads(_key) == PlanStore(root).handoff_heads(_key)


def test_plan_md_is_brought_up_to_date_after_a_rewrite_of_it_was_undone(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PlanStore(linear(project, 3).root)
    store.overview_every = 3600.0  # (the engine's is shorter: the same, sooner)
    lifecycle.start_step(store, 1)  # written
    lifecycle.reset_step(store, 1)  # held back
    real = snapshot.time.monotonic
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + 7200)
    with pytest.raises(RuntimeError), store.lock():
        lifecycle.start_step(store, 2, force=True)  # due: PLAN.md rewritten...
        raise RuntimeError("cut short")  # ...and undone with the rest (Ctrl-C, a bug)
    lifecycle.flush_overview(store)  # as a run does when it ends
    shown = store.overview_path.read_text()
    fresh = PlanStore(store.root)
    lifecycle.refresh_overview(fresh, fresh.load(), force=True)
    assert "| in-progress |" not in shown
    assert shown == fresh.overview_path.read_text()


def test_a_run_with_no_plan_to_continue_leaves_no_plans_folder(project: Path) -> None:
    result = run(Orchestrator(PlanStore(project / "plans"), parts(ScriptedModel([]))))
    assert result.exit_code == 2
    assert not (project / "plans").exists()


_UNDONE_ELSEWHERE = """
import sys, time
from pathlib import Path
from maker.store.plan_store import PlanStore
store, flags = PlanStore(Path(sys.argv[1])), Path(sys.argv[2])
try:
    with store.lock():
        record = store.load().get(3)
        record.meta["note"] = "never"
        store.save_step(record)
        (flags / "written").write_text("")
        while not (flags / "undo").exists():
            time.sleep(0.01)
        raise RuntimeError("cut short")
except RuntimeError:
    pass
"""


def test_a_change_another_process_undid_after_a_full_read_saw_it_is_seen_undone(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys
    import time

    root = linear(project, 3).root
    kept = engine_store(root)
    flags = tmp_path / "flags"
    flags.mkdir()
    started: list[Any] = []
    real = changes.view

    def other_begins(where: Path) -> Any:  # just after the reader's settle() and view
        noted = real(where)
        if not started:
            started.append(subprocess.Popen(
                [sys.executable, "-c", _UNDONE_ELSEWHERE, str(root), str(flags)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}))
            deadline = time.monotonic() + 60
            while not (flags / "written").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return noted

    monkeypatch.setattr(changes, "view", other_begins)
    assert kept.load().get(3).meta.get("note") == "never"  # its write, not yet committed
    (flags / "undo").write_text("")
    assert started[0].wait(60) == 0
    assert PlanStore(root).load().get(3).meta.get("note") is None
    assert kept.load().get(3).meta.get("note") is None


def test_a_hand_edit_of_a_step_just_before_maker_changes_that_step_is_kept(
        project: Path) -> None:
    root = linear(project, 3).root
    kept = engine_store(root)
    path = kept.load().get(2).path
    path.write_text(path.read_text().replace("Do the work of step 2.", "Do it my way."))
    lifecycle.start_step(kept, 2, force=True)  # (within the window)
    assert PlanStore(root).load().get(2).spec.task_description == "Do it my way."


def test_plan_md_when_a_run_ends_shows_a_hand_edit_of_its_last_second(project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    store.overview_every = 1.0  # (as the engine's)
    lifecycle.start_step(store, 1)
    path = store.load().get(3).path
    path.write_text(path.read_text().replace("title: Step", "title: Renamed"))
    lifecycle.flush_overview(store)  # as a run does when it ends (within the window)
    shown = store.overview_path.read_text()
    fresh = PlanStore(store.root)
    lifecycle.refresh_overview(fresh, fresh.load(), force=True)
    assert "Renamed number 3" in shown
    assert shown == fresh.overview_path.read_text()


def test_a_handoff_edited_in_the_tick_of_its_write_is_in_the_heads_once_the_window_passed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system whose clock ticks coarsely, a same-size edit in place made in the
    tick of the write before it keeps every stamp (step_cache's "racily clean" files)."""
    from maker.executor.acceptance.accept import accept_handoff
    from maker.executor.launch.previous_work import _key

    root = linear(project, 3, policy="never").root
    kept = engine_store(root)
    lifecycle.start_step(kept, 1)
    accept_handoff(kept, handoff(1))  # awaiting approval: its handoff may be edited
    path = root / "handoffs" / kept.load().get(1).path.name
    assert kept.handoff_heads(_key) == PlanStore(root).handoff_heads(_key)
    stamps = os.stat(path)  # kept through the edit below, as a coarse clock keeps them
    real_stat, real_listing = os.stat, snapshot.StepCache.listing

    def coarse_stat(where: Any, *args: Any, **kwargs: Any) -> Any:
        return stamps if os.fspath(where) == os.fspath(path) else real_stat(where, *args,
                                                                             **kwargs)

    def coarse_listing(cache: Any, folder: Path) -> Any:
        return [(name, p, (stamps.st_ino, stamps.st_size, stamps.st_mtime_ns,
                           stamps.st_ctime_ns) if p == path else stamp)
                for name, p, stamp in real_listing(cache, folder)]

    monkeypatch.setattr(os, "stat", coarse_stat)
    monkeypatch.setattr(snapshot.StepCache, "listing", coarse_listing)
    text = path.read_text()
    with open(path, "r+", encoding="utf-8") as fh:  # in place, the same size
        fh.write(text.replace("accepted_at: '2", "accepted_at: '3", 1))
    real = snapshot.time.monotonic
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + changes.FULL_EVERY)
    assert PlanStore(root).handoff_heads(_key)[path.name][0].startswith("3")
    assert kept.handoff_heads(_key) == PlanStore(root).handoff_heads(_key)


def test_rendering_plan_md_reads_the_kept_records_without_copying_them(project: Path) -> None:
    from maker.store.overview import render_overview

    store = write(project, [make_step(1, 2), make_step(2, 3), make_step(3, -1,
                                                                        depends_on=[1, 2])])
    store.load()
    plan = store.load()
    before = list(plan.steps)
    assert "s1 -.-> s3" in render_overview(plan, store.root)
    assert all(a is b for a, b in zip(plan.steps, before, strict=True))


def test_a_hand_edit_of_a_steps_dependencies_just_before_maker_changes_it_is_refused(
        project: Path) -> None:
    root = linear(project, 3).root
    kept = engine_store(root)
    path = kept.load().get(3).path
    path.write_text(path.read_text().replace("depends_on:\n- 2", "depends_on:\n- 1"))
    with pytest.raises(PlanFileError, match="run the command again"):
        lifecycle.start_step(kept, 3, force=True)  # (within the window)
    assert PlanStore(root).load().get(3).depends_on == [1]  # kept, not written over
    assert kept.load().get(3).depends_on == [1]  # and read afresh next time


def test_a_hand_edit_of_plan_md_s_task_just_before_a_rewrite_is_kept(project: Path) -> None:
    root = linear(project, 3).root
    kept = engine_store(root)
    kept.load()
    overview = root / "PLAN.md"
    overview.write_text(overview.read_text().replace("task: Build the thing",
                                                     "task: Build it my way"))
    lifecycle.start_step(kept, 1)  # rewrites PLAN.md (within the window)
    assert "task: Build it my way" in overview.read_text()
    assert PlanStore(root).load().task == "Build it my way"
