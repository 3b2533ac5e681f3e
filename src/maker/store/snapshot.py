"""Reading the plan's step files: the full validation, and the plan a long-lived reader
validated last, checked again only where files changed.

``PlanStore.load()`` validates every step file and every approval seal. A run of the
headless engine loads a 1,000-step plan twice per step, and between two loads only a
step or two change. :class:`Snapshot` keeps the records of the last load that found no
problem, with the stamps of the files they came from (``StepCache.listing``). A later
load that lists the same file names re-reads and re-checks only the files whose stamps
moved (or that are too recent to trust a stamp: ``step_cache``), and only while each
re-checked step keeps its number and its dependencies; anything else (a file added,
removed or renamed, a problem, a step renumbered) goes back to the full validation,
which reports every problem. The records handed out are the kept ones, read-only all
the way down (``records.kept``): ``StoredPlan.get`` gives a caller its own copy to change.
The invariants, and the tests that hold them: ``tests/unit/test_kept_records.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maker.errors import PlanFileError
from maker.store.approval_seal import approval_sealed
from maker.store.records import copy_record, kept
from maker.store.step_cache import Stamp, StepCache, settled, stat_stamp
from maker.store.step_file import read_step

if TYPE_CHECKING:
    from pathlib import Path

    from maker.store.changes import View
    from maker.store.records import StepRecord

__all__ = ["Snapshot"]

Listing = list[tuple[str, "Path", "Stamp | None"]]
_MOVED = 4096  # handoff changes remembered, before what was derived is derived again


@dataclass
class _Last:
    root: Path
    names: tuple[str, ...]
    stamps: dict[str, Stamp | None]
    handoffs: dict[str, Stamp | None]
    created: str
    check_approvals: bool
    records: dict[str, StepRecord]  # by file name; kept, never handed out
    order: list[str]  # file names in step order
    paths: dict[int, Path]  # step number -> its file
    moved: list[str] = field(default_factory=list)  # handoffs changed since, in order
    index: dict[int, int] = field(default_factory=dict)  # step number -> position
    ordered: list[StepRecord] = field(default_factory=list)  # ``records`` in step order


class Snapshot:
    def __init__(self, cache: StepCache) -> None:
        self.cache = cache
        self._last: _Last | None = None
        self.view: View | None = None  # maker.store.changes: when the last full read began
        self.full_at = 0.0  # time.monotonic() of that read
        self._heads: dict[Callable[[Path], Any], tuple[_Last, list[str], dict[str, Any],
                                                       int, list[str], float]] = {}

    def current(self, created: str, check_approvals: bool, within: float) -> bool:
        """Whether the last plan loaded is one :meth:`quick` may bring up to date: a
        full read less than ``within`` seconds ago, of the same plan."""
        last = self._last
        return last is not None and last.created == created and \
            last.check_approvals == check_approvals and \
            time.monotonic() - self.full_at < within

    def quick(self, changed: frozenset[str], created: str) -> list[StepRecord] | None:
        """The plan's records in step order, after re-checking only the step files and
        handoffs in ``changed`` (paths relative to the plans folder, as
        ``changes.since`` names them); None when only the full validation can tell (a
        file added or removed, a problem, a step renumbered)."""
        last = self._last
        if last is None:
            return None
        for rel in sorted(changed, key=lambda r: not r.startswith("handoffs/")):
            folder, _, name = rel.partition("/")
            if "/" in name or not name.endswith(".md") or name.startswith("."):
                continue
            if folder == "steps":
                if name not in last.stamps:
                    return None
                path = last.records[name].path
                stamp = stat_stamp(path)
                if stamp is None or not self._update(name, path, stamp, created):
                    return None
            elif folder == "handoffs":
                stamp = stat_stamp(last.root / "handoffs" / name)
                if stamp is None:
                    last.handoffs.pop(name, None)
                else:
                    last.handoffs[name] = stamp
                last.moved.append(name)
                record = last.records.get(name)
                if record is not None and record.status == "complete" and \
                        not self._update(name, record.path, last.stamps[name], created):
                    return None
        return list(last.ordered)  # shared: StoredPlan.get copies

    def fresh(self, record: StepRecord) -> StepRecord:
        """The kept record of ``record``'s file as the file is now: read again if it
        changed since (a hand edit within the window). PlanFileError when only a full
        read can take the change (the step's number, its dependencies, a problem)."""
        last = self._last
        name = record.path.name
        if last is None or name not in last.records:
            return record
        stamp = stat_stamp(record.path)
        if stamp is not None and stamp == last.stamps.get(name) and \
                self.cache.trusted(record.path, stamp):
            return last.records[name]
        if stamp is None or not self._update(name, record.path, stamp, last.created):
            raise PlanFileError(record.path, "changed while maker was using the plan (a hand "
                                "edit?) in a way only a fresh read can take",
                                fix="run the command again: it reads the plan afresh")
        return last.records[name]

    def handoff_heads(self, compute: Callable[[Path], Any]) -> dict[str, Any] | None:
        """``{file name: compute(path)}`` for the handoff files of the last plan loaded,
        kept, and brought up to date for the handoffs that changed since (None when no
        plan was loaded)."""
        last = self._last
        if last is None:
            return None
        if len(last.moved) > _MOVED:
            last.moved = []  # (a new list: every kept result is computed afresh)
        memo = self._heads.get(compute)
        # Those whose stamps are recent are computed again at each full read (as long as
        # they are recent): a same-size edit in the tick of a write keeps the stamps
        # (step_cache's "racily clean" files), and only a full read promises to see a
        # hand edit.
        if memo is None or memo[0] is not last or memo[1] is not last.moved:
            recent = [name for name, stamp in last.handoffs.items()
                      if stamp is not None and not settled(stamp)]
            values = {name: self.cache.derived(last.root / "handoffs" / name, compute, stamp)
                      for name, stamp in last.handoffs.items() if stamp is not None}
        else:
            values = memo[2]
            full = memo[5] != self.full_at  # a full read since: the recent ones again
            again = dict.fromkeys([*last.moved[memo[3]:], *(memo[4] if full else ())])
            recent = [name for name in again if (stamp := last.handoffs.get(name)) is not None
                      and not settled(stamp)]  # (judged before the files are read)
            if not full:
                recent = [*dict.fromkeys([*memo[4], *recent])]
            for name in again:
                if last.handoffs.get(name) is None:
                    values.pop(name, None)
                else:
                    values[name] = compute(last.root / "handoffs" / name)
        self._heads[compute] = (last, last.moved, values, len(last.moved), recent,
                                self.full_at)
        return values

    def _update(self, name: str, path: Path, stamp: Stamp | None, created: str) -> bool:
        """Re-check one step file (its handoff's stamp as last known); False when only
        the full validation can tell."""
        last = self._last
        assert last is not None
        hand = last.handoffs.get(name)
        record = self._recheck(name, path, stamp, hand, created, last.check_approvals)
        before = last.records[name]
        if record is None or record.number != before.number or \
                record.depends_on != before.depends_on:
            self._last = None
            return False
        last.records[name], last.stamps[name] = kept(record), stamp  # (no one else has it)
        last.ordered[last.index[record.number]] = record
        return True

    def remember(self, root: Path, listing: Listing, handoffs: dict[str, Stamp | None],
                  created: str, check_approvals: bool, records: list[StepRecord]) -> None:
        """After a load that found no problem: ``records`` in step order."""
        mine = [kept(copy_record(r)) for r in records]
        self._last = _Last(root, tuple(n for n, _, _ in listing), {n: s for n, _, s in listing},
                           dict(handoffs), created, check_approvals,
                           {r.path.name: r for r in mine},
                           [r.path.name for r in records], {r.number: r.path for r in records},
                           index={r.number: i for i, r in enumerate(records)}, ordered=mine)

    def index(self) -> dict[int, int]:
        """Step number -> position in the records last handed out (``StoredPlan.get``'s
        index, built once per plan rather than per load); shared: never to be changed."""
        return self._last.index if self._last is not None else {}

    def validate(self, root: Path, listing: Listing, handoffs: dict[str, Stamp | None],
                 created: str, check_approvals: bool) -> list[StepRecord]:
        """Every step file of ``listing`` read and checked, alone and together (names,
        numbers, dependencies, approval seals); the records in step order, remembered.
        PlanFileError lists every problem."""
        cache, steps_dir = self.cache, root / "steps"
        records: list[StepRecord] = []
        problems: list[PlanFileError] = []  # per file: a read's error holds all of its own
        for name, path, stamp in listing:
            head = name.split("-", 1)[0]
            if not head.isdigit():
                problems.append(PlanFileError(path, "not a step file name (NN-<title>.md)",
                                              fix=f"move it out of {steps_dir}"))
                continue
            try:
                record = cache.read(path, read_step, stamp)
            except PlanFileError as exc:
                problems.append(exc)
                continue
            if int(head) != record.number:
                rest = name.split("-", 1)[-1]
                problems.append(PlanFileError(
                    path, f"the file says step {record.number} but its name says {int(head)}",
                    "step", f"rename it to {record.number:02d}-{rest} or set "
                    f"`step: {int(head)}`"))
            records.append(record)
        seen: dict[int, Path] = {}
        for r in records:
            if r.number in seen:
                problems.append(PlanFileError(
                    r.path, f"step {r.number} is also in {seen[r.number]}", "step",
                    "renumber one of them, or delete the stray file"))
            seen[r.number] = r.path
        for r in records:
            bad = [d for d in r.depends_on if d not in seen]
            if bad:
                problems.append(PlanFileError(
                    r.path, f"no step {', '.join(map(str, bad))} in the plan", "depends_on",
                    "remove it from depends_on"))
        for r in records:
            if check_approvals and r.status == "complete" and not cache.sealed(
                    r, created, handoffs.get(r.path.name), approval_sealed):
                problems.append(PlanFileError(
                    r.path, "complete, but maker holds no approval of it on this machine (its "
                    "approval_seal is missing or does not match: an edit by hand, or a plan "
                    "approved on another machine)", "status",
                    f"`maker step reset {r.number}` and run the step again; or, for a plan "
                    "that came from another machine or person, review it and run `maker plan "
                    "adopt` in a terminal"))
        if not records and not problems:
            problems.append(PlanFileError(steps_dir, "no step files",
                                          fix="write a plan again with /maker:plan"))
        if problems:
            self._last = None
            raise PlanFileError(root, "the plan files have problems:\n- "
                                + "\n- ".join(map(str, problems)),
                                problems=[p for e in problems for p in e.problems])
        records.sort(key=lambda r: r.number)
        self.remember(root, listing, handoffs, created, check_approvals, records)
        return records

    def path_of(self, number: int) -> Path | None:
        """The file of step ``number`` in the last plan loaded, if there was one."""
        return self._last.paths.get(number) if self._last is not None else None

    def records(self, listing: Listing, handoffs: dict[str, Stamp | None], created: str,
                check_approvals: bool) -> list[StepRecord] | None:
        """The plan's records in step order, from the last load and the files that
        changed since; None when only the full validation can tell."""
        last = self._last
        if last is None or last.created != created or last.check_approvals != \
                check_approvals or len(listing) != len(last.names):
            return None
        for (name, path, stamp), known in zip(listing, last.names, strict=True):
            if name != known:
                return None
            hand = handoffs.get(name)
            # A stamp alone is trusted only once the cache has seen the file's bytes
            # unchanged with the stamp settled (a same-size edit in the tick of a
            # load keeps the stamps); a recent handoff is checked again too.
            if stamp == last.stamps[name] and hand == last.handoffs.get(name) and \
                    self.cache.trusted(path, stamp) and (hand is None or settled(hand)):
                continue
            if last.handoffs.get(name) != hand:
                last.handoffs[name] = hand
                last.moved.append(name)
            if not self._update(name, path, stamp, created):
                return None
        for name in last.handoffs.keys() - handoffs.keys():
            del last.handoffs[name]
            last.moved.append(name)
        for name, hand in handoffs.items():  # (those of no step file too: handoff_heads)
            if name not in last.handoffs or last.handoffs[name] != hand:
                last.handoffs[name] = hand
                last.moved.append(name)
        return list(last.ordered)  # shared: StoredPlan.get copies

    def _recheck(self, name: str, path: Path, stamp: Stamp | None, hand: Stamp | None,
                 created: str, check_approvals: bool) -> StepRecord | None:
        """What the full validation checks of one step file, or None on a problem."""
        head = name.split("-", 1)[0]
        try:
            record = self.cache.read(path, read_step, stamp)
        except PlanFileError:
            return None
        if not head.isdigit() or int(head) != record.number:
            return None
        if check_approvals and record.status == "complete" and not self.cache.sealed(
                record, created, hand, approval_sealed):
            return None
        return record
