"""``maker calibrate STEP``: sample one step several times and ask the law what lead a
vote on it needs. Headless, like ``maker run``; changes only the ledger."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from maker.cli._common import plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.cli.run_cmd import BUDGET, MODEL, build_parts
from maker.engine.budget import Budget
from maker.engine.calibrate import calibrate as run_calibration
from maker.store.plan_store import PlanStore

__all__ = ["calibrate"]


@cli.command("calibrate")
@click.argument("step", type=click.IntRange(min=0))
@click.option("--samples", type=click.IntRange(2, 100), default=10, show_default=True,
              help="How many isolated samples to draw.")
@click.option("--target", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.95, show_default=True, help="The whole-task success to aim for.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="The number of voted steps the law plans for (default: the plan's "
                   "steps that can vote).")
@MODEL("The executor's model (default: the step's).")
@BUDGET("Stop drawing once the samples cost this much.")
@plans_dir_option
@reports_errors
def calibrate(step: int, samples: int, target: float, steps: int | None, model: str | None,
              max_budget_usd: float | None, plans_dir: Path | None) -> None:
    """Sample STEP several times: how often do its answers agree, and what vote lead
    (maker run --vote K) does the law ask for?"""

    store = PlanStore(resolve_plans_dir(plans_dir))
    parts = build_parts(store, None, model)
    if max_budget_usd is not None:  # this command's samples, not the plan's earlier runs
        parts.budget = Budget(max_budget_usd, parts.ledger, own_calls=True)
    result = asyncio.run(run_calibration(store, parts, step, samples, target=target,
                                         steps=steps))
    click.echo(f"step {result.step} ({result.title}): {result.samples} samples, "
               f"{len(result.flagged)} flagged, {result.voted} voted; cost "
               f"${result.cost_usd:.4f}")
    for answer, count in result.tally[:8]:
        click.echo(f"  {count:>3}  {answer}")
    for why in result.flagged[:3]:
        click.echo(f"  flagged: {why[:150]}")
    if result.voted:
        low, high = result.interval
        click.echo(f"agreement: {result.tally[0][1]}/{result.voted} = {result.agreement:.2f} "
                   f"(95% interval {low:.2f}-{high:.2f}), taken as one sample's success p "
                   "(it assumes the most common answer is right: check the tally)")
    if result.k is not None:
        low_k = f"; {result.k_low} at the interval's low end" if result.k_low else \
            "; the interval's low end is not above one half"
        click.echo(f"the law: for {result.steps} voted step{'s' if result.steps != 1 else ''} "
                   f"and a whole-task success of {result.target}, k = {result.k}{low_k}")
        click.echo(f"  maker run --vote {result.k}    or    maker run --target-success "
                   f"{result.target} --sample-success {result.agreement:.2f}")
    for note in result.notes:
        click.echo(note)
