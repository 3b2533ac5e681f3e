"""``maker step``, ``maker status``, ``maker next``, ``maker context``, ``maker handoff``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from maker.cli._common import (
    echo_json,
    plans_dir_option,
    read_input,
    reports_errors,
    resolve_plans_dir,
    session_option,
)
from maker.cli.main import MakerGroup, cli
from maker.core.text import task_line
from maker.engine.ledger import Ledger, usd
from maker.errors import HandoffRejectedError, MakerError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import read_policy
from maker.executor.launch.brief import build_brief
from maker.executor.loop.report import run_json, run_lines
from maker.executor.loop.status_view import executor_bash, file_notes, summary_rows
from maker.executor.parallel.land import recover
from maker.executor.protocol.orient import DEVIATIONS, orient_section, record_orient
from maker.executor.protocol.sweep import open_proposals
from maker.executor.state.lifecycle import default_step, reset_step, start_step
from maker.executor.state.schedule import nothing_ready_reason, plan_schedule
from maker.executor.votes.runs import running_note
from maker.handoff.gate import check_handoff
from maker.planner.linter import lint_stored
from maker.store.plan_store import PlanStore
from maker.store.records import in_progress

__all__ = ["context", "handoff", "next_cmd", "status", "step"]

_TITLE_WIDTH = 48


def _store(plans_dir: Path | None) -> PlanStore:
    return PlanStore(resolve_plans_dir(plans_dir))


# -- maker step ---------------------------------------------------------------------


@cli.group("step", cls=MakerGroup)
def step() -> None:
    """Run the plan's steps one at a time: start one and print its brief, record it
    failed or put it back (reset), and a person's approve or reject of its handoff."""


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

    store = _store(plans_dir)
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

    store = _store(plans_dir)
    recover(store)  # (a landing cut short by a kill: put back first)
    result = reset_step(store, number)
    if as_json:
        echo_json(result.to_dict())
        return
    line = f"step {number}: {result.previous_status} -> pending"
    if result.archived_handoff is not None:
        line += f" (its handoff moved to {result.archived_handoff})"
    click.echo(line)


# -- maker status / next / context ----------------------------------------------------


@cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--exit-zero", is_flag=True, help="Print problems (no plan, a broken file) on "
              "stdout and exit 0: for slash-command lines, where an error aborts the command.")
@plans_dir_option
@reports_errors
def status(as_json: bool, exit_zero: bool, plans_dir: Path | None) -> None:
    """Show each step's status, what is next, and what failed and why."""

    store = _store(plans_dir)
    try:
        plan = store.load()
        sched = plan_schedule(store, plan)
    except MakerError as exc:
        if not exit_zero:
            raise
        click.echo(f"maker: {exc}")
        return
    rows = summary_rows(plan, store, sched)

    # Each file was validated on reading; the linter adds what only the whole plan shows
    # (a hand edit that makes a loop, a dangling `next`, a step reading a later output).
    problems = [str(p) for p in lint_stored(plan.as_raw(), store.overview_path)]

    policy = read_policy(store)

    ledger = Ledger(store)
    cost = ledger.summary() if ledger.exists() else None  # no ledger: no cost shown
    if as_json:
        steps = [r.to_dict() for r in rows]

        notes = file_notes(store, plan)
        for s in steps:
            s["files_note"] = notes.get(s["step"], "")
        if cost is not None:
            for s in steps:
                s["cost_usd"] = cost.by_step.get(s["step"], 0.0)
        echo_json({"plans_dir": str(store.root), "task": plan.task, "problems": problems,
                   "approval_policy": policy.name, "steps": steps,
                   "executor_bash": executor_bash(store),
                   "next": [{"step": n, "title": plan.get(n).title} for n in sched.ready],
                   "reason": nothing_ready_reason(sched, plan) or None,
                   "proposals": open_proposals(store), "run": run_json(store),
                   **({"cost": cost.to_dict()} if cost is not None else {})})
        return
    click.echo(f"Plan: {task_line(plan.task, where=str(store.overview_path))}")
    click.echo(f"approval policy: {policy.describe()}")
    click.echo(f"a step executor's Bash is held by: {executor_bash(store)}")
    table = [("step", "title", "status", *(["cost"] if cost is not None else []), "depends on")]
    for r in rows:
        title = r.title if len(r.title) <= _TITLE_WIDTH else r.title[:_TITLE_WIDTH - 1] + "…"
        spent = [] if cost is None else [
            usd(cost.by_step[r.step]) if r.step in cost.by_step else "-"]
        table.append((str(r.step), title, r.status, *spent,
                      ", ".join(map(str, r.depends_on)) or "-"))
    padded = len(table[0]) - 1
    widths = [max(len(row[i]) for row in table) for i in range(padded)]
    for row in table:
        cells = [row[i].ljust(widths[i]) for i in range(padded)]
        click.echo("  ".join([*cells, row[padded]]))
    if cost is not None:
        click.echo(cost.line())

    for n, note in sorted(file_notes(store, plan).items()):
        click.echo(f"Step {n} ({plan.get(n).title}): {note}.")
    click.echo("")
    for line in run_lines(store, plan):
        click.echo(line)

    running = running_note(store)
    if running:
        click.echo(f"Running: {running}.")
    if sched.ready:
        for n in sched.ready:
            click.echo(f"Next: step {n} ({plan.get(n).title}): /maker:step {n} in Claude "
                       f"Code, or `maker step start {n}` in a shell")
    else:
        reason = nothing_ready_reason(sched, plan)
        click.echo(reason[:1].upper() + reason[1:])
    if problems:
        click.echo(f"The plan's files have {len(problems)} problem(s), hand edits perhaps "
                   "(`maker plan lint` lists them all):")
        for text in problems[:10]:
            click.echo(f"  - {text}")
    for p in open_proposals(store):
        click.echo(f"Proposal {p['id']} (from step {p['from_step']}), yours to decide: "
                   f"{p['text']} (`/maker:proposal accept|drop {p['id']}`, or `maker proposal "
                   f"accept|drop {p['id']}` in a terminal)")
    for r in rows:
        if r.status in ("failed", "blocked"):
            why = "; ".join(r.reasons) or "no reason recorded"
            click.echo(f"{r.status[:1].upper()}{r.status[1:]}: step {r.step} ({r.title}): "
                       f"{why}")


