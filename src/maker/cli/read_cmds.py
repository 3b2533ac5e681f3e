"""``maker next`` and ``maker orient``: what can start now, and a step's orient (what
maker's code finds before the work, and the executor's judgment recorded)."""

from __future__ import annotations

from pathlib import Path

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.executor.protocol.orient import DEVIATIONS, orient_section, record_orient
from maker.executor.state.held_vote import held_note
from maker.executor.state.schedule import nothing_ready_reason, plan_schedule
from maker.store.plan_store import PlanStore
from maker.store.records import in_progress

__all__ = ["next_cmd", "orient"]


@cli.command("next")
@click.option("--json", "as_json", is_flag=True, help="Print the ready steps as JSON.")
@plans_dir_option
@reports_errors
def next_cmd(as_json: bool, plans_dir: Path | None) -> None:
    """Show the step(s) that can start now."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    plan = store.load()
    sched = plan_schedule(store, plan)
    running = in_progress(plan)
    if as_json:
        echo_json({"in_progress": [{"step": r.number, "title": r.title, "held": held_note(r)}
                                   for r in running],
                   "next": [{"step": n, "title": plan.get(n).title} for n in sched.ready],
                   "done": all(s in ("complete", "skipped") for s in sched.statuses.values()),
                   "reason": nothing_ready_reason(sched, plan) or None})
        return
    for r in running:
        need = held_note(r) or "it needs its handoff"
        click.echo(f"step {r.number} ({r.title}) is in progress: {need}")
    for n in sched.ready:
        click.echo(f"step {n}: {plan.get(n).title}")
    if not sched.ready and not running:
        click.echo(nothing_ready_reason(sched, plan))


@cli.command("orient")
@click.argument("number", type=int)
@click.argument("deviation", required=False, type=click.Choice(DEVIATIONS))
@click.option("--what", default="", help="What changed (minor and major).")
@click.option("--revised", default="", help="The step's task as it should now read (major).")
@plans_dir_option
@reports_errors
def orient(number: int, deviation: str | None, what: str, revised: str,
           plans_dir: Path | None) -> None:
    """Before a step's work: what maker's code finds (no DEVIATION), or record the
    executor's judgment, none, minor or major (seed 004's orient,
    docs/architecture.md#the-seeds)."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    if deviation is None:
        plan = store.load()
        plan.get(number)
        click.echo(orient_section(store, plan, number))
        return
    entry = record_orient(store, number, deviation, what, revised)
    if entry["deviation"] != "major":
        note = f": {entry['what_changed']}" if entry["what_changed"] else ""
        click.echo(f"maker: step {number} oriented ({entry['deviation']}{note}). Go on with "
                   "the step.")
        return
    overruled = entry["overruled_by_code"]
    forced = (" maker's own checks make it major: " + "; ".join(overruled) + "."
              if overruled else "")
    click.echo(f"maker: step {number} deviates from the plan (major), recorded.{forced} A "
               "person decides before anything is edited: stop now, and answer with one "
               "line: DEVIATION")
