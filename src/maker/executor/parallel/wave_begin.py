"""``/maker:step`` with no step named: when the next ready steps may run together
(``maker.executor.parallel.waves``), start each in its own worktree and tell the main agent to
launch an executor for each, all in one message."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from maker.errors import MakerError
from maker.executor.parallel.waves import wave
from maker.executor.parallel.worktree_step import prune_worktrees, start_in_worktree
from maker.executor.rules.instructions import EXECUTOR_AGENT
from maker.executor.state.schedule import plan_schedule
from maker.executor.votes.runs import add_turn
from maker.store.settings import load_settings
from maker.store.workspace import worktree_of

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["begin_wave", "start_wave"]


def begin_wave(store: PlanStore, session_id: str, prompt_id: str,
               limit: int | None = None,
               alone: Callable[[PlanStore, int], bool] | None = None) -> list[str] | None:
    """The lines ``maker step begin`` prints for a wave it started; None when fewer than
    two steps may run together now (the next ready step starts alone, as before).
    ``limit``: how many steps may run at once (``/maker:run --parallel N``); else the
    project's ``parallel`` setting. ``alone(store, n)``: a step that may join no wave
    (one whose code maker's engine votes on): where the wave would take one, none starts."""
    begun = start_wave(store, session_id, prompt_id, limit, alone)
    if begun is None:
        return None
    started, lines = begun
    for record in started:
        lines.append(f"STARTED: step {record.number} ({record.title}) started in its own "
                     "worktree.")
    prompts = ", ".join(f'"Execute maker step {r.number}."' for r in started)
    lines.append(
        f"NEXT: launch {len(started)} {EXECUTOR_AGENT} subagents at once ({len(started)} "
        "Agent tool calls in one message, each with run_in_background: false), with the "
        f"prompts {prompts}, one each: these steps run at the same time, each in a git "
        "worktree maker made for it; maker gives each its brief with its launch. "
        "maker's verdict on each, as it returns, says what to do for that step.")
    return lines


def start_wave(store: PlanStore, session_id: str, prompt_id: str,
               limit: int | None = None,
               alone: Callable[[PlanStore, int], bool] | None = None
               ) -> tuple[list[StepRecord], list[str]] | None:
    """Start the next wave: the steps started (each in its worktree) and notes on those
    that wait; None when fewer than two steps may run together now."""
    if not store.exists():
        return None

    prune_worktrees(store)  # (what a failed step or a kill left: kept, then removed)
    plan = store.load()
    for record in plan.steps:  # (a wave a crash cut short: its worktrees made whole)
        if record.status == "in-progress" and worktree_of(store, record) is not None:
            start_in_worktree(store, record.number, session_id or None)
    limit = load_settings(store.root).parallel if limit is None else limit
    if limit < 2 or any(r.status == "in-progress" for r in plan.steps):
        return None
    picked = wave(store, plan, plan_schedule(store, plan), limit)
    if len(picked) < 2 or alone is not None and any(alone(store, n) for n in picked):
        return None
    started: list[StepRecord] = []
    lines: list[str] = []
    for n in picked:
        try:
            started.append(start_in_worktree(store, n, session_id or None, limit))
        except MakerError as exc:  # (no git, say: the rest wait; one alone starts as ever)
            if not started:
                return None
            lines.append(f"(step {n} waits: {exc})")
            break
    for record in started:
        add_turn(store, record.number, session_id, prompt_id)
    return started, lines
