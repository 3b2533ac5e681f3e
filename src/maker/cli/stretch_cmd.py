"""``maker loop stretch``: what the main agent of a ``/maker:run`` runs in the background
when maker's next action says so. maker's engine runs the plan from where it stands
until a person's decision is due or the run ends (``maker.executor.state.stretch``);
the main agent hears the next action from maker's hook when the task's notification
arrives, so what this prints is never read for a decision."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import click

from maker.cli._common import plans_dir_option, resolve_plans_dir
from maker.cli.main import loop
from maker.cli.run_cmd import build_parts, run_until_stopped
from maker.core.events import Event, StepCompleted, StepFailed, StepStarted
from maker.engine.budget import Budget
from maker.engine.ledger import Ledger
from maker.engine.orchestrator import Orchestrator
from maker.errors import MakerError
from maker.executor.state.run import (
    ENGINE_SESSION,
    live_run,
    note_budget,
    note_step,
    run_only,
    stop_is_asked,
)
from maker.executor.state.stretch import began, ended, holding_stretch, stretch_start
from maker.store.plan_store import PlanStore

__all__ = ["loop_stretch"]


@loop.command("stretch")
@plans_dir_option
def loop_stretch(plans_dir: Path | None) -> None:
    """Run the plan in maker's engine until a person's decision is due (/maker:run)."""
    store = PlanStore(resolve_plans_dir(plans_dir))
    why = stretch_start(store) if store.exists() else "there is no plan here"
    if why:
        click.echo(f"maker: no stretch runs: {why}.")
        return
    # Another stretch may run: one a closed session left behind (a killed client's
    # background task can outlive it). This one waits for it to end, then goes on from
    # where it left plans/, so that this session hears when the work is done.
    with holding_stretch(store, wait=True) as mine:
        if not mine or stretch_start(store):
            click.echo("maker: no stretch runs: the run ended or stopped meanwhile.")
            return
        began(store)
        parts = build_parts(store, None, None)
        parts.session_id = f"{ENGINE_SESSION}-{uuid.uuid4().hex[:12]}"  # (a stretch's)
        notes = _StepNotes(store, parts.ledger)
        parts.budget = _run_budget(store, parts.ledger)
        parts.keep_going = lambda: not stop_is_asked(store)
        parallel = live_run(store).get("parallel")
        orch = Orchestrator(store, parts,
                            parallel=parallel if isinstance(parallel, int) else 1,
                            on_event=notes, only=run_only(store))
        try:
            result = run_until_stopped(orch, None)
        except BaseException as exc:  # (a bug: said where the main agent hears it)
            ended(store, 1, f"maker's engine failed: {type(exc).__name__}: {exc}")
            raise
        notes.finish()
        ended(store, result.exit_code, result.message)
    click.echo(f"maker: the stretch ended (exit {result.exit_code}); maker says what is next.")


def _run_budget(store: PlanStore, ledger: Ledger) -> Budget | None:
    """The budget a person gave this run (``/maker:run --max-budget-usd X``), counted
    from the ledger's totals when its first stretch began (kept in the run's record);
    None without one."""
    budget = live_run(store).get("budget")
    if not isinstance(budget, dict) or not isinstance(budget.get("max_usd"), (int, float)):
        return None
    if "base_usd" not in budget:
        budget = note_budget(store, base_usd=ledger.total(),
                             base_unknown=ledger.unknown_costs())
        if not budget:
            return None  # (the run ended meanwhile: nothing to hold)
    return Budget(float(budget["max_usd"]), ledger,
                  since=(float(budget["base_usd"]), int(budget["base_unknown"])),
                  hint="What is done is kept; `/maker:run --max-budget-usd X` goes on with a "
                       "new budget of X.")


class _StepNotes:
    """Each step's entry in the run's record as the engine goes (``maker status`` and the
    run's report read it): running, then its status, with the time, tokens and cost of
    every SDK call of the step (each attempt, refused and failed ones included) as the
    ledger recorded them from the SDK's results, never from the model."""

    def __init__(self, store: PlanStore, ledger: Ledger) -> None:
        self.store, self.ledger = store, ledger
        self.began: set[int] = set()  # (steps begun and not yet noted)

    def __call__(self, event: Event) -> None:
        if isinstance(event, StepStarted):
            self.began.add(event.step)
            # ("began": a step no verdict told of is said at the next /maker:run)
            note_step(self.store, event.step, status="running", began=time.time())
        elif isinstance(event, (StepCompleted, StepFailed)):
            self.note(event.step, isinstance(event, StepFailed))

    def finish(self) -> None:
        """The steps this stretch began and left unsaid (one that awaits a person)."""
        for n in list(self.began):
            self.note(n, False)

    def note(self, n: int, failed: bool) -> None:
        self.began.discard(n)
        calls = [c for c in self.ledger.calls() if c.step == n]
        try:
            status = self.store.load_step(n).status
        except MakerError:
            status = "failed" if failed else "complete"
        note_step(self.store, n, status=status,
                  duration_ms=sum(c.duration_ms for c in calls),
                  input_tokens=sum(c.input_tokens for c in calls),
                  output_tokens=sum(c.output_tokens for c in calls),
                  cache_creation_tokens=sum(c.cache_creation_tokens for c in calls),
                  cache_read_tokens=sum(c.cache_read_tokens for c in calls),
                  tokens=sum(c.input_tokens + c.output_tokens + c.cache_creation_tokens
                             + c.cache_read_tokens for c in calls),
                  cost_usd=round(sum(c.cost_usd for c in calls), 6),
                  unknown_costs=sum(1 for c in calls if not c.cost_known),
                  calls=len(calls))
