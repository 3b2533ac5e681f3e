"""maker's commands for a person's decisions on what a step's protocol asks them (seed
004): a change of scope a step proposed (``maker proposal``), and the question that
``maker step begin`` asks about a step whose dependencies are unmet."""

from __future__ import annotations

import json
from pathlib import Path

import click

from maker.cli._common import person_only, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.executor.protocol.sweep import decide_proposal
from maker.executor.verdicts.blocked import blocked_question
from maker.store.plan_store import PlanStore

__all__ = ["ask_blocked", "proposal_cmd"]


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



def ask_blocked(store: PlanStore, exc: Exception, notes: str) -> None:
    """A step whose dependencies are unmet: the user decides whether to start it anyway
    (``maker.executor.verdicts.blocked``), asked with maker's question."""


    n = getattr(exc, "step", None)
    missing = getattr(exc, "missing", None)
    if not isinstance(n, int) or not isinstance(missing, dict):
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user which steps must be completed "
                   "first, and end your reply with the line STEP_BLOCKED.")
        return
    title = store.load_step(n).title
    click.echo(f"ASK: {exc}")
    if notes:
        click.echo(f"Notes from the user for the executor, verbatim:\n<user-notes>\n{notes}\n"
                   "</user-notes>")
    click.echo("ask: " + json.dumps(blocked_question(n, title, missing), ensure_ascii=False))
    click.echo(f"NEXT: ask the user with AskUserQuestion, with exactly the input on the "
               "`ask:` line (never answer it yourself); maker records their answer and tells "
               "you what to do. Without AskUserQuestion (print mode), tell the user that "
               f"`/maker:step {n} --force` starts it anyway, and end with STEP_BLOCKED.")
