"""Parsed step files, kept while the files on disk do not change.

A long-lived reader (the headless engine holds one :class:`~maker.store.plan_store.PlanStore`
for a whole run) loads the plan several times per step; re-parsing and re-checking
every step file each time makes a step's cost grow with the plan. :class:`StepCache`
keeps each file's parsed record and the result of its approval-seal check, and hands
out copies, so a load costs a ``stat`` per unchanged file.

When an entry is trusted (git's index has the same problem, "racily clean" files):

- the file's identity and stamps are unchanged: inode, size, modification and change
  times in nanoseconds (an atomic replace makes a new inode and a new ctime);
- and its bytes were found to be the bytes parsed at a time when the stamp was
  already older than :data:`SETTLED_NS`. A file can be rewritten in place within one
  clock tick of the file system and keep its stamps; once it is older than the
  coarsest tick (:data:`TICK_NS`, 2 s: FAT), and than how far the file system's clock
  may run behind the one maker reads (:data:`LAG_NS`), that cannot happen unseen. (A
  kernel stamps files from a clock it updates once a jiffy: up to 6 ms behind
  ``time.time_ns()`` as measured on Linux 6.18. With the tick alone, an edit made just
  after a load found a stamp settled could still fall in that stamp's tick.) An entry
  made while the stamp was recent is compared by its bytes on every use until that is
  so: a same-size edit in the tick of the parse, made after it, keeps the stamp, and a
  stamp that merely grew old would hide it for ever. (The bytes are read before and
  after the parse, and the result is kept only when they agree.)

A seal check's result also depends on the accepted handoff's bytes and the plan's
``created_at``, so it is keyed by the handoff file's stamps and ``created_at`` too.
Short-lived readers (a hook, a CLI command) gain nothing and lose nothing. The kept
store's invariants, and the tests that hold them: ``tests/unit/test_kept_records.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from maker.core.bounded import read_regular_file
from maker.errors import MakerError
from maker.store.records import copy_record

if TYPE_CHECKING:
    from maker.store.records import StepRecord

__all__ = ["LAG_NS", "SETTLED_NS", "TICK_NS", "Stamp", "StepCache", "settled",
           "stat_stamp"]

TICK_NS = 2_000_000_000  # the coarsest clock tick of a file system (FAT)
LAG_NS = 1_000_000_000  # a file system's clock behind maker's (a jiffy; with room)
SETTLED_NS = TICK_NS + LAG_NS  # a stamp older than this cannot be kept by an edit
T = TypeVar("T")
Stamp = tuple[int, int, int, int]


def stat_stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(stamp: Stamp) -> bool:
    return time.time_ns() - max(stamp[2], stamp[3]) > SETTLED_NS


def _bytes(path: Path) -> bytes | None:
    try:
        return read_regular_file(path)
    except (OSError, MakerError):
        return None


class StepCache:
    """Parsed step records and seal checks by file (see the module's docstring)."""

    def __init__(self) -> None:
        # path -> (stamp, the bytes parsed, the record, whether the bytes were found
        # unchanged while the stamp was settled: only then is the stamp enough)
        self._records: dict[Path, tuple[Stamp, bytes, StepRecord, bool]] = {}
        self._seals: dict[Path, tuple[tuple[Stamp, Stamp | None, str, bytes | None],
                                      bool]] = {}
        self._paths: dict[tuple[Path, str], Path] = {}
        self._derived: dict[tuple[Path, Callable[[Path], Any]], tuple[Stamp, Any]] = {}

    def path(self, folder: Path, name: str) -> Path:
        """``folder / name``, built once (a thousand-step plan lists a thousand names
        on every load)."""
        found = self._paths.get((folder, name))
        if found is None:
            found = self._paths[(folder, name)] = folder / name
        return found

    def listing(self, folder: Path) -> list[tuple[str, Path, Stamp | None]]:
        """The ``*.md`` regular files in ``folder`` (not hidden), sorted by name, with
        their stamps: one directory read and one ``stat`` per file. [] when ``folder``
        does not exist."""
        out = []
        try:
            with os.scandir(folder) as entries:
                for e in entries:
                    name = e.name
                    if name.endswith(".md") and not name.startswith(".") and e.is_file():
                        try:
                            st = e.stat()
                            stamp: Stamp | None = (st.st_ino, st.st_size, st.st_mtime_ns,
                                                    st.st_ctime_ns)
                        except OSError:
                            stamp = None
                        out.append((name, self.path(folder, name), stamp))
        except (FileNotFoundError, NotADirectoryError):
            return []
        out.sort()
        return out

    def read(self, path: Path, parse: Callable[[Path], StepRecord],
             stamp: Stamp | None = None) -> StepRecord:
        """``parse(path)``, or a copy of its earlier result when the file is unchanged
        (``stamp``: its stamp, when the caller just took it). A parse that raises is not
        kept (the file is read again next time)."""
        stamp = stamp or stat_stamp(path)
        hit = self._records.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            if hit[3]:
                return copy_record(hit[2])
            now_settled = settled(stamp)  # taken before the bytes are compared
            if _bytes(path) == hit[1]:
                if now_settled:
                    self._records[path] = (*hit[:3], True)
                return copy_record(hit[2])
        was_settled = stamp is not None and settled(stamp)  # before the bytes are read
        before = _bytes(path)
        record = parse(path)
        # Read again: its seal verdict is too (its bytes may have changed under the same
        # stamp, an edit in the tick of the last read, which the seal key does not see).
        self._seals.pop(path, None)
        if hit is not None and hit[2].spec == record.spec:
            # The same step with a new status: keep its spec object, so what was derived
            # from the specs (the schedule) is still known to be of the same steps.
            record.spec = hit[2].spec
        if stamp is not None and before is not None and stat_stamp(path) == stamp \
                and _bytes(path) == before:
            self._records[path] = (stamp, before, copy_record(record), was_settled)
        else:
            self._records.pop(path, None)
        return record

    def trusted(self, path: Path, stamp: Stamp | None) -> bool:
        """Whether ``path``'s kept record may be used on its ``stamp`` alone (see the
        module's docstring); False: read it again (:meth:`read` compares its bytes)."""
        hit = self._records.get(path)
        return stamp is not None and hit is not None and hit[0] == stamp and hit[3]

    def derived(self, path: Path, compute: Callable[[Path], T],
                stamp: Stamp | None = None) -> T:
        """``compute(path)`` (something read from the file), kept while the file is
        unchanged and settled; any other file is read again every time. ``stamp``: the
        file's, when the caller just took it (``listing``)."""
        stamp = stamp or stat_stamp(path)
        hit = self._derived.get((path, compute))
        if stamp is not None and hit is not None and hit[0] == stamp:
            return hit[1]  # type: ignore[no-any-return]
        was_settled = stamp is not None and settled(stamp)  # before the file is read
        value = compute(path)
        if stamp is not None and was_settled and stat_stamp(path) == stamp:
            self._derived[(path, compute)] = (stamp, value)
        return value

    def sealed(self, record: StepRecord, created_at: str, handoff: Path | Stamp | None,
               check: Callable[[StepRecord, str], bool]) -> bool:
        """``check(record, created_at)`` for a ``record`` just returned by :meth:`read`,
        kept while the step file and its ``handoff`` (its path, or its stamp as just
        taken) are unchanged (one entry per file).
        A record whose file is not in the cache is checked every time.

        Not covered: the sealing key itself changing under a running process (a person
        deleting it to void every approval); such a process keeps its verdicts until it
        ends, and every other process sees the new key at once."""
        hit = self._records.get(record.path)
        stamp = hit[0] if hit is not None else None  # as :meth:`read` just found it
        if stamp is None or not settled(stamp):
            return check(record, created_at)
        where = record.path.parent.parent / "handoffs" / record.path.name
        taken = handoff if handoff is None or isinstance(handoff, tuple) else stat_stamp(handoff)
        # A recent handoff is told apart by its bytes too (see the module's docstring).
        content = _bytes(where) if taken is not None and not settled(taken) else None
        key = (stamp, taken, created_at, content)
        found = self._seals.get(record.path)
        if found is not None and found[0] == key:
            return found[1]
        verdict = check(record, created_at)
        self._seals[record.path] = (key, verdict)
        return verdict