@cli.command("next")
@click.option("--json", "as_json", is_flag=True, help="Print the ready steps as JSON.")
@plans_dir_option
@reports_errors
def next_cmd(as_json: bool, plans_dir: Path | None) -> None:
    """Show the step(s) that can start now."""

    store = _store(plans_dir)
    plan = store.load()
    sched = plan_schedule(store, plan)
    running = in_progress(plan)
    if as_json:
        echo_json({"in_progress": [{"step": r.number, "title": r.title} for r in running],
                   "next": [{"step": n, "title": plan.get(n).title} for n in sched.ready],
                   "done": all(s in ("complete", "skipped") for s in sched.statuses.values()),
                   "reason": nothing_ready_reason(sched, plan) or None})
        return
    for r in running:
        click.echo(f"step {r.number} ({r.title}) is in progress: it needs its handoff")
    for n in sched.ready:
        click.echo(f"step {n}: {plan.get(n).title}")
    if not sched.ready and not running:
        click.echo(nothing_ready_reason(sched, plan))


@cli.command("context")
@click.argument("number", type=int, required=False)
@plans_dir_option
@reports_errors
def context(number: int | None, plans_dir: Path | None) -> None:
    """Print a step's brief without starting it."""

    store = _store(plans_dir)
    plan = store.load()
    if number is None:
        number = default_step(plan, plan_schedule(store, plan))
    plan.get(number)  # StepNotFoundError naming the steps
    click.echo(build_brief(store, plan, number))


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
    executor's judgment, none, minor or major (seed 004's orient)."""

    store = _store(plans_dir)
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


# -- maker handoff ------------------------------------------------------------------


@cli.group("handoff", cls=MakerGroup)
def handoff() -> None:
    """Check or accept a step executor's handoff YAML."""


@handoff.command("check")
@click.argument("source", metavar="FILE|-")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@plans_dir_option
@reports_errors
def handoff_check(source: str, as_json: bool, plans_dir: Path | None) -> None:
    """Check a handoff without recording it (exit 1 if rejected)."""

    text = read_input(source)
    parsed, problems = check_handoff(_store(plans_dir), text)
    if as_json:
        echo_json({"valid": not problems, "step": parsed.step if parsed else None,
                   "problems": [{"field": p.field, "message": p.message, "step": p.step,
                                 "fix": p.fix} for p in problems]})
    if problems:
        if not as_json:
            click.echo(f"maker: {HandoffRejectedError(problems, 'handoff')}", err=True)
        sys.exit(1)
    if not as_json:
        assert parsed is not None
        click.echo(f"handoff for step {parsed.step} is valid ({parsed.status})")


@handoff.command("accept")
@click.argument("source", metavar="FILE|-")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@plans_dir_option
@reports_errors
def handoff_accept(source: str, as_json: bool, plans_dir: Path | None) -> None:
    """Check a handoff, then record it and move the step's status."""

    result = accept_handoff(_store(plans_dir), read_input(source))
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo(f"step {result.step}: {result.status} (handoff written to {result.path})")
    if result.notes_added:
        click.echo(f"{result.notes_added} new note(s) added to NOTES.md")
    for n, title in result.next_steps:
        click.echo(f"Next: step {n} ({title}): `maker step start {n}`")
