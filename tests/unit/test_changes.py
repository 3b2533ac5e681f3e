"""A store that keeps its plan between loads (the headless engine's: ``full_read_every``)
reads only what maker changed (maker.store.changes): it must see every change maker
makes, from this process or another, at once, and a hand edit within the window."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.step_plans import complete, handoff, linear
from maker.errors import PlanFileError, StepError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.state import lifecycle
from maker.store import changes, snapshot
from maker.store.plan_store import PlanStore

TOKEN = Path(".maker") / "generation"


def engine_store(root: Path) -> PlanStore:
    store = PlanStore(root)
    store.full_read_every = changes.FULL_EVERY
    return store


def view(store: PlanStore) -> Any:
    try:
        plan = store.load()
    except PlanFileError as exc:
        return ("problem", str(exc))
    return (plan.task, [(r.number, r.path.name, r.status, r.spec, r.depends_on, r.meta)
                        for r in plan.steps])


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = snapshot.read_step

    def counting(path: Path):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path)

    monkeypatch.setattr(snapshot, "read_step", counting)
    return seen


@pytest.fixture
def lists(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = snapshot.StepCache.listing

    def counting(cache: Any, folder: Path) -> Any:
        seen.append(folder)
        return real(cache, folder)

    monkeypatch.setattr(snapshot.StepCache, "listing", counting)
    return seen


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Move the kept store's idea of now forward."""
    real = snapshot.time.monotonic
    monkeypatch.setattr(snapshot.time, "monotonic", lambda: real() + seconds)


# -- the token ------------------------------------------------------------------------


def test_a_transaction_that_changes_something_writes_a_new_token(project: Path) -> None:
    store = linear(project, 2)
    first = (store.root / TOKEN).read_text()
    with store.lock():
        pass  # changes nothing
    assert (store.root / TOKEN).read_text() == first
    lifecycle.start_step(store, 1)
    second = (store.root / TOKEN).read_text()
    assert second != first and len(second.strip()) == 32


def test_a_transaction_undone_by_an_error_writes_a_new_token(project: Path) -> None:
    """A reader elsewhere may have read its writes before the undo (test_kept_store)."""
    store = linear(project, 2)
    before = (store.root / TOKEN).read_text()
    with pytest.raises(RuntimeError), store.lock():
        record = store.load().get(1)
        record.status = "blocked"
        store.save_step(record)
        raise RuntimeError("cut short")
    assert (store.root / TOKEN).read_text() != before
    assert store.load().get(1).status == "pending"


def test_a_symlink_in_place_of_the_token_is_replaced_never_written_through(
        project: Path, tmp_path: Path) -> None:
    store = linear(project, 2)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me\n")
    (store.root / TOKEN).unlink()
    (store.root / TOKEN).symlink_to(target)
    lifecycle.start_step(store, 1)
    assert target.read_text() == "keep me\n"
    assert not (store.root / TOKEN).is_symlink()


def test_a_folder_in_place_of_the_token_costs_only_full_reads(project: Path) -> None:
    store = linear(project, 2)
    (store.root / TOKEN).unlink()
    (store.root / TOKEN).mkdir()
    kept = engine_store(store.root)
    kept.load()
    lifecycle.start_step(store, 1)  # commits, with no token to write
    assert changes.since(store.root, kept._snapshot.view) is None
    assert kept.load().get(1).status == "in-progress"


# -- what a kept store sees -------------------------------------------------------------


def test_its_own_change_is_read_alone(project: Path, parses: list[Path],
                                      lists: list[Path]) -> None:
    store = engine_store(linear(project, 4).root)
    store.load()
    parses.clear()
    lists.clear()
    lifecycle.start_step(store, 1)
    plan = store.load()
    assert plan.get(1).status == "in-progress"
    assert lists == []  # no folder listed: only the file that maker wrote was read
    assert parses == [plan.get(1).path]


