"""``maker loop stretch``: what the main agent of a ``/maker:run`` runs in the background
when maker's next action says so. maker's engine runs the plan from where it stands
until a person's decision is due or the run ends (``maker.executor.state.stretch``);
the main agent hears the next action from maker's hook when the task's notification
arrives, so what this prints is never read for a decision."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from maker.cli._common import plans_dir_option, resolve_plans_dir
from maker.cli.main import loop
from maker.cli.run_cmd import build_parts, run_until_stopped
from maker.engine.orchestrator import Orchestrator
from maker.executor.state.run import live_run
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
    with holding_stretch(store) as mine:
        if not mine:
            click.echo("maker: a stretch of this run already runs; maker speaks when it ends.")
            return
        began(store)
        parallel = live_run(store).get("parallel")
        orch = Orchestrator(store, build_parts(store, None, None),
                            parallel=parallel if isinstance(parallel, int) else 1)
        result = run_until_stopped(orch, None)
        ended(store, result.exit_code, result.message)
    click.echo(f"maker: the stretch ended (exit {result.exit_code}); maker says what is next.")
    sys.exit(0)
