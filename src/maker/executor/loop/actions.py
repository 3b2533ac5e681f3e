"""What a ``/maker:run`` (or a ``/maker:step`` run in maker's engine) tells the main agent
to do next: one :class:`Action`, its words the only thing the main agent reads of it.

A run stopped for a person ends with ``RUN_STOPPED``; a one-step run (``/maker:step`` of a
step whose code is voted on, ``maker.executor.loop.one_step``) ends with the step's own
line, as ``/maker:step`` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maker.errors import MakerError
from maker.executor.state.run import run_only, stop_run
from maker.executor.state.stretch import STRETCH_COMMAND

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["END_DONE", "END_STOPPED", "Action", "ask", "step_end", "stop", "stretch", "wait"]

END_DONE = "RUN_DONE"
END_STOPPED = "RUN_STOPPED"


@dataclass(frozen=True)
class Action:
    """What the main agent does next: ``said`` is all it reads of it."""

    kind: str  # launch, review, ask, wait, stop, done, stretch, started
    said: str


def ask(question: dict[str, object]) -> Action:
    # (the command says what `Next: ask` means: a question costs the main session its
    # characters twice, here and in the model's call)
    return Action("ask", "Next: ask with AskUserQuestion, the `ask:` line's input exactly."
                         "\nask: " + json.dumps(question, ensure_ascii=False,
                                                  separators=(",", ":")))


def stretch() -> Action:
    return Action("stretch", "Next: run `" + STRETCH_COMMAND + "` (Bash, run_in_background "
                             "true), then end your turn in a sentence.")


def wait(what: list[str]) -> Action:
    return Action("wait", f"Next: end your turn in one sentence: {', '.join(what)} "
                          "run(s) in the background, and maker's verdict comes with the "
                          "notification.")


def stop(store: PlanStore, why: str) -> Action:
    """The run stops for a person, saying ``why``."""
    only = run_only(store)
    stop_run(store, why)
    if only is None:
        return Action("stop", f"The run stopped: {why}.\nTell the user this in a sentence "
                              f"or two, and end with the line {END_STOPPED}.")
    return Action("stop", f"Step {only} stopped: {why}.\nTell the user this in a sentence "
                          f"or two, and end with the line {step_end(store, only)}.")


def step_end(store: PlanStore, n: int) -> str:
    """``/maker:step``'s last line for step ``n`` as ``plans/`` has it."""
    try:
        status = store.load_step(n).status
    except MakerError:
        return "STEP_BLOCKED"
    return {"complete": "STEP_COMPLETE", "failed": "STEP_FAILED",
            "awaiting-approval": "STEP_AWAITING_APPROVAL"}.get(status, "STEP_BLOCKED")
