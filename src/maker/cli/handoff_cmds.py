"""``maker handoff check|accept``: a step executor's handoff YAML, checked by code, and
recorded when it holds."""

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
)
from maker.cli.main import MakerGroup, cli
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.handoff.gate import check_handoff
from maker.store.plan_store import PlanStore

__all__ = ["handoff", "handoff_accept", "handoff_check"]


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
    parsed, problems = check_handoff(PlanStore(resolve_plans_dir(plans_dir)), text)
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

    result = accept_handoff(PlanStore(resolve_plans_dir(plans_dir)), read_input(source))
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo(f"step {result.step}: {result.status} (handoff written to {result.path})")
    if result.notes_added:
        click.echo(f"{result.notes_added} new note(s) added to NOTES.md")
    for n, title in result.next_steps:
        click.echo(f"Next: step {n} ({title}): `maker step start {n}`")
