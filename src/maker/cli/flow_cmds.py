"""``maker step approve|reject|outcome``: the end of a step, as /maker:step drives it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.cli.step_cmds import step
from maker.errors import RequestError
from maker.store.plan_store import PlanStore

__all__ = ["outcome", "step_approve", "step_outcome", "step_reject"]

# A command's `!` line runs moments after the prompt that expanded it was saved.
_FRESH_S = 300.0
# A command's !`…` line does not get CLAUDE_PLUGIN_DATA in its environment (hooks do),
# so the line passes the dir the UserPromptSubmit hook saved the request in.
_data_dir_option = click.option(
    "--data-dir", envvar="CLAUDE_PLUGIN_DATA", default="",
    help="Where the UserPromptSubmit hook saved the request: the plugin's data dir "
         "(default: $CLAUDE_PLUGIN_DATA, else ~/.local/share/maker).")


def _saved(session_id: str, command: str, data_dir: str) -> str | None:
    from maker.core.requests import load_request

    return load_request(session_id, command, Path(data_dir) if data_dir else None,
                        max_age_s=_FRESH_S)


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
@click.option("--from-review", is_flag=True,
              help="Take the notes from the recorded review's findings.")
@plans_dir_option
@reports_errors
def step_reject(number: int, notes: str, from_review: bool, plans_dir: Path | None) -> None:
    """Send an accepted step back to pending, with revision notes."""
    from maker.executor.approval import reject_step

    result = reject_step(PlanStore(resolve_plans_dir(plans_dir)), number, notes, from_review)
    click.echo(f"step {result.step} rejected: back to pending; the next `maker step start "
               f"{result.step}` brief carries the notes")


def outcome(store: PlanStore, n: int) -> dict[str, Any]:
    """Where step ``n`` ended up after its executor returned, and what to do next."""
    from maker.executor.approval import autoapprove, is_awaiting, review_required

    record = store.load_step(n)
    handoff = store.read_handoff(n) or {}
    files = [str(f) for f in handoff.get("files_changed") or []]
    out: dict[str, Any] = {"step": n, "title": record.title, "status": record.status,
                           "handoff": str(store.handoff_path(n)) if handoff else None,
                           "summary": str(handoff.get("summary") or "").strip(),
                           "files_changed": files,
                           "review_required": review_required(files),
                           "reasons": [str(r) for r in record.meta.get("reasons") or []]}
    if is_awaiting(record) and autoapprove():
        # Only a large step waits in a headless run: the reviewer decides.
        out["status"] = "awaiting-approval"
        out["next"] = (f"launch maker:reviewer; if its verdict is approve, run `maker step "
                       f"approve {n} --by reviewer` and end with STEP_COMPLETE; otherwise "
                       f"`maker step reject {n} --from-review` and end with STEP_REJECTED")
        out["sentinel"] = None
    elif is_awaiting(record):
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


# -- what /maker:<command> lines call, with only the session id on the command line ----


@cli.command("request")
@click.argument("command")
@click.option("--session", "session_id", envvar="CLAUDE_CODE_SESSION_ID", default="",
              help="The Claude Code session (default: $CLAUDE_CODE_SESSION_ID).")
@_data_dir_option
def request(command: str, session_id: str, data_dir: str) -> None:
    """Print what the user typed after /maker:COMMAND, verbatim, between markers."""
    text = _saved(session_id, command, data_dir)
    if text is None:
        click.echo(f"(maker could not read what was typed after /maker:{command}; use the "
                   "text in <command-args> above, exactly as written)")
        return
    click.echo(f"<user-text>\n{text}\n</user-text>" if text else "<user-text></user-text>")


_STEP_ARG = re.compile(r"\A\s*(?:step\s*)?#?([0-9]+)(?=\s|[.:,;]|\Z)[.:,;]?", re.I | re.A)


_NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def _split_step_args(text: str, command: str = "step") -> tuple[int | None, bool, str]:
    """``"3 --force make it fast"`` → ``(3, True, "make it fast")``; also ``step 3``,
    ``#3``. Nothing at all: ``(None, False, "")``, the next ready step.

    The form is ``/maker:<command> [N] [--force] [notes]``, and notes follow a number:
    text that starts with anything else (``two``, ``abc``, ``2abc``) raises
    RequestError rather than run the next ready step with it as notes.
    """
    number: int | None = None
    m = _STEP_ARG.match(text)
    if m:
        number = int(m.group(1))
        text = text[m.end():]
    text = text.strip()
    force = False
    if text.split(maxsplit=1)[:1] == ["--force"]:
        force = True
        text = text[len("--force"):].strip()
    if number is None and text:
        word = text.split(maxsplit=1)[0]
        guess = _NUMBER_WORDS.get(word.casefold().strip(".,:;"))
        use = f"/maker:{command} {guess if guess is not None else 'N'}"
        rest = f"/maker:{command} N your notes" if guess is None else f"{use} your notes"
        alone = (", or /maker:step with no argument for the next ready step"
                 if command == "step" else "")
        raise RequestError(f"`{word[:40]}` is not a step number: use {use}{alone}. Notes "
                           f"follow the step number ({rest}).")
    return number, force, text


@step.command("begin")
@click.option("--session", "session_id", envvar="CLAUDE_CODE_SESSION_ID", default="",
              help="The Claude Code session (default: $CLAUDE_CODE_SESSION_ID).")
@click.option("--step", "step_number", type=int, default=None,
              help="The step to start, when the request could not be read.")
@click.option("--next", "next_ready", is_flag=True,
              help="Start the next ready step, when the request could not be read.")
@_data_dir_option
@plans_dir_option
def step_begin(session_id: str, step_number: int | None, next_ready: bool, data_dir: str,
               plans_dir: Path | None) -> None:
    """Start the step named in this session's /maker:step request; always exits 0.

    Run from /maker:step's command line, where a non-zero exit would abort the
    command before the model sees why; so every outcome is printed instead.
    """
    from maker.errors import DependencyError, MakerError
    from maker.executor.lifecycle import start_step

    raw = _saved(session_id, "step", data_dir)
    if raw is None and step_number is None and not next_ready:
        click.echo("UNREAD: maker could not read what was typed after /maker:step (the "
                   "request was not saved).\nNEXT: if <command-args> names a step number N, "
                   "run `maker step begin --step N`; otherwise run `maker step begin --next`. "
                   "Then follow what it prints.")
        return
    try:
        number, force, notes = _split_step_args(raw or "")
    except RequestError as exc:
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user exactly this, start no step, and "
                   "end your reply with the line STEP_BLOCKED.")
        return
    if raw is None:
        number = step_number
    store = PlanStore(resolve_plans_dir(plans_dir))
    try:
        result = start_step(store, number, force=force, session_id=session_id or None)
    except DependencyError as exc:
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user which steps must be completed "
                   "first, and end your reply with the line STEP_BLOCKED.")
        return
    except MakerError as exc:
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user, and end your reply with the line "
                   "STEP_BLOCKED.")
        return
    what = "resumed (it was already in progress)" if result.restarted else "started"
    click.echo(f"STARTED: step {result.step} ({result.title}) {what}"
               + (" with --force (recorded)" if result.forced else "") + ".")
    if notes:
        click.echo(f"Notes from the user for the executor, verbatim:\n<user-notes>\n{notes}\n"
                   "</user-notes>")
    click.echo(f"NEXT: launch the maker:step-executor subagent (run_in_background: false) "
               f"with the prompt \"Execute maker step {result.step}.\""
               + (" followed by the user's notes above, verbatim." if notes else "")
               + f" It reads its own brief with `maker context {result.step}`.")


@step.command("reset-request")
@click.option("--session", "session_id", envvar="CLAUDE_CODE_SESSION_ID", default="",
              help="The Claude Code session (default: $CLAUDE_CODE_SESSION_ID).")
@_data_dir_option
@plans_dir_option
def step_reset_request(session_id: str, data_dir: str, plans_dir: Path | None) -> None:
    """Reset the step named in this session's /maker:reset request; always exits 0."""
    from maker.errors import MakerError
    from maker.executor.lifecycle import reset_step

    try:
        number, _, _ = _split_step_args(_saved(session_id, "reset", data_dir) or "", "reset")
    except RequestError as exc:
        click.echo(f"REFUSED: {exc}")
        return
    if number is None:
        click.echo("REFUSED: name the step to reset, e.g. /maker:reset 3")
        return
    try:
        result = reset_step(PlanStore(resolve_plans_dir(plans_dir)), number)
    except MakerError as exc:
        click.echo(f"REFUSED: {exc}")
        return
    kept = f"; its handoff was kept at {result.archived_handoff}" if result.archived_handoff \
        else ""
    click.echo(f"RESET: step {number} was {result.previous_status}, now pending{kept}.")
