"""``maker status``: each step's status, what is next, and what failed and why."""

from __future__ import annotations

import time
from pathlib import Path

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.core.text import task_line
from maker.engine.ledger import Ledger, usd
from maker.errors import MakerError
from maker.executor.acceptance.approval import read_policy
from maker.executor.loop.report import run_json, run_line, run_lines
from maker.executor.loop.status_view import (
    box_network,
    executor_bash,
    file_notes,
    main_bash,
    summary_rows,
)
from maker.executor.protocol.sweep import open_proposals
from maker.executor.rules.step_rules import settings
from maker.executor.state.schedule import nothing_ready_reason, plan_schedule
from maker.executor.votes.runs import running_note
from maker.planner.linter import lint_stored
from maker.store.plan_store import PlanStore

__all__ = ["status"]

_TITLE_WIDTH = 48


@cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--exit-zero", is_flag=True, help="Print problems (no plan, a broken file) on "
              "stdout and exit 0: for slash-command lines, where an error aborts the command.")
@click.option("--watch", is_flag=True, help="Follow a /maker:run in a terminal: step k of "
              "n, what runs, what waits for you, time and spend, every few seconds until "
              "the run ends (Ctrl-C to leave).")
@click.option("--every", type=click.FloatRange(0.5, 3600), default=2.0, metavar="SECONDS",
              help="With --watch: seconds between two looks (default 2).")
@click.option("--line", "one_line", is_flag=True, help="The /maker:run in one line, for "
              "Claude Code's status line (statusLine in your settings): k of n, what runs, "
              "what waits for you, time and spend; nothing when no run goes on.")
@plans_dir_option
@reports_errors
def status(as_json: bool, exit_zero: bool, watch: bool, every: float, one_line: bool,
           plans_dir: Path | None) -> None:
    """Show each step's status, what is next, and what failed and why."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    if one_line:  # (every few seconds, beside the person's prompt: quiet on any problem)
        try:
            said = run_line(store, store.load()) if store.exists() else ""
        except MakerError:
            said = ""
        if said:
            click.echo(said)
        return
    if watch:
        _watch(store, every)
        return
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
                   "executor_bash": executor_bash(store), "box": box_network(store),
                   "main_bash": main_bash(store),
                   "bounds": {key: getattr(settings(store.root), key)
                              for key in ("session_timeout", "subagent_timeout")},
                   "next": [{"step": n, "title": plan.get(n).title} for n in sched.ready],
                   "reason": nothing_ready_reason(sched, plan) or None,
                   "proposals": open_proposals(store), "run": run_json(store),
                   **({"cost": cost.to_dict()} if cost is not None else {})})
        return
    click.echo(f"Plan: {task_line(plan.task, where=str(store.overview_path))}")
    click.echo(f"approval policy: {policy.describe()}")
    click.echo(f"a step executor's Bash is held by: {executor_bash(store)}")
    if box := box_network(store):
        click.echo(f"in a step's box, {box}")
    click.echo(f"the main agent's Bash is held by: {main_bash(store)}")
    bounds = settings(store.root)
    for what, key, limit in (("each session of maker's engine", "session_timeout",
                              bounds.session_timeout),
                             ("each of the plugin's subagents", "subagent_timeout",
                              bounds.subagent_timeout)):
        click.echo(f"{what} may take: " + (f"{limit:g} s ({key})" if limit
                                           else f"no limit ({key}: 0)"))
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
        if r.held:
            click.echo(f"Waits for you: step {r.step} ({r.title}): {r.held}")
        if r.status in ("failed", "blocked"):
            why = "; ".join(r.reasons) or "no reason recorded"
            click.echo(f"{r.status[:1].upper()}{r.status[1:]}: step {r.step} ({r.title}): "
                       f"{why}")


def _watch(store: PlanStore, every: float) -> None:
    """``maker status --watch``: the run's lines, anew every ``every`` seconds, until no
    run goes on; costs the person's Claude Code session nothing (it reads plans/)."""
    began = time.monotonic()
    ledger = Ledger(store)  # (one: it reads only what was appended since its last look)
    try:
        while True:
            plan = store.load()
            lines = run_lines(store, plan)
            spent = ledger.summary().line() if ledger.exists() else "spent: nothing yet"
            stamp = f"[{int(time.monotonic() - began)} s]"
            if not lines:
                click.echo(f"{stamp} no /maker:run goes on here; {spent}.")
                return
            click.echo("\n".join([f"{stamp} {lines[0]}", *lines[1:], f"  {spent}", ""]))
            time.sleep(every)
    except KeyboardInterrupt:
        return
