"""What the headless engine spent: one line per SDK call in ``plans/ledger.jsonl``.

Every call the engine makes (the planner, a step's executor, the reviewer, a red-flagged
sample, a failed attempt, a fix-loop turn) is recorded as a ``Call``; the ``Budget`` of a
run reads what was spent from here, so failed and flagged work count, and a run that
continues a plan counts what the earlier runs spent on it. The ledger belongs to its
plan: a new plan archives it with the old one (``PlanStore._archive_current``), so a
new task's planner call is recorded once the new plan is written.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any, BinaryIO

from maker.core.bounded import open_regular, read_tail
from maker.errors import InputError
from maker.store.plan_store import PlanStore

__all__ = ["CALLS_LIMIT", "EPSILON", "KINDS", "LINE_LIMIT", "Call", "Ledger", "LedgerSummary",
           "token_split", "usd"]

KINDS = ("planner", "executor", "reviewer", "flagged", "fix", "vote", "probe", "calibrate")
# ``vote``: a voted sample (maker.engine.vote_step), the vote's own record (its ``detail``,
# at no cost); ``probe``: a code vote's probe; ``calibrate``: ``maker calibrate``'s sample.
# One call's record is a few hundred bytes; a longer line is not maker's and is skipped.
LINE_LIMIT = 64 * 1024
# ``calls()`` returns the most recent calls within this many bytes of the ledger's end
# (about 10,000 calls); the totals count every call, read as a stream.
CALLS_LIMIT = 4 * 2**20
_TEXT_LIMIT = 2000  # an error message kept in the ledger (its start says what failed)
EPSILON = 1e-9  # a billionth of a dollar: float sums must not leave a budget "almost" spent


def token_split(usage: dict[str, int] | None, total: int = 0) -> dict[str, int]:
    """A call's token fields from the SDK's ``usage`` (else ``total`` as input tokens)."""
    if not usage:
        return {"input_tokens": total, "output_tokens": 0}
    return {"input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "cache_creation_tokens": usage.get("cache_creation_input_tokens", 0),
            "cache_read_tokens": usage.get("cache_read_input_tokens", 0)}


def usd(amount: float) -> str:
    """``$0.0123``: an amount as the status table and the messages show it."""
    return f"${amount:.4f}"


@dataclass(frozen=True)
class Call:
    """One SDK call and what it cost. ``step`` is None for the planner; ``attempt`` counts
    from 1 within its step and kind; ``error`` is set when the call failed (its cost
    still counts); ``at`` is ``maker.store.plan_store.utc_now()``."""

    kind: str
    step: int | None
    attempt: int
    cost_usd: float
    duration_ms: int
    input_tokens: int
    output_tokens: int
    model: str | None
    error: str | None
    at: str
    session_id: str | None
    detail: dict[str, Any] | None = None  # a vote's record (samples, flagged, margin…)
    # The prompt cache's tokens, as the SDK's result reported them (0 in lines written
    # before maker kept them apart, and where the SDK reports none).
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    # False: the SDK reported no cost for this call (``cost_usd`` is 0 then, and means
    # nothing): a budget cannot count it, so a run under a budget stops (``Budget``).
    cost_known: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind: {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.step is not None and not _count(self.step):
            raise ValueError(f"step: {self.step!r} is not a step number")
        for name in ("attempt", "duration_ms", "input_tokens", "output_tokens",
                     "cache_creation_tokens", "cache_read_tokens"):
            if not _count(getattr(self, name)):
                raise ValueError(f"{name}: {getattr(self, name)!r} is not a whole number >= 0")
        cost = self.cost_usd
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not (
                math.isfinite(cost) and cost >= 0):
            raise ValueError(f"cost_usd: {cost!r} is not an amount >= 0")
        for name in ("model", "error", "session_id"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{name}: {getattr(self, name)!r} is not text")
        if not isinstance(self.at, str):
            raise ValueError(f"at: {self.at!r} is not a timestamp")
        if not isinstance(self.cost_known, bool):
            raise ValueError(f"cost_known: {self.cost_known!r} is not true or false")
        if self.detail is not None and not isinstance(self.detail, dict):
            raise ValueError(f"detail: {self.detail!r} is not a mapping")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_OPTIONAL = ("detail", "cache_creation_tokens", "cache_read_tokens", "cost_known")
_FIELDS = tuple(f.name for f in fields(Call) if f.name not in _OPTIONAL)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parse(line: bytes) -> Call | None:
    """The call on one ledger line, or None for a line that is not one (skipped)."""
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            return None
        values = {name: data[name] for name in _FIELDS}
        values["detail"] = data.get("detail")
        for name in ("cache_creation_tokens", "cache_read_tokens"):
            values[name] = data.get(name, 0)
        values["cost_known"] = data.get("cost_known", True)
        if isinstance(values["cost_usd"], int) and not isinstance(values["cost_usd"], bool):
            values["cost_usd"] = float(values["cost_usd"])
        return Call(**values)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


@dataclass(frozen=True)
class LedgerSummary:
    """The ledger's totals: for ``maker status`` and the end of a run."""

    total_usd: float = 0.0
    calls: int = 0
    planner_usd: float = 0.0
    steps_usd: float = 0.0
    by_step: dict[int | None, float] = field(default_factory=dict)
    unknown: int = 0  # calls whose cost the SDK did not report

    def line(self) -> str:
        """``spent: $X in N calls (planner $a, steps $b)``, and the calls of unknown
        cost (so the sum is at least $X)."""
        return (f"spent: {'at least ' if self.unknown else ''}{usd(self.total_usd)} in "
                f"{self.calls} call{'' if self.calls == 1 else 's'} (planner "
                f"{usd(self.planner_usd)}, steps {usd(self.steps_usd)})"
                + (f"; {self.unknown} call(s) of unknown cost (the SDK reported none)"
                   if self.unknown else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"total_usd": self.total_usd, "calls": self.calls,
                "planner_usd": self.planner_usd, "steps_usd": self.steps_usd,
                "by_step": {("planner" if k is None else str(k)): v
                            for k, v in self.by_step.items()},
                "unknown_cost_calls": self.unknown}


@dataclass
class _Tally:
    """What has been read of the ledger file so far: the totals and where they stop."""

    file: tuple[int, int] | None = None  # (st_dev, st_ino) of the file read
    offset: int = 0  # the end of the last complete line counted
    last: tuple[int, bytes] = (0, b"")  # that line: its offset and bytes, to notice edits
    calls: int = 0
    total: float = 0.0
    planner: float = 0.0
    by_step: dict[int | None, float] = field(default_factory=dict)
    unknown: int = 0  # calls whose cost the SDK did not report


class Ledger:
    """The cost ledger of the plan in ``store``.

    ``record`` appends one line with ``O_APPEND`` in a single ``write`` and ``fsync``s,
    under the plan lock. Why not rewrite the whole file atomically, as the plan files
    are: the ledger grows with every call of the run (several per step), so a rewrite per
    call would cost time and I/O quadratic in the plan's size, and a long run would spend
    more on the ledger than on its steps. An append cannot lose what is already there; a
    crash can at worst leave the last line torn (cut short, no newline). Readers count
    only complete lines, so a torn line is never read as a call, and the next ``record``
    starts with a newline so the torn fragment stays a broken line of its own (skipped,
    like any line that is not a call; a line cut of its newline only is whole, and
    counts from then on). The line is not undone when a surrounding
    transaction rolls back: the money was spent either way.

    The totals are read as a stream and kept: each later read parses only the lines
    appended since, so a budget check costs the same at step 1,000 as at step 1. A file
    replaced, shrunk or edited where it was last read is read again from its start.
    """

    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self.path = store.ledger_path
        self._tally = _Tally()

    @property
    def _not_a_file(self) -> str:
        return (f"{self.path} is not a regular file (a folder, a FIFO or a symbolic link); "
                "move it away and maker starts a new ledger")

    def exists(self) -> bool:
        return self.path.is_file()

    # -- writing ----------------------------------------------------------------------

    def record(self, call: Call) -> None:
        """Append ``call`` (its ``error`` cut to 2,000 characters). Raises InputError
        when ``plans/ledger.jsonl`` is not a regular file, OSError when it cannot be
        written."""
        data = call.to_dict()
        if call.error is not None and len(call.error) > _TEXT_LIMIT:
            data["error"] = call.error[:_TEXT_LIMIT] + "…"
        line = (json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n").encode()
        # O_NOFOLLOW: an append goes where the name points, so a symbolic link planted
        # at plans/ledger.jsonl would have maker write into any file it can.
        flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
        with self.store.lock():
            created = not os.path.lexists(self.path)
            if os.path.islink(self.path):
                raise InputError(self._not_a_file)
            try:
                fd = os.open(self.path, flags, 0o666)
            except IsADirectoryError:
                raise InputError(self._not_a_file) from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a link put there since the check above
                    raise InputError(self._not_a_file) from None
                raise
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    raise InputError(self._not_a_file)
                if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
                    line = b"\n" + line  # after a torn line: keep the two apart
                view = memoryview(line)
                while view:  # one write for a line this size; the loop is for a full disk
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                _fsync_dir(self.path.parent)

    # -- reading ----------------------------------------------------------------------

    def calls(self) -> list[Call]:
        """The calls recorded, oldest first: all of them, or the most recent within the
        ledger's last 4 MiB (``CALLS_LIMIT``) for a longer one. Broken and torn lines are
        skipped. InputError when the ledger is not a regular file."""
        try:
            data = read_tail(self.path, CALLS_LIMIT)
        except FileNotFoundError:
            return []
        found = (_parse(line) for line in data.split(b"\n")[:-1])  # [-1]: torn or empty
        return [call for call in found if call is not None]

    def total(self) -> float:
        """What every call recorded cost, in US dollars."""
        return self._read().total

    def unknown_costs(self) -> int:
        """How many recorded calls have no cost the SDK reported."""
        return self._read().unknown

    def by_step(self) -> dict[int | None, float]:
        """Cost per step number (None: the planner's calls)."""
        return dict(self._read().by_step)

    def summary(self) -> LedgerSummary:
        tally = self._read()
        return LedgerSummary(total_usd=tally.total, calls=tally.calls,
                             planner_usd=tally.planner, steps_usd=tally.total - tally.planner,
                             by_step=dict(tally.by_step), unknown=tally.unknown)

    def _read(self) -> _Tally:
        """The tally brought up to date with the file (a stream: bounded memory)."""
        try:
            fh = open_regular(self.path)
        except FileNotFoundError:
            self._tally = _Tally()
            return self._tally
        with fh:
            info = os.fstat(fh.fileno())
            tally = self._tally
            if ((info.st_dev, info.st_ino) != tally.file or info.st_size < tally.offset
                    or not _unchanged(fh, tally.last)):
                tally = _Tally(file=(info.st_dev, info.st_ino))
            fh.seek(tally.offset)
            for start, end, line in _complete_lines(fh, tally.offset):
                tally.offset = end
                tally.last = (start, line)
                call = _parse(line) if line else None
                if call is None:
                    continue
                tally.calls += 1
                tally.unknown += not call.cost_known
                tally.total += call.cost_usd
                if call.kind == "planner":
                    tally.planner += call.cost_usd
                tally.by_step[call.step] = tally.by_step.get(call.step, 0.0) + call.cost_usd
            self._tally = tally
        return tally


def _unchanged(fh: BinaryIO, last: tuple[int, bytes]) -> bool:
    start, line = last
    fh.seek(start)
    return fh.read(len(line)) == line


def _complete_lines(fh: BinaryIO, offset: int) -> Iterator[tuple[int, int, bytes]]:
    """Each newline-terminated line from the file position ``offset``: its start, its
    end and its bytes. A line over ``LINE_LIMIT`` is passed over in bounded reads and
    yielded as ``b""`` (its end still counts as read); an unterminated last line (torn,
    or being written) is not yielded."""
    while True:
        line = fh.readline(LINE_LIMIT + 1)
        end = offset + len(line)
        if not line.endswith(b"\n"):
            if len(line) <= LINE_LIMIT:
                return  # the end of the file, perhaps after a torn line
            while not line.endswith(b"\n"):
                line = fh.readline(LINE_LIMIT + 1)
                if not line:
                    return
                end += len(line)
            line = b""
        yield offset, end, line
        offset = end


def _fsync_dir(path: os.PathLike[str] | str) -> None:
    """Make a new file's name durable (its directory entry), where the OS allows it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
