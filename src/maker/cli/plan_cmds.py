"""``maker plan write | lint | show``: a plan in, checked, stored; and read back."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from maker.cli._common import (
    echo_json,
    person_only,
    plans_dir_option,
    read_input,
    reports_errors,
    resolve_plans_dir,
)
from maker.cli.main import MakerGroup, cli
from maker.core.flow import next_label
from maker.errors import MakerError, Problem
from maker.executor.acceptance.approval import adopt_approvals
from maker.planner.linter import lint_stored, lint_text
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord

__all__ = ["plan"]


@cli.group("plan", cls=MakerGroup)
def plan() -> None:
    """Write, check and show the plan."""


@plan.command("write")
@click.argument("source", metavar="FILE|-")
@click.option("--task", default=None, help="The task's text (default: the YAML's `task:`).")
@click.option("--replace", is_flag=True, help="Replace a plan that has progress (steps "
              "begun, done or waiting): it is moved to plans/archive/ first.")
@plans_dir_option
@reports_errors
def plan_write(source: str, task: str | None, replace: bool, plans_dir: Path | None) -> None:
    """Check the planner's YAML and store it as plans/ (nothing is written if it fails)."""
    parsed, problems = lint_text(read_input(source))
    if parsed is None:
        _reject(problems, "nothing was written")
    store = PlanStore(resolve_plans_dir(plans_dir))
    progress = _progress(store) if store.exists() and not replace else ""
    if progress:
        click.echo(f"maker: the plan in {store.root} has progress ({progress}); writing a "
                   f"new one moves it to {store.archive_dir}/. Nothing was written: run "
                   f"`maker plan write --replace {source}` to do that.", err=True)
        sys.exit(1)
    before = set(store.archived())
    try:
        stored = store.write_plan(parsed, task if task is not None else parsed.task)
    except OSError as exc:
        click.echo(f"maker: cannot write the plan to {store.root}: {exc.strerror or exc}",
                   err=True)
        sys.exit(1)
    n = len(stored.steps)
    click.echo(f"wrote {n} step{'s' if n != 1 else ''} to {store.root} "
               f"(PLAN.md and steps/)")
    for archived in sorted(set(store.archived()) - before):
        click.echo(f"archived the previous plan to {archived}")
    if not stored.task:
        click.echo("note: no task text (pass --task or add `task:` to the YAML)", err=True)


def _progress(store: PlanStore) -> str:
    """What of the stored plan a new one would set aside: its steps by status, but those
    still pending ("" when none has begun)."""
    try:
        steps = store.load().steps
    except MakerError as exc:
        return f"it cannot be read: {exc}"
    counts: dict[str, int] = {}
    for record in steps:
        if record.status != "pending":
            counts[record.status] = counts.get(record.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


@plan.command("lint")
@click.argument("source", metavar="[FILE|-]", required=False)
@plans_dir_option
@reports_errors
def plan_lint(source: str | None, plans_dir: Path | None) -> None:
    """Check a plan (FILE, stdin with -, or the stored plan) and list every problem."""
    if source is not None:
        parsed, problems = lint_text(read_input(source))
        steps = len(parsed.steps) if parsed is not None else 0
    else:
        store = PlanStore(resolve_plans_dir(plans_dir))
        stored = store.load()
        problems = lint_stored(stored.as_raw(), store.overview_path)
        steps = len(stored.steps)
    if problems:
        _reject(problems)
    click.echo(f"ok: {steps} step{'s' if steps != 1 else ''}")


@plan.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@plans_dir_option
@reports_errors
def plan_show(as_json: bool, plans_dir: Path | None) -> None:
    """Show the stored plan: task, reasoning and steps."""
    store = PlanStore(resolve_plans_dir(plans_dir))
    stored = store.load()
    if as_json:
        echo_json({"plans_dir": str(store.root), "task": stored.task,
                   "reasoning": stored.reasoning, "created_at": stored.created_at,
                   "steps": [_step_json(r) for r in stored.steps]})
        return
    click.echo(f"Task: {stored.task.strip() or '(none given)'}")
    click.echo("")
    click.echo("Reasoning:")
    for line in stored.reasoning.strip().splitlines():
        click.echo(f"  {line}")
    click.echo("")
    click.echo(f"Steps ({len(stored.steps)}):")
    for r in stored.steps:
        spec = r.spec
        kind = " [conditional]" if spec.is_conditional else ""
        click.echo(f"  {r.number}. {r.title}{kind}  ({r.status})")
        if spec.component:
            click.echo(f"     component: {spec.component}")
        if r.depends_on:
            click.echo(f"     depends on: {', '.join(map(str, r.depends_on))}")
        tools = [*spec.primary_tools, *(f"{t} (fallback)" for t in spec.fallback_tools)]
        if tools:
            click.echo(f"     tools: {', '.join(tools)}")
        click.echo(f"     next: {_next_text(spec.next_step_sequence_number)}")


def _reject(problems: list[Problem], consequence: str = "") -> NoReturn:
    n = len(problems)
    tail = f"; {consequence}" if consequence else ""
    click.echo(f"maker: the plan has {n} problem{'s' if n != 1 else ''}{tail}:", err=True)
    for p in problems:
        click.echo(f"- {p}", err=True)
    sys.exit(1)


def _step_json(record: StepRecord) -> dict[str, Any]:
    data = dataclasses.asdict(record.spec)
    data.update(status=record.status, depends_on=list(record.depends_on),
                path=str(record.path))
    return data


def _next_text(n: int) -> str:
    return next_label(n, step="step {n}", decided="decided at run time by this step's output")


@plan.command("adopt")
@plans_dir_option
@reports_errors
def plan_adopt(plans_dir: Path | None) -> None:
    """Re-seal the approvals of a plan approved on another machine (a person's act)."""

    by = person_only("maker plan adopt")
    adopted = adopt_approvals(PlanStore(resolve_plans_dir(plans_dir)), by)
    if not adopted:
        click.echo("every complete step's approval already holds here: nothing to adopt")
    for record in adopted:
        click.echo(f"step {record.number} ({record.title}): approval adopted "
                   f"({record.meta['approved_by']})")
