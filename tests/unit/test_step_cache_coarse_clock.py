"""The long-lived store's cache (store/step_cache.py, store/snapshot.py):
a kept PlanStore must load what a fresh PlanStore(root).load() loads, whatever edits
happen and however the file system's clock ticks."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.step_plans import complete, linear
from maker.store import step_cache
from maker.store.plan_store import PlanStore

TICK_NS = step_cache.TICK_NS  # a file system whose clock ticks in 2 s (FAT)
LAG_NS = 5 * 10**6  # its clock behind maker's (a kernel's file clock: a jiffy or so)
_WINDOW_NS = 10**15  # real file times this long after a clock starts are the test's


class CoarseClock:
    """Emulates a file system with coarse timestamps (FAT 2 s, ext3 and HFS+ 1 s) on a
    clock that moves only when the test says so: no real time decides a verdict.

    maker's now (``time.time_ns`` as ``step_cache`` reads it) starts in the middle of a
    tick and moves only by ``later(s)``. A file written between two moves has the file
    system's time of that interval, maker's now less ``lag_ns`` (a kernel stamps files
    from a clock updated once a jiffy, behind the one maker reads), floored to
    ``TICK_NS``. The interval a write fell in is told from its real stamps against a
    barrier that ``later`` takes on the kernel's own file clock (a write before it is
    stamped at or before the barrier, one after it after), not against
    ``time.time_ns()``: the kernel's file times run up to a jiffy behind that, and a
    write made just after a move was taken for one made before it (the flaky failures
    of the property below). File times far from the test's (``os.utime`` to 2001, to
    2096) are floored and otherwise left as they are."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, where: Path, lag_ns: int = 0) -> None:
        self.lag_ns = lag_ns
        self._sentinel = where / ".coarse-clock"
        start = self._barrier()
        self.now = start // TICK_NS * TICK_NS + TICK_NS // 2
        self._moves = [(start, self.now)]  # (the barrier's file time, maker's now after)
        real_listing = step_cache.StepCache.listing
        real_stamp = step_cache.stat_stamp

        def floor(stamp: Any) -> Any:
            if stamp is None:
                return None
            ino, size, mtime, ctime = stamp
            return (ino, size, self._emulated(mtime), self._emulated(ctime))

        def listing(cache: step_cache.StepCache, folder: Path) -> Any:
            return [(n, p, floor(s)) for n, p, s in real_listing(cache, folder)]

        monkeypatch.setattr(step_cache, "stat_stamp", lambda p: floor(real_stamp(p)))
        monkeypatch.setattr(step_cache.StepCache, "listing", listing)
        monkeypatch.setattr(step_cache, "time", SimpleNamespace(time_ns=lambda: self.now))

    def _file_time(self) -> int:
        with open(self._sentinel, "wb") as fh:
            fh.write(b".")
        return os.stat(self._sentinel).st_mtime_ns

    def _barrier(self) -> int:
        """A file time after every file written so far, and at or before any written
        from now on (the kernel's file clock never goes back)."""
        first = self._file_time()
        while (at := self._file_time()) <= first:
            time.sleep(0.0001)
        return at

    def _emulated(self, real: int) -> int:
        start = self._moves[0][0]
        if not start <= real < start + _WINDOW_NS:
            return real // TICK_NS * TICK_NS
        now = next(now for at, now in reversed(self._moves) if real >= at)
        return (now - self.lag_ns) // TICK_NS * TICK_NS

    def later(self, seconds: float) -> None:
        """Move maker's now forward, and the file system's for the files written from
        now on."""
        at = self._barrier()
        self.now += round(seconds * 10**9)
        self._moves.append((at, self.now))


def _statuses_titles(store: PlanStore) -> list[tuple[int, str, str]]:
    return [(r.number, r.status, r.spec.title) for r in store.load().steps]


