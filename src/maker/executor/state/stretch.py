"""A stretch of a ``/maker:run``, as its record and its lock keep it: maker's engine
runs the plan from where it stands, in one background task of the person's session,
until a person's decision is due or the run ends.

The main session then holds one launch and one notification per stretch, not a
subagent's frame per step (``docs/run-ways.md`` has the figures): under the policy
``auto`` a whole plan is one stretch; under ``never``, one per question. Every gate is
the engine's (``maker run``'s): orient and its deviation question, claims against
measurement, the kernel boundary with hooks that fail closed, the handoff's edge-case
notes, review,
approval by the run's policy, parallel landing. The stretch records in the run's
record when it began and how it ended; the main session's next action is computed from
``plans/`` when the task's notification arrives (``maker.executor.loop.next_action``).

Only one stretch runs a plan at a time: it holds ``stretch.lock`` (an ``flock``, freed by
the kernel when its process dies, so a killed stretch never blocks the next).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from maker.executor.state.run import ENGINE, live_run, note_stretch, run_mode

if TYPE_CHECKING:
    from maker.store.state import StateDir

__all__ = ["ENDED_UNSAID", "STRETCH_COMMAND", "STRETCH_LOCK", "began", "ended", "holding_stretch",
           "stretch_runs", "stretch_start"]

STRETCH_LOCK = "stretch.lock"
ENDED_UNSAID = -1
"""The exit recorded for a stretch whose process ended without recording how."""
STRETCH_COMMAND = "maker loop stretch"
"""The command the main agent runs in the background (maker's hook pins it to the
plugin's own ``bin/maker``)."""


@contextlib.contextmanager
def holding_stretch(store: StateDir, wait: bool = False) -> Iterator[bool]:
    """The plan's stretch lock: True while held, False when another stretch holds it
    (``wait``: taken once that one ends, however long it runs; a stretch's sessions
    are each held to the engine's session timeout)."""
    store.state_dir.mkdir(parents=True, exist_ok=True)
    with open(store.state_dir / STRETCH_LOCK, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fh, fcntl.LOCK_UN)


def stretch_runs(store: StateDir) -> bool:
    """Whether a stretch of this plan runs now (its process holds the lock)."""
    if not (store.state_dir / STRETCH_LOCK).exists():
        return False
    with holding_stretch(store) as free:
        return not free


def stretch_start(store: StateDir) -> str:
    """Why no stretch may begin now ("" when one may): a run in engine mode must be
    live (whether another stretch runs is the lock's to say: ``holding_stretch``)."""
    if not live_run(store):
        return ("no /maker:run drives this plan: a run begins when the user types "
                "/maker:run")
    if run_mode(store) != ENGINE:
        return "this run's steps run as subagents (/maker:run --subagents), not here"
    return ""


def began(store: StateDir) -> None:
    """Record that a stretch began (its process holds the lock)."""
    note_stretch(store, began=time.time(), pid=os.getpid(), ended=None, exit=None,
                 message=None, told=False)


def ended(store: StateDir, exit_code: int, message: str) -> None:
    """Record how the stretch ended; the main agent is told at its notification."""
    note_stretch(store, ended=time.time(), exit=exit_code, message=message[:500])
