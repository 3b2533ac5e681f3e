"""``maker land N``: bring the change of step N, run beside others in its own worktree,
into the main checkout (``maker.executor.parallel.land``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.executor.parallel.land import land_step
from maker.executor.parallel.land_gate import landing_text
from maker.store.plan_store import PlanStore

__all__ = ["land"]


@cli.command("land")
@click.argument("step", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the landing as JSON.")
@plans_dir_option
@reports_errors
def land(step: int, as_json: bool, plans_dir: Path | None) -> None:
    """Bring a step's worktree change into the main checkout, verified there."""
    store = PlanStore(resolve_plans_dir(plans_dir))
    landing = land_step(store, step)
    if as_json:
        echo_json(landing.to_dict())
    else:
        click.echo(landing_text(landing))
    sys.exit(0 if landing.kind in ("landed", "nothing") else 1)
