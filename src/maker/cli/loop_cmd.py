"""``maker loop begin``: what ``/maker:run`` runs on its command line. It begins the run
(or resumes the one that has not ended), tells what ended unseen since the last verdict,
and prints the one next action (``maker.executor.loop``)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from maker.cli._common import (
    data_dir_option,
    plans_dir_option,
    resolve_plans_dir,
    saved_record,
    session_option,
)
from maker.cli.main import loop
from maker.core.sdk import install_sdk
from maker.errors import MakerError
from maker.executor.loop.actions import Action
from maker.executor.loop.next_action import loop_lock, next_action
from maker.executor.loop.words import ENGINE_GOES_ON, begin_text, unseen
from maker.executor.parallel.land import recover
from maker.executor.rules.vote_rules import engine_here
from maker.executor.state.run import (
    ENGINE,
    SUBAGENTS,
    ask_stop,
    begin_run,
    live_run,
    note_stretch,
    run_mode,
    stop_run,
)
from maker.executor.state.stretch import stretch_runs
from maker.hooks.wake import start_stretch
from maker.store.plan_store import PlanStore

__all__ = ["loop_begin", "run_args"]

_USAGE = ("type /maker:run, with any of: --parallel N (at most N steps at once, N from 1), "
          "--max-budget-usd X (stop before the next call once the run's SDK calls cost X "
          "US dollars), --subagents (each step a subagent of this session, not maker's "
          "engine); or /maker:run --stop (finish what runs, start nothing more)")
_NUMBER = re.compile(r"\A\d{1,9}(?:\.\d{1,6})?\Z")


def run_args(raw: str) -> dict[str, object] | str:
    """The options of a typed ``/maker:run``: ``parallel`` (int or None),
    ``budget`` (float or None), ``subagents`` (bool); or what is wrong, as a message."""
    words = raw.replace("=", " ").split()
    found: dict[str, object] = {"parallel": None, "budget": None, "subagents": False,
                                "stop": False}
    seen: set[str] = set()
    while words:
        word = words.pop(0)
        if word in seen:
            return f"{word} is given twice"
        seen.add(word)
        if word in ("--subagents", "--stop"):
            found[word[2:]] = True
        elif word in ("--parallel", "--max-budget-usd"):
            value = words.pop(0) if words else ""
            if not _NUMBER.match(value) or float(value) <= 0 or (
                    word == "--parallel" and (not value.isdigit() or int(value) > 16)):
                return f"{word} needs a number above 0, not {value[:20]!r}" + (
                    " (a whole number, at most 16)" if word == "--parallel" else "")
            found["parallel" if word == "--parallel" else "budget"] = \
                int(value) if word == "--parallel" else float(value)
        else:
            return f"{word[:30]!r} is not an option of /maker:run"
    if found["stop"] and len(seen) > 1:
        return "--stop goes alone"
    return found


@loop.command("begin")
@session_option
@data_dir_option
@plans_dir_option
def loop_begin(session_id: str, data_dir: str, plans_dir: Path | None) -> None:
    """Begin or resume the run typed as /maker:run; always exits 0 (a command line's
    failure would abort the command before the model sees why)."""

    saved = saved_record(session_id, "run", data_dir)
    raw = saved.get("arguments")
    if not isinstance(raw, str):  # a run is the person's to begin: /maker:run, typed
        click.echo("REFUSED: maker found no /maker:run typed in this session (in the last "
                   "few minutes): a run begins only when the user types it.\nTell the user "
                   "so, and end with the line RUN_STOPPED.")
        return
    args = run_args(raw)
    if isinstance(args, str):
        click.echo(f"REFUSED: `/maker:run {str(raw)[:60]}` is not understood: {args}; "
                   f"{_USAGE}.\nTell the user exactly this, and end with the line "
                   "RUN_STOPPED.")
        return
    if args["stop"]:
        click.echo(_stop(resolve_plans_dir(plans_dir)))
        return
    parallel = args["parallel"] if isinstance(args["parallel"], int) else None
    budget = args["budget"] if isinstance(args["budget"], float) else None
    mode = SUBAGENTS if args["subagents"] or not _engine_here() else ENGINE
    note = "" if args["subagents"] or mode == ENGINE else (
        "\n(maker's engine needs claude-agent-sdk beside maker, which is not installed, so "
        "each step runs as a subagent of this session; tell the user that "
        f"`{install_sdk()}` "
        "installs it for the next /maker:run.)")
    if budget is not None and mode != ENGINE:
        click.echo("REFUSED: --max-budget-usd holds maker's engine to a budget; with "
                   "--subagents (or without claude-agent-sdk) the client runs the steps "
                   "and maker cannot stop them by cost.\nTell the user exactly this, and "
                   "end with the line RUN_STOPPED.")
        return
    try:
        click.echo(_begin(resolve_plans_dir(plans_dir), session_id,
                          str(saved.get("prompt_id") or ""), parallel, mode, budget) + note)
    except (MakerError, OSError) as exc:  # (a file where maker keeps its state, say)
        click.echo(f"REFUSED: {exc}\nTell the user exactly this, and end with the line "
                   "RUN_STOPPED.")


def _stop(root: Path) -> str:
    """A person's graceful stop: what runs finishes, nothing more starts."""
    store = PlanStore(root)
    if not store.exists() or not live_run(store):
        return ("maker: no run is going on, so there is nothing to stop. Tell the user so in "
                "a sentence, and end with the line RUN_STOPPED.")
    with loop_lock(store):
        if run_mode(store) == ENGINE and stretch_runs(store):
            ask_stop(store)
            return ("maker: the run stops once the step(s) running now finish; nothing more "
                    "starts, and maker says when it has stopped. Tell the user so in a "
                    "sentence, and end your turn.")
        stop_run(store, "the user stopped it (/maker:run --stop)")
    return ("maker: the run stopped (nothing was running); /maker:run goes on from here. "
            "Tell the user so in a sentence, and end with the line RUN_STOPPED.")


