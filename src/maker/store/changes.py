"""How a long-lived reader knows what changed in ``plans/`` without a ``stat`` per file.

The headless engine loads a 1,000-step plan several times per step; listing and
stat-ing every step file and handoff each time makes a step's cost grow with the plan.
What can change the plan between two loads, and how each is seen:

- **maker, in this process.** Every transaction's journal names the files it writes
  (``maker.store.journal``): a load inside the transaction re-reads those, and
  :func:`committing` (or :func:`rolled_back`) logs them here, by plans directory, so
  every later load re-reads just those.
- **maker, in another process** (a hook, ``maker step reset`` in a terminal, another
  run). Every transaction that changed something writes a new random token into
  ``plans/.maker/generation`` before it commits (or once it is undone), under the plan
  lock. At its own
  commit a process checks that the token is still the one it wrote or read last;
  when it is not, someone else committed in between. A reader that finds the token it
  knows, with no such gap since its snapshot, has seen every change maker made; any
  other token means a full re-read. A recovery (an interrupted change undone) writes
  a new token too.
- **a person, by hand** (an editor in place, ``sed -i``). Nothing tells: a reader
  re-lists and re-checks everything at least every :data:`FULL_EVERY` seconds
  (``PlanStore.load``). A hand edit has no order with respect to a running engine's
  steps, so seeing it up to that long after it was saved is as if it had been saved
  that much later; maker's own changes, from any process, are always seen at once.

The token is a hint, never state: a missing or unreadable one only costs a full read.
Short-lived readers (a hook, a CLI command) read everything once and gain nothing.
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["FULL_EVERY", "View", "committing", "recovered", "rolled_back", "since", "view"]

FULL_EVERY = 1.0  # seconds: the longest a hand edit goes unseen by a long-lived reader
_TOKEN = os.path.join(".maker", "generation")
_KEPT = 256  # transactions remembered per plans directory


class _Root:
    __slots__ = ("epoch", "log", "seq", "token")

    def __init__(self) -> None:
        self.token: str | None = None  # the token this process wrote or read last
        self.epoch = 0  # moves on whenever a change was made that the log cannot name
        self.seq = 0  # this process's transactions that changed something
        self.log: list[tuple[int, frozenset[str] | None]] = []  # None: name everything


_roots: dict[str, _Root] = {}

View = tuple[str, int, int]  # (token, epoch, seq) when a reader's snapshot was taken


def _root(root: Path) -> tuple[str, _Root]:
    key = os.path.abspath(root)
    found = _roots.get(key)
    if found is None:
        found = _roots[key] = _Root()
    return key, found


def _read(key: str) -> str | None:
    try:
        fd = os.open(os.path.join(key, _TOKEN), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, 64)
    except OSError:
        return None
    finally:
        os.close(fd)
    token = data.decode("ascii", errors="replace").strip()
    return token if len(token) == 32 else None


def _write(key: str) -> str | None:
    """A new token, written atomically (a new file renamed over the old one: a symlink
    planted there is replaced, never followed); None when it cannot be (a folder in its
    place): readers then find none, and read everything."""
    token = os.urandom(16).hex()
    target = os.path.join(key, _TOKEN)
    # Hidden and named .*.tmp: a crash's leftover is removed by the recovery.
    tmp = os.path.join(key, ".maker", f".generation.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        _void(target)
        return None
    try:
        try:
            os.write(fd, token.encode("ascii") + b"\n")
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _void(target)
        return None
    return token


def _void(target: str) -> None:
    """No new token could be written: the old one must not say that nothing changed."""
    with contextlib.suppress(OSError):
        os.unlink(target)


def committing(root: Path, entries: list[dict[str, Any]]) -> None:
    """Under the plan lock, before the commit of a transaction that wrote ``entries``
    (the journal's): log the files it changed, and write a new token."""
    key, state = _root(root)
    if _read(key) != state.token:
        state.epoch += 1  # another process committed since this one last looked
    _log(state, entries)
    state.token = _write(key)


def rolled_back(root: Path, entries: list[dict[str, Any]]) -> None:
    """Under the plan lock: a transaction of this process that wrote ``entries`` was
    undone. What it wrote is back as it was; a reader may have read it meanwhile (one of
    this process, inside the transaction; or of another, which began its read before the
    transaction did and so did not wait for it): a new token, and the log, tell both."""
    committing(root, entries)


def _names(entries: list[dict[str, Any]]) -> frozenset[str] | None:
    names = set()
    for entry in entries:
        if entry.get("kind") != "file":  # a folder moved or made: too much to name
            return None
        names.add(str(entry.get("path")).replace(os.sep, "/"))
    return frozenset(names)


def _log(state: _Root, entries: list[dict[str, Any]]) -> None:
    state.seq += 1
    state.log.append((state.seq, _names(entries)))
    del state.log[:-_KEPT]


def recovered(root: Path) -> None:
    """Under the plan lock: an interrupted change was undone (files restored that no
    log names)."""
    key, state = _root(root)
    state.epoch += 1
    state.token = _write(key)


def view(root: Path) -> View | None:
    """What a reader notes when it takes its snapshot: None when the token is missing
    (nothing then tells a later reader that the snapshot still holds)."""
    key, state = _root(root)
    token = _read(key)
    if token is None:
        return None
    if token != state.token:  # adopted: a change by someone else, now seen
        state.token, state.epoch = token, state.epoch + 1
    return token, state.epoch, state.seq


def since(root: Path, seen: View | None) -> frozenset[str] | None:
    """The files (relative to ``root``, ``/``-separated) that maker changed since a
    snapshot noted ``seen``, this process's open transaction included; None when that
    is not known, and only a full read tells."""
    if seen is None:
        return None
    key, state = _root(root)
    token = _read(key)
    if token is None or token != state.token or state.epoch != seen[1]:
        return None
    changed: set[str] = set()
    if state.seq > seen[2]:
        if not state.log or state.log[0][0] > seen[2] + 1:
            return None  # older than the log reaches
        for seq, names in state.log:
            if seq > seen[2]:
                if names is None:
                    return None
                changed |= names
    from maker.store.journal import pending

    entries = pending(key)
    if entries:
        names = _names(entries)
        if names is None:
            return None
        changed |= names
    return frozenset(changed)
