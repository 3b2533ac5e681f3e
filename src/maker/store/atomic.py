"""Atomic file writes and the plan lock.

A write goes to a temporary file in the same directory and is renamed over the
target (:mod:`maker.store.replace`), so a crash leaves the old file or the new one,
never half of either. The
lock (``flock`` on ``plans/.maker/lock``) serializes sessions that touch the same
plan; it is re-entrant within a process, and its outermost hold is a transaction
(``maker.store.journal``): several writes under it happen all together or not at all.
"""

from __future__ import annotations

import contextlib
import time
from _thread import allocate_lock

from maker.errors import LockTimeoutError
from maker.store import changes
from maker.store.journal import active_journal, close_journal, open_journal, recover
from maker.store.replace import replace_file

TYPE_CHECKING = False  # typing's, without importing typing on every hook

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import IO, Any

__all__ = ["atomic_write", "exclusive_lock", "plan_lock"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock degrades to in-process only
    fcntl = None  # type: ignore[assignment]


def atomic_write(path: Path, text: str, durable: bool = True) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename), creating parents; under
    the plan lock, the write is journaled first (:mod:`maker.store.journal`)."""
    journal = active_journal(path)
    if journal is not None:  # first, so that recovery also finds our scratch file
        journal.before_write(path)
    replace_file(path, text, durable)


_held: dict[str, int] = {}
_held_guard = allocate_lock()


def exclusive_lock(fh: IO[Any], timeout: float, poll: float = 0.05) -> bool:
    """Take an exclusive ``flock`` on the open file ``fh`` (released when it is closed),
    waiting at most ``timeout`` seconds; whether it was taken. True at once where there
    is no ``fcntl`` (not a POSIX system): there is nothing to wait for."""
    if fcntl is None:
        return True
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(poll)


@contextlib.contextmanager
def plan_lock(plans_dir: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold the plan's inter-process lock; LockTimeoutError after ``timeout`` seconds.

    The outermost hold is a transaction: a change interrupted before, by a crash, is
    undone first; the writes made under it are committed when it is released, and
    undone when it is left by an exception."""
    state_dir = plans_dir / ".maker"
    state_dir.mkdir(parents=True, exist_ok=True)
    lock_path = state_dir / "lock"
    key = str(lock_path.resolve())
    with _held_guard:
        depth = _held.get(key, 0)
        _held[key] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    fh = open(lock_path, "a+")  # held for the lock's lifetime
    try:
        if not exclusive_lock(fh, timeout):
            raise LockTimeoutError(
                f"another maker session has held {lock_path} for over {timeout:.0f}s; wait "
                "for it to finish, or remove the file if no other session is running")
        if recover(plans_dir):
            changes.recovered(plans_dir)
        journal = open_journal(plans_dir)
        try:
            yield
            if journal.entries:  # (before the commit: see maker.store.changes)
                changes.committing(plans_dir, journal.entries)
        except BaseException:
            undone = list(journal.entries)  # (the undo empties the journal)
            try:
                journal.rollback()
            finally:
                if undone:
                    changes.rolled_back(plans_dir, undone)
            raise
        else:
            journal.commit()
        finally:
            close_journal(journal)
    finally:
        fh.close()  # closing releases the flock
        with _held_guard:
            _held[key] -= 1
            if not _held[key]:
                del _held[key]
