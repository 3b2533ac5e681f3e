"""How often a deliverable or a stop was refused, and what the bound then does
(``maker.executor.rules.step_rules``): the counting behind the hooks' retries, in the core.

A counter is a small file per kind and key (``plans/.maker/attempts/``; the planner's
with the plugin's data, since no plan may exist yet). Keys name a run of a step
(``step{N}-{started_at}``), so a new run counts afresh.

Light on purpose (no ``typing``): the Stop hook counts its reminders here.
"""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing on every hook

__all__ = ["AGAIN", "bump", "clear", "keep_answer", "refuse_handoff", "remind"]

AGAIN = ("deliver it again, whole and corrected, nothing else: as your final message, or "
         "as SubagentHandback's `message` if you have that tool")
"""What an agent whose deliverable was refused is asked to do, whichever it is."""

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.state import PlanState
    from maker.store.state import StateDir as _Plans


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


def refuse_handoff(store: PlanStore, step: int, key: str, text: str,
                   problems: list[str], bound: int) -> tuple[int, list[str] | None]:
    """Count a handoff the gate refused for step ``step``'s run ``key``, keeping the
    refused answer (nothing the executor wrote is lost). Returns ``(count, reasons)``:
    ``reasons`` is None while the executor may try again, else why the step failed (it
    has just been recorded ``failed``: the bound, ``gate_attempts`` in
    ``plans/settings.yaml``, is spent)."""
    kept = keep_answer(store, step, text)
    count = bump(store, "handoff", key)
    if count < bound:
        return count, None
    from maker.executor.state.lifecycle import fail_step

    fail_step(store, step, [f"handoff rejected {count} times (the last answer is kept in "
                            f"{kept})", *problems])
    clear(store, "handoff", key)
    return count, problems


def keep_answer(store: PlanStore, step: int, text: str) -> Path:
    """Keep an executor's answer that maker did not accept; the file it is kept in."""
    from maker.core.clock import file_stamp
    from maker.store.atomic import atomic_write

    kept = store.state_dir / "refused" / f"step-{step:02d}-{file_stamp()}.txt"
    atomic_write(kept, text, durable=False)
    return kept


def remind(state: PlanState, step: int, key: str, continuing: bool) -> tuple[int, bool]:
    """Count one more stop of the turn running step ``step`` (run ``key``) with no
    accepted handoff. Returns ``(count, failed)``: ``failed`` when the reminders
    (:data:`STOP_REMINDERS`) are spent and the step has just been recorded ``failed``.
    ``continuing``: the client says this stop follows a block (``stop_hook_active``),
    so the last reminder is already spent."""
    from maker.executor.rules.step_rules import STOP_REMINDERS

    count = bump(state, "stop", key)
    if count > STOP_REMINDERS or (continuing and count >= STOP_REMINDERS):
        from maker.executor.state.lifecycle import fail_step

        fail_step(state.full(), step, ["the session stopped without an accepted handoff"])
        clear(state, "stop", key)
        return count, True
    return count, False
