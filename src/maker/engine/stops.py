"""How a headless run ends early: an exit code, what to tell the person, and the event
that records it (None when the task is neither done nor failed: it waits for them)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from maker.core.events import Event

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["EXIT_APPROVAL", "EXIT_BUDGET", "EXIT_COMPLETE", "EXIT_FAILED", "EXIT_STOPPED",
           "EXIT_USAGE", "STOPPED_SAID", "RunStop", "review_cut", "stop_asked",
           "what_is_kept"]

# The exit codes of a run (``maker.engine.orchestrator`` says what each means).
EXIT_COMPLETE, EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_APPROVAL = 0, 1, 2, 3, 4
EXIT_STOPPED = 5
"""A person asked the run to stop (``/maker:run --stop``): what ran finished, nothing more
started."""
STOPPED_SAID = ("stopped as the user asked (/maker:run --stop): what ran has finished, "
                "nothing more was started; /maker:run goes on from here")


def stop_asked(keep_going: object) -> RunStop | None:
    """The stop a person asked for, when ``keep_going`` (``EngineParts.keep_going``)
    says not to start another step; else None."""
    if callable(keep_going) and not keep_going():
        return RunStop(EXIT_STOPPED, STOPPED_SAID, None)
    return None


class RunStop(Exception):
    def __init__(self, code: int, message: str, event: Event | None) -> None:
        super().__init__(message)
        self.code, self.message, self.event = code, message, event


def review_cut(n: int, title: str, times: int, why: object) -> RunStop:
    """The stop for a person when a step's review session was cut at its bound ``times``
    in a row: the step awaits their decision."""
    return RunStop(EXIT_APPROVAL, f"step {n} ({title}) is done and awaits approval: its "
                   f"review was cut {times} times in a row ({why}). `maker run` again asks "
                   "for the review anew (a larger session_timeout in plans/settings.yaml "
                   f"gives it longer); or a person decides in a terminal: `maker step "
                   f"reject {n}`, or `STEP_SKIP_REVIEW=1 maker step approve {n}` to approve "
                   "it without a review", None)


def what_is_kept(store: PlanStore, task: str | None) -> str:
    """What a run that an SDK call ended leaves, as it is: the step in progress (which the
    next `maker run` continues), the plan's progress, or no plan at all (the task is run
    again, planned anew)."""
    if not store.exists():
        again = f"maker run {shlex.quote(task)}" if task else "maker run \"<task>\""
        return f"No plan was written; `{again}` starts again"
    going = [r.number for r in store.load().steps if r.status == "in-progress"]
    if going:
        return (f"Step {', '.join(map(str, going))} stays in progress; `maker run` "
                "continues it")
    return "What is done is kept; `maker run` continues the plan"

