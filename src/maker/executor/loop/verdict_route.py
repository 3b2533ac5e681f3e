"""Which of maker's verdicts the main agent reads when one of maker's subagents returns.

In a ``/maker:run`` of subagents, the run's short word with its one next action
(``maker.executor.loop.words``), taken under the loop's lock, since a wave's verdicts come
at once and the first may end the run; else the verdict on that subagent alone
(``maker.executor.verdicts.verdict``). A foreground launch's Agent call ends with its
verdict (``launch_id``). The hooks carry the words (``maker.hooks.verdicts``,
``maker.hooks.notifications``); which words, and what they end, are decided here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maker.executor.loop.next_action import loop_lock
from maker.executor.loop.words import after_the_run, executor_said, reviewer_said
from maker.executor.state.run import in_run, live_run
from maker.executor.verdicts.verdict import executor_verdict, planner_verdict, reviewer_verdict
from maker.executor.votes.runs import end_launches

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["Returned", "verdict_for"]


@dataclass(frozen=True)
class Returned:
    """One of maker's subagents that returned: its type (``maker:reviewer``), its
    record's ``facts``, the Agent call that ends with it in the foreground (``""`` in the
    background), the main agent's turn, and what the client counted of it."""

    agent: str
    facts: dict[str, Any]
    launch_id: str = ""
    session_id: str = ""
    prompt_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)


def verdict_for(store: PlanStore, returned: Returned) -> str:
    """maker's verdict on ``returned`` ("" for a subagent that is not maker's)."""
    agent, facts = returned.agent, returned.facts
    if agent.endswith(":planner"):
        return planner_verdict(facts)
    if not agent.endswith((":step-executor", ":reviewer")):
        return ""
    if store.exists() and in_run(store, facts.get("step")):
        with loop_lock(store):  # (a wave's verdicts, at once: one starts what follows)
            if live_run(store):  # (again, in turn: the other may have ended the run)
                return _run_verdict(store, returned)
            _end_launch(store, returned)
            return after_the_run(store, facts)
    if agent.endswith(":step-executor"):
        _end_launch(store, returned)
        return executor_verdict(store, facts)
    return reviewer_verdict(store, facts)


def _run_verdict(store: PlanStore, returned: Returned) -> str:
    """The verdict in a ``/maker:run``: short, with the run's one next action."""
    turn = (returned.session_id, returned.prompt_id)
    if returned.agent.endswith(":reviewer"):
        return reviewer_said(store, returned.facts, *turn)
    _end_launch(store, returned)
    return executor_said(store, returned.facts, *turn, returned.usage)


def _end_launch(store: PlanStore, returned: Returned) -> None:
    step = returned.facts.get("step")
    if returned.launch_id and store.exists():  # the foreground: its Agent call ended here
        end_launches(store, step if isinstance(step, int) else None, returned.launch_id)
