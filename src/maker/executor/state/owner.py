"""Who owns the step in progress, and when its owner is gone.

A step in progress belongs to the Claude Code session that started it. Another
session takes it over only with the user's consent (``/maker:step N`` typed there, or
``maker step start N --take-over`` from a shell), or when the owner is gone: its
transcript (and its subagents' transcripts) have not been written for
:data:`OWNER_IDLE_S`. A working session writes its transcript at every tool result,
and no tool runs longer than Claude Code's 10-minute Bash limit; a missing transcript
proves nothing (another folder), so it never counts as gone.
"""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["OWNER_IDLE_S", "owner_gone", "take_over_instruction"]

OWNER_IDLE_S = 15 * 60


def take_over_instruction(n: int | str) -> str:
    """How a person moves step ``n`` from its (crashed?) owner session to another."""
    return (f"If that session is gone, or should give the step up, the user takes it over "
            f"by typing /maker:step {n} in this session (or `maker step start {n} "
            f"--take-over` in a shell); or puts it back with `maker step reset {n}`.")




def owner_gone(transcript_dir: Path | None, session_id: str, now: float | None = None,
               idle_s: float = OWNER_IDLE_S) -> bool:
    """True when session ``session_id``'s transcript in ``transcript_dir`` (Claude Code's
    folder for this project) and its subagents' have not been written for ``idle_s``."""
    if transcript_dir is None or not session_id or "/" in session_id:
        return False
    main = transcript_dir / f"{session_id}.jsonl"
    files = [main, *sorted((transcript_dir / session_id / "subagents").glob("*.jsonl"))]
    latest: float | None = None
    for path in files:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        latest = mtime if latest is None else max(latest, mtime)
    if latest is None:
        return False
    return (time.time() if now is None else now) - latest > idle_s
