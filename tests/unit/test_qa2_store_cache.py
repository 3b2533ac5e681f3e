"""QA pass 2 on the long-lived store's cache (store/step_cache.py, store/snapshot.py):
a kept PlanStore must load what a fresh PlanStore(root).load() loads, whatever edits
happen and however the file system's clock ticks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from maker.store import step_cache
from maker.store.plan_store import PlanStore

from ._step_plans import isolated_project, linear  # noqa: F401 - `project`

TICK_NS = step_cache.SETTLED_NS  # a file system whose clock ticks in 2 s (FAT)


class CoarseClock:
    """Emulates a file system with coarse timestamps (FAT 2 s, ext3 and HFS+ 1 s, an
    older kernel's jiffy): a file's times are floored to ``TICK_NS``, so two writes in
    one tick leave the same stamps; ``later(s)`` moves maker's idea of now forward."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.offset = 0
        real_listing = step_cache.StepCache.listing

        def floor(stamp: Any) -> Any:
            if stamp is None:
                return None
            ino, size, mtime, ctime = stamp
            return (ino, size, mtime // TICK_NS * TICK_NS, ctime // TICK_NS * TICK_NS)

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
        self.offset += int(seconds * 10**9)


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
