"""What ``/maker:step`` and ``/maker:reset`` lines call, with only the session id on the
command line: ``maker step begin`` starts the step the person's ``/maker:step`` names (or
asks them about unmet dependencies), ``maker step reset-request`` resets the one their
``/maker:reset`` names. Each always exits 0: a non-zero exit would abort the command before
the model sees why."""

from __future__ import annotations

import json
from pathlib import Path

import click

from maker.cli._common import (
    data_dir_option,
    plans_dir_option,
    resolve_plans_dir,
    saved_arguments,
    saved_record,
    session_option,
)
from maker.cli.main import step
from maker.core.sdk import install_sdk
from maker.errors import DependencyError, MakerError, RequestError, StepError
from maker.executor.loop.one_step import voted_code
from maker.executor.loop.words import ENGINE_GOES_ON
from maker.executor.parallel.land import recover
from maker.executor.parallel.wave_begin import begin_wave
from maker.executor.rules.vote_rules import SAMPLES_PER_K, code_votes, engine_votes
from maker.executor.state.held_vote import refuse_held
from maker.executor.state.lifecycle import reset_step, start_step
from maker.executor.state.owner import OWNER_IDLE_S, owner_gone
from maker.executor.state.run import ENGINE, ENGINE_SESSION, begin_run, note_stretch, stop_run
from maker.executor.state.stretch import STRETCH_COMMAND, stretch_runs
from maker.executor.verdicts.blocked import blocked_question
from maker.executor.votes.ballots import launch_instruction
from maker.executor.votes.runs import add_turn, running_note
from maker.hooks.wake import start_stretch
from maker.store.plan_store import PlanStore
from maker.store.requests import split_step_args

__all__ = ["ask_blocked", "step_begin", "step_reset_request"]


@step.command("begin", hidden=True)
@session_option
@click.option("--step", "step_number", type=int, default=None,
              help="The step to start, when the request could not be read.")
@click.option("--next", "next_ready", is_flag=True,
              help="Start the next ready step, when the request could not be read.")
@data_dir_option
@plans_dir_option
def step_begin(session_id: str, step_number: int | None, next_ready: bool, data_dir: str,
               plans_dir: Path | None) -> None:
    """Start the step named in this session's /maker:step request; always exits 0.

    Run from /maker:step's command line, where a non-zero exit would abort the
    command before the model sees why; so every outcome is printed instead.
    """

    saved = saved_record(session_id, "step", data_dir)
    raw = saved.get("arguments") if isinstance(saved.get("arguments"), str) else None
    if raw is None and step_number is None and not next_ready:
        click.echo("UNREAD: maker could not read what was typed after /maker:step (the "
                   "request was not saved).\nNEXT: if <command-args> names a step number N, "
                   "run `maker step begin --step N`; otherwise run `maker step begin --next`. "
                   "Then follow what it prints.")
        return
    try:
        number, force, notes = split_step_args(raw or "")
    except RequestError as exc:
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user exactly this, start no step, and "
                   "end your reply with the line STEP_BLOCKED.")
        return
    if raw is None:
        number = step_number
    store = PlanStore(resolve_plans_dir(plans_dir))
    if store.exists() and stretch_runs(store):
        # maker's engine runs the plan in a background task: a step started here would
        # have two executors at once (the engine's limits do not ask who owns a step).
        click.echo("REFUSED: maker's engine is running this plan's steps in the background "
                   "(a /maker:run); a /maker:step now would run a step twice at once. "
                   "`/maker:run --stop` lets the step that runs finish and starts nothing "
                   "more; then /maker:step works.\nNEXT: tell the user exactly this, start "
                   "no step, and end your reply with the line STEP_BLOCKED.")
        return
    if store.exists():  # a step whose vote is held for a person: nothing changes
        try:
            refuse_held(store, number)
        except StepError as exc:
            click.echo(f"REFUSED: {exc}.\nNEXT: tell the user exactly this (it is theirs to "
                       "decide, never yours), start no step, and end your reply with the "
                       "line STEP_BLOCKED.")
            return
        except MakerError:
            pass  # (a broken plan: the start below says so)
    if store.exists():  # a step typed by hand: a run that drove the plan waits for it
        with store.lock():
            stop_run(store, "the user ran /maker:step by hand; /maker:run goes on from there")
    # The user typing `/maker:step N` for the step another session owns is their consent
    # to take it over (a number only the model supplied is not); a gone owner needs none.
    taking = _take_over_reason(store, number if raw is not None else None,
                               str(saved.get("transcript_path") or ""), session_id)
    if number is None and not force:
        try:
            begun = begin_wave(store, session_id, str(saved.get("prompt_id") or ""),
                               alone=engine_votes)
        except MakerError as exc:
            click.echo(f"REFUSED: {exc}\nNEXT: tell the user, and end your reply with the "
                       "line STEP_BLOCKED.")
            return
        if begun:
            click.echo("\n".join(begun))
            return
    engine = store.exists() and voted_code(store, number)
    try:  # (a step the engine runs: started as the engine's, whose sessions take it up)
        result = start_step(store, number, force=force,
                            session_id=ENGINE_SESSION if engine else session_id or None,
                            take_over=taking is not None)
    except DependencyError as exc:
        ask_blocked(store, exc, notes)
        return
    except MakerError as exc:
        click.echo(f"REFUSED: {exc}\nNEXT: tell the user, and end your reply with the line "
                   "STEP_BLOCKED.")
        return

    running = running_note(store) if result.restarted and not taking else None
    if running:  # (its executor, in the background, while the user typed on)
        click.echo(f"REFUSED: {running}; one /maker:step runs a step at a time.\nNEXT: tell "
                   "the user exactly this (they may keep working; /maker:status shows the "
                   "step), launch nothing, and end your reply with the line STEP_BLOCKED.")
        return
    what = "resumed (it was already in progress)" if result.restarted else "started"
    if result.restarted and taking:
        what = f"taken over ({taking})"
    if engine:
        forced = " with --force (recorded)" if result.forced else ""
        click.echo(_in_engine(store, result.step, what + forced, session_id,
                              str(saved.get("prompt_id") or ""), notes))
        return
    add_turn(store, result.step, session_id, str(saved.get("prompt_id") or ""))
    click.echo(f"STARTED: step {result.step} ({result.title}) {what}"
               + (" with --force (recorded)" if result.forced else "") + ".")
    if unvoted := _unvoted_note(store, result.step):
        click.echo(unvoted)
    if notes:
        click.echo(f"Notes from the user for the executor, verbatim:\n<user-notes>\n{notes}\n"
                   "</user-notes>")
    click.echo(f"NEXT: {launch_instruction(store, result.step)}"
               + (", followed by the user's notes above, verbatim." if notes else ".")
               + " maker gives it its brief with its launch.")


