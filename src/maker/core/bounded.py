"""Reading input that someone else controls, within a bound: the one home for it.

Whatever maker reads from a user, a model, a hand-edited file or the client (stdin,
a plan FILE, a transcript, the files under ``plans/``) goes through here, so that
endless stdin (``yes | maker plan lint -``), ``/dev/zero``, a FIFO, a directory or a
huge file can neither exhaust memory nor hang a command or a hook. Only regular
files are read; a FIFO is opened without blocking and refused.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from maker.errors import InputError

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["HOOK_INPUT_LIMIT", "INPUT_LIMIT", "TRANSCRIPT_LIMIT", "open_regular",
           "read_regular_file",
           "read_stdin", "read_tail", "read_text_file", "size_text"]

# A planner's YAML, a handoff, a plan FILE: a 10,000-step plan is about 7 MB.
INPUT_LIMIT = 16 * 2**20
# What Claude Code sends a hook is one event: the largest part is a model's message or
# a tool's input, both bounded by the model's output tokens (well under 1 MiB).
HOOK_INPUT_LIMIT = 4 * 2**20
# The last assistant message is at the end of a transcript: only its tail is read.
TRANSCRIPT_LIMIT = 4 * 2**20
_CHUNK = 64 * 1024


def size_text(limit: int) -> str:
    """``16 MiB`` or ``512 KiB``: a limit as people read it."""
    if limit % 2**20 == 0:
        return f"{limit // 2**20} MiB"
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"


def read_stdin(limit: int = INPUT_LIMIT, stream: BinaryIO | None = None) -> bytes:
    """All of stdin, read in chunks; InputError once it passes ``limit`` bytes."""
    source = stream if stream is not None else sys.stdin.buffer
    return _read_bounded(source, limit, "standard input")


def read_regular_file(path: Path | str, limit: int = INPUT_LIMIT) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises InputError for a FIFO, a device, a directory or a file over the limit, and
    OSError (FileNotFoundError, PermissionError...) when it cannot be opened.
    """
    fd = _open_regular(Path(path))
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise InputError(f"{path} is {size:,} bytes, over maker's limit of "
                             f"{size_text(limit)} for one input; give it a smaller file")
        return _read_bounded(fh, limit, str(path))


def read_text_file(path: Path | str, limit: int = INPUT_LIMIT,
                   errors: str = "strict") -> str:
    """``read_regular_file`` decoded as UTF-8 (UnicodeDecodeError with ``errors='strict'``)."""
    return read_regular_file(path, limit).decode("utf-8", errors)


def read_tail(path: Path | str, limit: int = TRANSCRIPT_LIMIT) -> bytes:
    """The last ``limit`` bytes of a regular file (all of it when smaller), from the start
    of a line. InputError when it is not a regular file; OSError when it cannot be opened."""
    fd = _open_regular(Path(path))
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start = max(0, size - limit)
        fh.seek(start)
        data = _read_bounded(fh, limit, str(path), refuse=False)
    if start:  # the first line is cut: drop it
        cut = data.find(b"\n")
        data = data[cut + 1:] if cut != -1 else b""
    return data


def open_regular(path: Path | str) -> BinaryIO:
    """A regular file opened for reading (the caller bounds what it reads); InputError
    for anything else, without blocking on a FIFO."""
    return os.fdopen(_open_regular(Path(path)), "rb")


def _open_regular(path: Path) -> int:
    # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise InputError(f"{path} is {kind}; maker reads only regular files")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_bounded(source: BinaryIO, limit: int, what: str, refuse: bool = True) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = source.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        if refuse:
            raise InputError(f"{what} is over maker's limit of {size_text(limit)} for one "
                             "input; give it a smaller one")
        return b"".join(chunks)[:limit]
    return b"".join(chunks)
