"""``maker step approve|reject|outcome``: the end of a step, as /maker:step drives it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.step_cmds import step
from maker.store.plan_store import PlanStore

__all__ = ["REVIEW_THRESHOLD", "step_approve", "step_outcome", "step_reject"]

# Seed 004: an independent review when a step touched this many files or more.
REVIEW_THRESHOLD = 5


@step.command("approve")
@click.argument("number", type=int)
@click.option("--by", default="user", help="Who approved (recorded in the step file).")
@plans_dir_option
@reports_errors
def step_approve(number: int, by: str, plans_dir: Path | None) -> None:
    """Approve a step whose handoff was accepted: it becomes complete."""
    from maker.executor.approval import approve_step

    record = approve_step(PlanStore(resolve_plans_dir(plans_dir)), number, by)
    click.echo(f"step {record.number} ({record.title}) approved: complete")


@step.command("reject")
@click.argument("number", type=int)
@click.option("--notes", default="", help="What to change: the next attempt's brief shows it.")
@plans_dir_option
@reports_errors
def step_reject(number: int, notes: str, plans_dir: Path | None) -> None:
    """Send an accepted step back to pending, with revision notes."""
    from maker.executor.approval import reject_step

    result = reject_step(PlanStore(resolve_plans_dir(plans_dir)), number, notes)
    click.echo(f"step {result.step} rejected: back to pending; the next `maker step start "
               f"{result.step}` brief carries the notes")


def outcome(store: PlanStore, n: int) -> dict[str, Any]:
    """Where step ``n`` ended up after its executor returned, and what to do next."""
    from maker.executor.approval import autoapprove, is_awaiting

    record = store.load_step(n)
    handoff = store.read_handoff(n) or {}
    files = [str(f) for f in handoff.get("files_changed") or []]
    out: dict[str, Any] = {"step": n, "title": record.title, "status": record.status,
                           "handoff": str(store.handoff_path(n)) if handoff else None,
                           "summary": str(handoff.get("summary") or "").strip(),
                           "files_changed": files,
                           "review_required": len(files) >= REVIEW_THRESHOLD,
                           "reasons": [str(r) for r in record.meta.get("reasons") or []]}
    if is_awaiting(record):
        out["status"] = "awaiting-approval"
        out["next"] = (f"ask the user to approve step {n}; then `maker step approve {n}` "
                       f"and end with STEP_COMPLETE, or `maker step reject {n} --notes "
                       "'<their notes>'` and end with STEP_REJECTED")
        out["sentinel"] = None
    elif record.status == "complete":
        out["approval"] = "auto" if autoapprove() else "done"
        out["next"], out["sentinel"] = "report the step's summary", "STEP_COMPLETE"
    elif record.status == "failed":
        out["next"], out["sentinel"] = "report why it failed", "STEP_FAILED"
    elif record.status == "blocked":
        out["next"], out["sentinel"] = "report what blocks it", "STEP_BLOCKED"
    elif record.status == "in-progress":
        out["next"] = ("no accepted handoff yet: launch maker:step-executor again with "
                       f"`maker context {n}` as its prompt")
        out["sentinel"] = None
    else:
        out["next"], out["sentinel"] = "the step is not running", "STEP_BLOCKED"
    return out


@step.command("outcome")
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
    click.echo(f"files changed: {len(data['files_changed'])}")
    if data["review_required"]:
        click.echo(f"review: required ({len(data['files_changed'])} files changed): launch "
                   "maker:reviewer with the handoff before asking for approval")
    click.echo(f"next: {data['next']}")
    if data["sentinel"]:
        click.echo(f"sentinel: {data['sentinel']}")
