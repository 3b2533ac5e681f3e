"""``maker step start|reset|fail|outcome`` and ``maker context``: a step's lifecycle from a
shell, and the brief it starts with."""

from __future__ import annotations

import json
from pathlib import Path

import click

from maker.cli._common import (
    echo_json,
    plans_dir_option,
    reports_errors,
    resolve_plans_dir,
    session_option,
)
from maker.cli.main import cli, step
from maker.executor.launch.brief import build_brief
from maker.executor.parallel.land import recover
from maker.executor.state.held_vote import refuse_held
from maker.executor.state.lifecycle import default_step, fail_step, reset_step, start_step
from maker.executor.state.schedule import plan_schedule
from maker.executor.verdicts.outcome import outcome
from maker.store.plan_store import PlanStore

__all__ = ["context", "step_fail", "step_outcome", "step_reset", "step_start"]


@step.command("start")
@click.argument("number", type=int, required=False)
@click.option("--force", is_flag=True, help="Start even if depends_on are not complete "
              "(the override is recorded in the step file).")
@session_option
@click.option("--take-over", is_flag=True, help="Take over the step in progress from the "
              "Claude Code session that started it (crashed, or to be given up).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@plans_dir_option
@reports_errors
def step_start(number: int | None, force: bool, session_id: str, take_over: bool,
               as_json: bool, plans_dir: Path | None) -> None:
    """Start a step (default: the next ready one) and print its brief."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    refuse_held(store, number)  # (its vote held for a person: theirs to decide, not ours)
    result = start_step(store, number, force=force, session_id=session_id or None,
                        take_over=take_over)
    brief = build_brief(store, None, result.step)
    if as_json:
        echo_json({**result.to_dict(), "brief": brief})
        return
    if result.restarted:
        click.echo(f"maker: step {result.step} is already in progress; its brief again:",
                   err=True)
    elif result.forced:
        click.echo(f"maker: step {result.step} started with --force (recorded in its step "
                   "file)", err=True)
    click.echo(brief)


@step.command("reset")
@click.argument("number", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@plans_dir_option
@reports_errors
def step_reset(number: int, as_json: bool, plans_dir: Path | None) -> None:
    """Put a step back to pending (its handoff is archived, not deleted)."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    recover(store)  # (a landing cut short by a kill: put back first)
    result = reset_step(store, number)
    if as_json:
        echo_json(result.to_dict())
        return
    line = f"step {number}: {result.previous_status} -> pending"
    if result.archived_handoff is not None:
        line += f" (its handoff moved to {result.archived_handoff})"
    click.echo(line)


@step.command("fail")
@click.argument("number", type=int)
@click.option("--reason", "reasons", multiple=True, required=True,
              help="Why the step failed (repeat for several reasons).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@plans_dir_option
@reports_errors
def step_fail(number: int, reasons: tuple[str, ...], as_json: bool,
              plans_dir: Path | None) -> None:
    """Record the step in progress as failed, with the reasons."""

    record = fail_step(PlanStore(resolve_plans_dir(plans_dir)), number, list(reasons))
    if as_json:
        echo_json({"step": number, "status": record.status,
                   "reasons": record.meta.get("reasons", [])})
        return
    click.echo(f"step {number}: failed ({'; '.join(record.meta.get('reasons', []))}). "
               f"`maker step reset {number}` to try it again.")


@step.command("outcome", hidden=True)
@click.argument("number", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@plans_dir_option
@reports_errors
def step_outcome(number: int, as_json: bool, plans_dir: Path | None) -> None:
    """Where a step ended up after its executor returned, and what to do next."""

    data = outcome(PlanStore(resolve_plans_dir(plans_dir)), number)
    if as_json:
        echo_json(data)
        return
    click.echo(f"step {data['step']}: {data['title']}")
    click.echo(f"status: {data['status']}")
    if data["summary"]:
        click.echo(f"summary: {data['summary']}")
    if data["reasons"]:
        click.echo("reasons: " + "; ".join(data["reasons"]))
    counted = "measured by maker" if data["files_measured"] else "the executor's claim"
    click.echo(f"files changed: {len(data['files_changed'])} ({counted})")
    if data["files_note"]:
        click.echo(f"note: {data['files_note']}")
    if data["review_required"]:
        click.echo(f"review: required ({data['review_why']}): launch maker:reviewer with "
                   "the handoff before asking for approval")
    elif data["review_skipped"]:
        click.echo("review: skipped (STEP_SKIP_REVIEW=1): the user decides")
    if data.get("ask"):
        click.echo(f"ask: {json.dumps(data['ask'], ensure_ascii=False)}")
    click.echo(f"next: {data['next']}")
    if data["sentinel"]:
        click.echo(f"sentinel: {data['sentinel']}")


@cli.command("context")
@click.argument("number", type=int, required=False)
@plans_dir_option
@reports_errors
def context(number: int | None, plans_dir: Path | None) -> None:
    """Print a step's brief without starting it."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    plan = store.load()
    if number is None:
        number = default_step(plan, plan_schedule(store, plan))
    plan.get(number)  # StepNotFoundError naming the steps
    click.echo(build_brief(store, plan, number))