def _engine_here() -> bool:
    """Whether maker's engine can run here: claude-agent-sdk is installed beside maker."""
    return engine_here()


def _begin(root: Path, session_id: str, prompt_id: str, parallel: int | None,
           mode: str, budget: float | None = None) -> str:
    store = PlanStore(root)
    if not store.exists():
        return ("REFUSED: there is no plan here to run. Tell the user to make one with "
                "/maker:plan <task>, and end with the line RUN_STOPPED.")

    recover(store)  # (a landing a killed hook cut short: put back before going on)
    with loop_lock(store):
        with store.lock():
            run, resumed = begin_run(store, session_id, parallel, mode, budget)
        seen = unseen(store)
        try:
            action = next_action(store, session_id, prompt_id, typed=True)
        except MakerError as exc:  # (what ended unseen is said all the same)
            said = "".join(f"\n- {line}" for line in seen)
            return (f"REFUSED: {exc}\nTell the user exactly this, and end with the line "
                    f"RUN_STOPPED." + (f"\nSince the last verdict you saw:{said}" if seen
                                       else ""))
        if mode == ENGINE and prompt_id:
            action = _started(store, action, prompt_id)
        return begin_text(store, run, resumed, action, seen)


def _started(store: PlanStore, action: Action, prompt_id: str) -> Action:
    """The typed run's next stretch, started here when it is the next action: the main
    agent ends its turn, and maker's wake on this prompt (``maker.hooks.wake``) wakes it
    when the stretch ends; else the action as it was (the wake is told not to wait)."""
    if action.kind == "stretch" and start_stretch(store, prompt_id) is not None:
        return Action("started", f"Next: end your turn in a sentence: {ENGINE_GOES_ON}.")
    note_stretch(store, wake_for=prompt_id, wake_at=None)
    return action
