"""A person's decisions: approve or reject a step (``maker step approve|reject``), who
approves (``maker policy``), and a change of scope a step proposed (``maker proposal``)."""

from __future__ import annotations

from pathlib import Path

import click

from maker.cli._common import person_only, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli, step
from maker.executor.acceptance.approval import approve_step, read_policy, reject_step, set_policy
from maker.executor.protocol.orient import person_decides
from maker.executor.protocol.sweep import decide_proposal
from maker.store.plan_store import PlanStore

__all__ = ["policy_cmd", "proposal_cmd", "step_approve", "step_reject"]


@step.command("approve")
@click.argument("number", type=int)
@plans_dir_option
@reports_errors
def step_approve(number: int, plans_dir: Path | None) -> None:
    """Approve a step whose handoff was accepted (a person's decision): it becomes complete."""

    by = person_only(f"maker step approve {number}", f"/maker:approve {number}")
    store = PlanStore(resolve_plans_dir(plans_dir))
    if _deviation(store, number, True, by):
        click.echo(f"step {number}: the revised step is approved; continue it with `maker run` "
                   f"or /maker:step {number}")
        return
    record = approve_step(store, number, by)
    click.echo(f"step {record.number} ({record.title}) approved: complete")


def _deviation(store: PlanStore, n: int, approve: bool, by: str, notes: str = "") -> bool:
    """A person's decision on step ``n``'s pending deviation, if one is pending
    (``maker.executor.protocol.orient``): what ``approve`` and ``reject`` decide first."""

    return person_decides(store, n, approve, by, notes) is not None


@step.command("reject")
@click.argument("number", type=int)
@click.option("--notes", default="", help="What to change: the next attempt's brief shows it.")
@click.option("--from-review", is_flag=True,
              help="Take the notes from the recorded review's findings.")
@plans_dir_option
@reports_errors
def step_reject(number: int, notes: str, from_review: bool, plans_dir: Path | None) -> None:
    """Send an accepted step back to pending with revision notes (a person's decision)."""

    by = person_only(f"maker step reject {number}", f"/maker:reject {number} <what to change>")
    store = PlanStore(resolve_plans_dir(plans_dir))
    if not from_review and _deviation(store, number, False, by, notes):
        click.echo(f"step {number}: its revision is rejected; back to pending, nothing edited")
        return
    result = reject_step(store, number, notes, from_review, by=by)
    click.echo(f"step {result.step} rejected: back to pending; the next `maker step start "
               f"{result.step}` brief carries the notes")


@cli.command("policy")
@click.argument("name", required=False, type=click.Choice(["never", "reviewer", "auto"]))
@plans_dir_option
@reports_errors
def policy_cmd(name: str | None, plans_dir: Path | None) -> None:
    """Show or set who approves steps: never (a person), reviewer, or auto."""

    store = PlanStore(resolve_plans_dir(plans_dir))
    if name is None:
        click.echo(f"approval policy: {read_policy(store).describe()}")
        return
    policy = set_policy(store, name, person_only(f"maker policy {name}", f"/maker:policy {name}"))
    click.echo(f"approval policy set: {policy.describe()}")


@cli.command("proposal")
@click.argument("decision", type=click.Choice(["accept", "drop"]))
@click.argument("number", type=int)
@plans_dir_option
@reports_errors
def proposal_cmd(decision: str, number: int, plans_dir: Path | None) -> None:
    """Accept or drop a change of scope a step proposed (a person's decision); an accepted
    one becomes a decision in NOTES.md, which every later step reads."""

    by = person_only(f"maker proposal {decision} {number}",
                     f"/maker:proposal {decision} {number}")
    found = decide_proposal(PlanStore(resolve_plans_dir(plans_dir)), number,
                            decision == "accept", by)
    click.echo(f"proposal {number} {found['status']}: {found['text']}")
