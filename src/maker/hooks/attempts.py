"""The hooks' attempt counters: how often a plan, a handoff or a stop was refused.

Bounds stay well under Claude Code's own cap of 8 consecutive blocks.
"""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing on every hook

__all__ = ["MAX_ATTEMPTS", "bump", "clear"]

if TYPE_CHECKING:
    from maker.store.state import StateDir as _Plans

MAX_ATTEMPTS = 3


def _counter_path(store: _Plans, kind: str, key: str) -> Path:
    safe = "".join(c for c in key if c.isalnum() or c in "-_")[:80] or "default"
    if kind == "planner":
        # No plan may exist yet, and a rejected plan must not create plans/ (whose
        # presence wakes every later hook): the planner's count lives with the plugin.
        from maker.core.paths import data_dir

        return data_dir() / "attempts" / f"{kind}-{safe}.json"
    return store.state_dir / "attempts" / f"{kind}-{safe}.json"


def bump(store: _Plans, kind: str, key: str) -> int:
    """Count one more attempt of ``kind`` for ``key``; the count so far."""
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError

    path = _counter_path(store, kind, key)
    try:  # bounded, and never a FIFO: a counter planted by hand must not hang the hook
        count = int(json.loads(read_regular_file(path, 4096))["count"])
    except (OSError, ValueError, KeyError, TypeError, InputError):
        count = 0
    count += 1
    from maker.store.atomic import atomic_write

    atomic_write(path, json.dumps({"count": count}), durable=False)
    return count


def clear(store: _Plans, kind: str, key: str) -> None:
    try:
        _counter_path(store, kind, key).unlink()
    except FileNotFoundError:
        pass
