"""``plans/.maker/active.json``: the in-progress marker, an index of the step files.

It names the step in progress, the session that owns it and that session's attempt
counters; the step files are the truth, and a marker that disagrees is rebuilt.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from maker.core.bounded import read_text_file
from maker.errors import MakerError
from maker.store.atomic import atomic_write
from maker.store.journal import journaled_remove

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any, Protocol

    # The plan model is for rebuilding the marker only: not on every stop.
    from maker.store.records import StoredPlan

__all__ = ["member", "read_active", "rebuild_active", "run_of", "wave_of", "without_step",
           "write_active"]


if TYPE_CHECKING:  # for the type checker only: a Protocol needs typing at run time
    class PlanFiles(Protocol):
        """What the marker needs of a plans directory (``maker.store.plan_store.PlanStore``)."""

        active_path: Path

        def lock(self, timeout: float = ...) -> contextlib.AbstractContextManager[None]: ...

        def settle(self) -> None: ...

        def load(self, check_approvals: bool = ...) -> StoredPlan: ...


def read_active(store: PlanFiles) -> dict[str, Any] | None:
    """The in-progress marker (``step``, ``session_id``, ``started_at``, …), or None.

    The marker is an index of the step files; one that is unreadable or of the wrong
    shape (a hand edit) is rebuilt from them, never taken as "no step in progress"
    (which would open the Stop gate and lift the executor's limits)."""
    store.settle()
    try:
        data = json.loads(read_text_file(store.active_path, 64 * 1024))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, MakerError):
        data = None
    if isinstance(data, dict) and _is_step_number(data.get("step")) \
            and isinstance(data.get("session_id"), (str, type(None))) \
            and isinstance(data.get("started_at", ""), str):
        return data
    return rebuild_active(store)


def rebuild_active(store: PlanFiles) -> dict[str, Any] | None:
    """Write the in-progress marker again from the step files (the one step in
    progress), or remove it when none is; returns it."""
    from maker.store.records import in_progress

    with store.lock():
        running = in_progress(store.load())
        apart = [r.number for r in running if r.meta.get("worktree")]
        if len(running) > 1 and len(apart) == len(running):  # a wave
            first = running[0]
            active = {"step": first.number, "wave": apart, "session_id": None,
                      "started_at": str(first.meta.get("started_at") or ""), "attempts": {},
                      "runs": {str(r.number): str(r.meta.get("started_at") or "")
                               for r in running}}
            write_active(store, active)
            return active
        if len(running) != 1:
            write_active(store, None)
            return None
        record = running[0]
        owner = record.meta.get("started_by")
        active = {"step": record.number,
                  "started_at": str(record.meta.get("started_at") or ""),
                  "session_id": owner if isinstance(owner, str) and owner != "cli"
                  else None, "attempts": {}}
        write_active(store, active)
        return active


def run_of(active: dict[str, Any]) -> list[Any]:
    """The run of a step in progress (the marker, or one step of a wave) that an executor
    works for: its step, when it began, and the session that owns it (a takeover is
    another run for the executors)."""
    return [active.get("step"), str(active.get("started_at") or ""),
            str(active.get("session_id") or "")]


def wave_of(active: dict[str, Any] | None) -> list[int]:
    """The steps of the wave the marker names (several steps run beside others, each in
    its worktree); [] for one step in progress."""
    wave = (active or {}).get("wave")
    return [n for n in wave if _is_step_number(n)] if isinstance(wave, list) else []


def member(active: dict[str, Any] | None, n: int) -> dict[str, Any] | None:
    """The marker as it would read for step ``n`` of its wave alone (its own start: each
    step's run is its own), or None when ``n`` is not one of them."""
    if active is None or n not in wave_of(active):
        return None
    runs = active.get("runs")
    runs = runs if isinstance(runs, dict) else {}
    return dict(active, step=n, started_at=str(runs.get(str(n)) or active.get("started_at")))


def without_step(active: dict[str, Any], n: int) -> dict[str, Any] | None:
    """The marker once step ``n`` is no longer in progress: None, or the rest of its
    wave (steps run beside others)."""
    rest = [s for s in wave_of(active) if s != n]
    if not rest:
        return None
    return member(dict(active, wave=rest), rest[0])


def write_active(store: PlanFiles, data: dict[str, Any] | None) -> None:
    with store.lock():
        if data is None:
            journaled_remove(store.active_path)
        else:
            atomic_write(store.active_path, json.dumps(data, indent=2))


def _is_step_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6
