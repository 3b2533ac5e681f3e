"""The long-lived store's cache (store/step_cache.py, store/snapshot.py):
a kept PlanStore must load what a fresh PlanStore(root).load() loads, whatever edits
happen and however the file system's clock ticks."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from maker.store import step_cache
from maker.store.plan_store import PlanStore

from ._step_plans import linear

TICK_NS = step_cache.SETTLED_NS  # a file system whose clock ticks in 2 s (FAT)


class CoarseClock:
    """Emulates a file system with coarse timestamps (FAT 2 s, ext3 and HFS+ 1 s, an
    older kernel's jiffy): a file's times are floored to ``TICK_NS``, so two writes in
    one tick leave the same stamps; ``later(s)`` moves maker's idea of now forward."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.offset = 0
        self.jumps: list[tuple[int, int]] = []  # (real time of a jump, the offset after)
        real_listing = step_cache.StepCache.listing

        def emulated(real: int) -> int:  # the clock as it was when the file was written
            offset = 0
            for at, after in self.jumps:
                if real >= at:
                    offset = after
            return (real + offset) // TICK_NS * TICK_NS

        def floor(stamp: Any) -> Any:
            if stamp is None:
                return None
            ino, size, mtime, ctime = stamp
            return (ino, size, emulated(mtime), emulated(ctime))

        def listing(cache: step_cache.StepCache, folder: Path) -> Any:
            return [(n, p, floor(s)) for n, p, s in real_listing(cache, folder)]

        real_stamp = step_cache.stat_stamp
        real_ns = step_cache.time.time_ns
        monkeypatch.setattr(step_cache, "stat_stamp", lambda p: floor(real_stamp(p)))
        monkeypatch.setattr(step_cache.StepCache, "listing", listing)
        monkeypatch.setattr(step_cache.time, "time_ns", lambda: real_ns() + self.offset)
        self.real_ns = real_ns

    def early_in_tick(self) -> bool:
        """Whether the current tick began less than half a second ago (a test that
        starts then does not straddle two ticks)."""
        return self.real_ns() % TICK_NS < 5 * 10**8

    def later(self, seconds: float) -> None:
        """Move the clock forward: maker's now, and the times of the files written
        from now on."""
        self.offset += int(seconds * 10**9)
        self.jumps.append((self.real_ns(), self.offset))


def _statuses_titles(store: PlanStore) -> list[tuple[int, str, str]]:
    return [(r.number, r.status, r.spec.title) for r in store.load().steps]


def test_a_same_size_edit_in_the_tick_of_a_load_is_seen_once_the_file_settles(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A load parses step 2 and keeps it while its stamp is recent (bytes compared);
    a same-size edit in the same clock tick keeps the stamp; once the stamp is older
    than the tick, the kept store trusted it and handed out the old step for ever."""
    clock = CoarseClock(monkeypatch)
    while not clock.early_in_tick():
        time.sleep(0.05)
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

from ._step_plans import complete  # noqa: E402

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
    if op == "later":
        clock.later(1 + i % 3)
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
        _edits(CoarseClock(patch), tmp_path_factory, ops)


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
