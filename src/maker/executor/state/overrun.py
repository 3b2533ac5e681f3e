"""A plugin subagent's wall-clock bound (``subagent_timeout`` in ``plans/settings.yaml``).

One of the plugin's subagents (the step executor, the reviewer, the planner) may run for
``subagent_timeout`` seconds from when maker first saw it: its background launch, else
its first tool call. Past that it is ended (its next tool call ends it; in the
background, a wake tells the main agent to stop it) and, for a step executor, the step
it works for is recorded ``failed`` with the reason, if that run of the step is still
the one in progress: a person then decides (``maker step reset N`` tries again).

``maker run`` bounds each of its SDK sessions by ``session_timeout`` instead
(``maker.engine.step_run``): there a session past it is a red-flagged sample.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from maker.errors import MakerError
from maker.executor.state.lifecycle import fail_step
from maker.store.active import member, run_of, wave_of
from maker.store.settings import Settings, load_settings

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["AGENT_NAMES", "fail_overrun", "overran", "overrun_reason"]

AGENT_NAMES = {"maker:step-executor": "step executor", "maker:reviewer": "reviewer",
               "maker:planner": "planner"}


def subagent_bound(store: PlanStore) -> float:
    """``subagent_timeout`` (0: none); a settings file that cannot be read bounds by the
    default (a broken file must not lift a bound; its error is said where it is used)."""
    try:
        return load_settings(store.root).subagent_timeout
    except MakerError:  # (PlanFileError: the default holds)
        return Settings().subagent_timeout


def overran(store: PlanStore, began: float | None, now: float | None = None) -> float:
    """The bound in seconds when an agent that began at ``began`` (a ``time.time()``)
    ran past it by ``now``; 0.0 when it did not, has no bound, or its start is unknown."""
    bound = subagent_bound(store)
    if not bound or began is None:
        return 0.0
    return bound if (time.time() if now is None else now) - began > bound else 0.0


def overrun_reason(agent_type: str, bound: float) -> str:
    """Why an agent was ended, as the step's record, the agent and the person read it."""
    who = AGENT_NAMES.get(agent_type, agent_type or "subagent")
    return (f"its {who} ran past subagent_timeout ({bound:g} s, plans/settings.yaml) and "
            "was ended")


def fail_overrun(store: PlanStore, run: Any, reason: str) -> int | None:
    """Record the step of ``run`` (``run_of``: step, when it began, its session) failed
    with ``reason``, if that run is still the one in progress; the step, or None when
    the run is over (it ended, was reset or taken over: nothing of it to fail)."""
    if not isinstance(run, list) or not run or not isinstance(run[0], int):
        return None
    with store.lock():
        active = store.read_active()
        mine = member(active, run[0]) if wave_of(active) else active
        if not isinstance(mine, dict) or run_of(mine) != run:
            return None
        fail_step(store, run[0], reason)
        return int(run[0])
