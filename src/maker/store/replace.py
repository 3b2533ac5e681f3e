"""Replace a file whole: write a scratch file beside it, then rename it over the target,
so a crash leaves the old file or the new one, never half of either.

This is the bottom of the store: it knows nothing of the plan lock or its journal.
:func:`maker.store.atomic.atomic_write` journals the change first when it runs under the
plan lock; the journal itself writes through here.
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # typing's, without importing typing on every hook

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["replace_file"]


def replace_file(path: Path, text: str, durable: bool = True) -> None:
    """Write ``text`` to ``path`` through a scratch file and a rename, creating parents;
    ``durable`` fsyncs the data before the rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_scratch(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_scratch(path: Path) -> tuple[int, str]:
    """A new file ``.NAME.XXXXXXXX.tmp`` beside ``path`` (never one that exists: O_EXCL,
    as ``tempfile.mkstemp``, whose imports would cost every hook more than the write),
    with the mode ``path`` has, or the one a plain open() would give a new file, so
    that plan files stay readable."""
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        mode = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(os.path.dirname(path),
                           f".{os.path.basename(path)}.{os.urandom(4).hex()}.tmp")
        try:
            # Private (0600) until it has its final mode, as mkstemp's file was.
            fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            try:
                os.fchmod(fd, mode)
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        return fd, tmp
    raise FileExistsError(f"no unused scratch file name beside {path}")
