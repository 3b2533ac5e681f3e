"""``maker land N``: bring the change of step N, run beside others in its own worktree,
into the main checkout (``maker.executor.land``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.executor.land import MAX_LAND_ATTEMPTS, Landing, land_step
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


def landing_text(landing: Landing) -> str:
    """What the step's executor (or a person) reads of it."""
    n = landing.step
    if landing.kind == "landed":
        return (f"maker: step {n}'s change landed in the main checkout "
                f"({len(landing.files)} file(s): {', '.join(landing.files[:20])}), and its "
                "verification passed there. Nothing more is edited for this step: "
                "hand off now.")
    if landing.kind == "nothing":
        return f"maker: step {n} has no worktree change to land ({landing.reason or 'none'})."
    if landing.failed:
        return (f"maker: step {n}'s change could not land: {landing.reason}. It ran on a "
                f"new base {MAX_LAND_ATTEMPTS} times, and the step has failed: hand off "
                "with status: failed and this reason in blockers.")
    return (f"maker: step {n}'s change could not land: {landing.reason}. Nothing of it "
            f"was kept in the main checkout. maker cut a new worktree from the main "
            f"checkout as it is now: {landing.again}. Do the step again there (the same "
            f"relative paths; the other change is in it), then `maker verify --step "
            f"{n}` and `maker land {n}` again.")