def _take_over_reason(store: PlanStore, typed: int | None, transcript_path: str,
                      session_id: str) -> str | None:
    """Why this session may take over the step another session has in progress: the
    user typed its number, or its owner is gone (``maker.executor.votes.runs``; maker's
    engine, when no stretch runs); else None."""

    active = store.read_active() if store.exists() else None
    owner = active.get("session_id") if isinstance(active, dict) else None
    if not isinstance(active, dict) or not isinstance(owner, str) or not owner \
            or owner == session_id or not session_id:
        return None
    if typed is not None and typed == active.get("step"):
        return f"the user asked for step {typed} here; session {owner} had it"
    if owner.startswith(ENGINE_SESSION) and not stretch_runs(store):  # (not `maker run`'s)
        return f"maker's engine, which had it ({owner}), no longer runs"
    folder = Path(transcript_path).parent if transcript_path else None
    if owner_gone(folder, owner):
        return (f"session {owner}, which had it, has written nothing for over "
                f"{OWNER_IDLE_S // 60} minutes")
    return None


@step.command("reset-request", hidden=True)
@session_option
@data_dir_option
@plans_dir_option
def step_reset_request(session_id: str, data_dir: str, plans_dir: Path | None) -> None:
    """Reset the step named in this session's /maker:reset request; always exits 0."""

    try:
        said = saved_arguments(session_id, "reset", data_dir) or ""
        number, _, _ = split_step_args(said, "reset")
    except RequestError as exc:
        click.echo(f"REFUSED: {exc}")
        return
    if number is None:
        click.echo("REFUSED: name the step to reset, e.g. /maker:reset 3")
        return
    try:
        store = PlanStore(resolve_plans_dir(plans_dir))
        recover(store)  # (a landing a killed hook cut short: put back first)
        result = reset_step(store, number)
    except MakerError as exc:
        click.echo(f"REFUSED: {exc}")
        return
    kept = f"; its handoff was kept at {result.archived_handoff}" if result.archived_handoff \
        else ""
    click.echo(f"RESET: step {number} was {result.previous_status}, now pending{kept}.")


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


# -- a step whose code is voted on: run in maker's engine (maker.executor.loop.one_step) --

def _in_engine(store: PlanStore, n: int, what: str, session_id: str, prompt_id: str,
               notes: str) -> str:
    """Begin the run of step ``n`` alone in maker's engine, its stretch started for the
    wake on ``prompt_id``: what ``maker step begin`` prints."""
    record = store.load_step(n)
    k = code_votes(record.spec)
    with store.lock():
        begin_run(store, session_id, None, ENGINE, only=n, notes=notes)
    said = (f"STARTED: step {n} ({record.title}) {what}. Its code is voted on (votes: {k}): "
            f"{k} to {SAMPLES_PER_K * k} samples, each a session of maker's engine in a "
            "worktree of its own, outside this conversation; the step's checks, gate and "
            "review run there too, and maker asks the user what is theirs to decide"
            + (" (the user's notes go to every session)" if notes else "") + ".")
    if prompt_id and start_stretch(store, prompt_id) is not None:
        return f"{said}\nNEXT: end your turn in a sentence: {ENGINE_GOES_ON}."
    note_stretch(store, wake_for=prompt_id, wake_at=None)  # (no wake waits: none began)
    return (f"{said}\nNEXT: run `{STRETCH_COMMAND}` (Bash, run_in_background true), then "
            "end your turn in a sentence.")


def _unvoted_note(store: PlanStore, n: int) -> str:
    """What the person is told when step ``n`` asks for a vote on its code and maker's
    engine is not here to hold it ("" otherwise)."""
    try:
        k = code_votes(store.load_step(n).spec)
    except MakerError:
        return ""
    if k < 2 or engine_votes(store, n):
        return ""
    return (f"(Step {n} asks for a vote on its code (votes: {k}), which runs in maker's "
            "engine, and claude-agent-sdk is not installed beside maker: one executor "
            f"answers it. Tell the user so; `{install_sdk()}` installs it.)")