def test_a_same_size_edit_in_the_tick_of_a_load_is_seen_once_the_file_settles(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A load parses step 2 and keeps it while its stamp is recent (bytes compared);
    a same-size edit in the same clock tick keeps the stamp; once the stamp is settled
    (``step_cache.SETTLED_NS``), the kept store trusted it and handed out the old step for ever."""
    clock = CoarseClock(monkeypatch, project.parent)
    store = linear(project, 3)
    path = next(p for p in (project / "plans" / "steps").iterdir() if p.name.startswith("02"))
    kept = PlanStore(project / "plans")
    kept.load()
    text = path.read_text()
    assert "Step number 2" in text
    with open(path, "r+", encoding="utf-8") as fh:  # in place, same size, same tick
        fh.write(text.replace("Step number 2", "Step NUMBER 2"))
    assert step_cache.stat_stamp(path) is not None
    clock.later(60)  # the stamps are now "settled"
    fresh = _statuses_titles(PlanStore(project / "plans"))
    assert (2, "pending", "Step NUMBER 2") in fresh
    assert _statuses_titles(kept) == fresh
    assert store is not None


# -- a property: any sequence of edits, then the kept store agrees with a fresh one --------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from maker.errors import PlanFileError  # noqa: E402

_OPS = st.sampled_from(["title_same_size", "title_longer", "status_blocked_in_place",
                        "utime_past", "utime_future", "rename", "delete", "restore",
                        "symlink", "fifo", "garbage", "handoff_touch", "seal_flip",
                        "later", "later", "load"])


def _view(root: Path, store: PlanStore | None = None) -> Any:
    try:
        plan = (store or PlanStore(root)).load()
    except PlanFileError as exc:
        return ("problem", str(exc))
    return [(r.number, r.path.name, r.status, r.spec) for r in plan.steps]


def _apply(op: str, steps: Path, i: int, originals: dict[str, bytes], clock: CoarseClock,
           tmp: Path) -> None:
    files = sorted(p for p in steps.iterdir() if p.name.endswith(".md"))
    name = sorted(originals)[i % len(originals)]
    path = steps / name
    if op == "later":  # a moment (just past a tick, on a clock behind maker's), or seconds
        clock.later(i or 0.001)
        return
    if op == "restore":
        for p in files:
            if p.is_symlink() or not p.is_file():
                p.unlink()
        for n, data in originals.items():
            if not (steps / n).exists():
                (steps / n).write_bytes(data)
        return
    if not path.is_file() or path.is_symlink():
        return
    data = path.read_bytes()
    if op in ("title_same_size", "status_blocked_in_place", "seal_flip"):
        if op == "title_same_size":
            new = data.replace(b"Step number", b"Step NUMBER", 1) if b"Step number" in data \
                else data.replace(b"Step NUMBER", b"Step number", 1)
        elif op == "status_blocked_in_place":
            new = data.replace(b"status: pending", b"status: blocked", 1) \
                if b"status: pending" in data else data.replace(b"status: blocked",
                                                                 b"status: pending", 1)
        else:
            at = data.find(b"approval_seal: ")
            if at < 0:
                return
            at += len(b"approval_seal: ") + 3
            new = data[:at] + (b"0" if data[at:at + 1] != b"0" else b"1") + data[at + 1:]
        with open(path, "r+b") as fh:  # in place, same size
            fh.write(new)
    elif op == "title_longer":
        path.write_bytes(data.replace(b"title: ", b"title: X", 1))
    elif op == "utime_past":
        os.utime(path, ns=(10**18, 10**18))
    elif op == "utime_future":
        os.utime(path, ns=(4 * 10**18, 4 * 10**18))
    elif op == "rename":
        path.rename(steps / ("9" + name))
    elif op == "delete":
        path.unlink()
    elif op == "symlink":
        target = tmp / f"target-{name}"
        target.write_bytes(data)
        path.unlink()
        path.symlink_to(target)
    elif op == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif op == "garbage":
        path.write_bytes(b"---\nstep: [\n---\n")
    elif op == "handoff_touch":
        hand = steps.parent / "handoffs" / name
        if hand.is_file():
            with open(hand, "r+b") as fh:
                first = fh.read(1)
                fh.seek(0)
                fh.write(first)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(ops=st.lists(st.tuples(_OPS, st.integers(0, 3)), min_size=1, max_size=12))
def test_a_kept_store_loads_what_a_fresh_store_loads_after_any_edits(
        project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: Any,
        ops: list[tuple[str, int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:  # one clock per example, not stacked
        clock = CoarseClock(patch, tmp_path_factory.mktemp("clock"), LAG_NS)
        _edits(clock, tmp_path_factory, ops)


def _edits(clock: CoarseClock, tmp_path_factory: Any, ops: list[tuple[str, int]]) -> None:
    root_dir = tmp_path_factory.mktemp("plan")
    store = linear(root_dir, 3)
    complete(store, 1)  # a sealed, accepted step: its seal and handoff are checked
    root = root_dir / "plans"
    steps = root / "steps"
    originals = {p.name: p.read_bytes() for p in steps.iterdir()}
    kept = PlanStore(root)
    _view(root, kept)
    for op, i in ops:
        if op == "load":
            _view(root, kept)
            continue
        _apply(op, steps, i, originals, clock, tmp_path_factory.mktemp("t"))
        assert _view(root, kept) == _view(root), (op, i)


@pytest.mark.parametrize("edit", ["seal_flip", "title_same_size"])
def test_a_same_size_edit_just_after_a_load_found_the_stamp_settled_is_seen(
        project: Path, tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch,
        edit: str) -> None:
    """The file system's clock runs behind maker's (a kernel stamps a file from a clock
    it updates once a jiffy: up to 6 ms behind ``time.time_ns()`` where this was found).
    A load 2.001 s after the tick its files were stamped in found them settled and
    trusted their stamps from then on; a same-size edit a moment later was stamped in
    that same tick, kept the stamps, and was never seen (the seal flip: the flaky
    failure of the property above)."""
    clock = CoarseClock(monkeypatch, tmp_path_factory.mktemp("clock"), LAG_NS)
    # The plan is written in the middle of a tick; 1 s, then 1 ms later: 2.001 s after
    # the tick began (a load trusts the stamps); the edit; and a minute after.
    _edits(clock, tmp_path_factory, [("later", 1), ("later", 0), (edit, 0), ("later", 3),
                                     ("later", 3), ("load", 0)])