def test_a_change_by_another_process_is_seen_at_once(project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    assert store.load().get(1).status == "pending"
    code = ("import sys; from pathlib import Path; from maker.executor.state import lifecycle; "
            "from maker.store.plan_store import PlanStore; "
            "lifecycle.start_step(PlanStore(Path(sys.argv[1])), 1)")
    subprocess.run([sys.executable, "-c", code, str(store.root)], check=True,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert store.load().get(1).status == "in-progress"  # (well within the window)


def test_a_load_inside_a_transaction_sees_its_writes_and_then_their_undoing(
        project: Path) -> None:
    store = engine_store(linear(project, 2).root)
    store.load()
    with pytest.raises(RuntimeError), store.lock():
        record = store.load().get(2)
        record.status = "blocked"
        store.save_step(record)
        assert store.load().get(2).status == "blocked"
        raise RuntimeError("cut short")
    assert store.load().get(2).status == "pending"


def test_a_hand_edit_is_seen_once_the_window_has_passed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = engine_store(linear(project, 2).root)
    path = store.load().get(2).path
    path.write_text(path.read_text().replace("Step number 2", "Step by hand"))
    _later(monkeypatch, changes.FULL_EVERY)
    assert store.load().get(2).title == "Step by hand"


def test_a_forged_approval_is_refused_once_the_window_has_passed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = engine_store(linear(project, 2).root)
    path = store.load().get(1).path
    path.write_text(path.read_text().replace("status: pending", "status: complete"))
    _later(monkeypatch, changes.FULL_EVERY)
    with pytest.raises(PlanFileError, match="maker holds no approval of it"):
        store.load()


def test_a_default_store_reads_every_file_every_time(project: Path) -> None:
    store = PlanStore(linear(project, 2).root)
    path = store.load().get(2).path
    path.write_text(path.read_text().replace("Step number 2", "Step by hand"))
    assert store.load().get(2).title == "Step by hand"  # no window


def test_the_kept_records_cannot_be_changed_in_place(project: Path) -> None:
    store = engine_store(linear(project, 2).root)
    store.load()  # (the first load's records are its own: it parsed them)
    plan = store.load()
    with pytest.raises(AttributeError, match="change the copy that StoredPlan.get"):
        plan.steps[0].status = "complete"
    mine = plan.get(1)
    mine.status = "blocked"
    assert plan.steps[0] is mine and store.load().get(1).status == "pending"


def test_the_handoff_heads_follow_the_handoffs(project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    read = lambda p: p.read_text()[:40]  # noqa: E731
    assert store.handoff_heads(read) == {}
    complete(store, 1)
    heads = store.handoff_heads(read)
    assert list(heads) == [store.load().get(1).path.name]
    complete(store, 2, output={"result": "two"})
    assert len(store.handoff_heads(read)) == 2
    lifecycle.reset_step(store, 2)  # its handoff moves away
    assert list(store.handoff_heads(read)) == [store.load().get(1).path.name]


# -- a kept store and a fresh one agree, whatever maker does -----------------------------


_MAKER_OPS = st.sampled_from(["start", "accept", "reset", "fail", "undone", "other",
                              "hand", "window"])


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(ops=st.lists(st.tuples(_MAKER_OPS, st.integers(1, 3)), min_size=1, max_size=10))
def test_a_kept_store_loads_what_a_fresh_store_loads_after_maker_changes(
        tmp_path_factory: Any, ops: list[tuple[str, int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        root = linear(tmp_path_factory.mktemp("plan"), 3).root
        kept = engine_store(root)
        hand_edited = False
        for op, n in ops:
            writer = PlanStore(root)  # (a second store: its writes are maker's too)
            try:
                if op == "start":
                    lifecycle.start_step(writer, n, force=True)
                elif op == "accept":
                    accept_handoff(writer, handoff(n))
                elif op == "reset":
                    lifecycle.reset_step(writer, n)
                elif op == "fail":
                    lifecycle.fail_step(writer, n, "no")
                elif op == "undone":
                    with writer.lock():
                        record = writer.load().get(n)
                        record.meta["note"] = "never"
                        writer.save_step(record)
                        raise RuntimeError("undone")
                elif op == "other":  # another maker process: its file, then its token
                    path = PlanStore(root).load().get(n).path
                    path.write_text(path.read_text().replace("title: Step", "title: Else"))
                    (root / TOKEN).write_text(os.urandom(16).hex() + "\n")
                elif op == "hand":
                    path = PlanStore(root).load().get(n).path
                    path.write_text(path.read_text().replace("title: Step", "title: Hand"))
                    hand_edited = True
                else:  # the window passes
                    _later(patch, changes.FULL_EVERY)
                    hand_edited = False
            except (StepError, PlanFileError, RuntimeError):
                pass
            except Exception as exc:  # a gate refusal is a MakerError
                if not type(exc).__module__.startswith("maker."):
                    raise
            if not hand_edited:
                assert view(kept) == view(PlanStore(root)), (op, n)


def test_a_change_by_another_process_before_one_of_ours_is_seen(project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    store.load()
    mine = store.load().get(1)
    path = store.load().get(3).path  # another maker process: its file, then its token
    path.write_text(path.read_text().replace("title: Step", "title: Else"))
    (store.root / TOKEN).write_text(os.urandom(16).hex() + "\n")
    mine.status = "blocked"
    store.save_step(mine)  # then a change of ours (read nothing), before the kept load
    plan = store.load()
    assert plan.get(1).status == "blocked" and plan.get(3).title.startswith("Else")


def test_an_undone_interrupted_change_means_a_full_read(project: Path) -> None:
    store = engine_store(linear(project, 2).root)
    store.load()
    txn = store.root / ".maker" / "txn"
    txn.mkdir(parents=True)
    (txn / "journal.json").write_text('[{"kind": "file", "path": "stray.md", "backup": null}]')
    with store.lock():
        assert changes.since(store.root, store._snapshot.view) is None
