"""The step executor's limits on one tool call: one function, for both front ends.

The plugin's PreToolUse hook (``maker.hooks.tool_use``) and ``maker run``'s SDK session
(``maker.engine.tool_limits``) both call :func:`executor_limits`, which applies, in this
order:

1. the step's own tools and the guard (``maker.tools.guards.executor_rules.executor_decision``:
   nothing writes ``plans/`` or maker's data, no Bash that moves the plan's state);
2. orient's edit gate (``maker.executor.protocol.orient``): no edit before the step's orientation
   is recorded, none while a deviation awaits a person;
3. maker's own plumbing, as the front end runs it (``plumbing``: the plugin pins it to
   its own ``bin/maker``, ``maker run`` to its own interpreter), outside the boundary;
4. the git of a step that may only read, rewritten to run none of the programs git's
   config names (``maker.tools.guards.reader_bash.step_git_run``);
5. a Bash call in the foreground only (``run_in_background`` is refused: nothing of a
   step's keeps acting between maker's checks and the file tools' writes);
6. the OS boundary (``maker.tools.box.boundary``): every other Bash command runs in the
   step's box, or is refused when the person requires a box this machine cannot make.

What the front end does with the answer is its own: a refusal is a deny with the reason;
``run`` replaces the command (``updatedInput``); ``vouched`` allows it outright (no
permission prompt: maker's plumbing, git maker rewrote); otherwise the person's
permission mode decides, on the command as it will run.

Only what cannot be known here stays with the front end: the plugin's binding of an
executor to its run (agent ids), and AskUserQuestion in a headless run (no person).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.executor.protocol.orient import edit_refusal, edits_project
from maker.store.settings import load_settings
from maker.tools.box.boundary import boxed_command, step_network, unwrap, will_box
from maker.tools.command.maker_commands import orient_command
from maker.tools.command.maker_commands import plumbing as makers_command
from maker.tools.command.readonly import is_read_only
from maker.tools.guards.executor_rules import executor_decision
from maker.tools.guards.reader_bash import step_git_run

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["BACKGROUND_REFUSAL", "Limit", "Plumbing", "executor_limits", "is_plumbing"]


@dataclass(frozen=True)
class Limit:
    """maker's answer on one call: refused (``refusal``), run as ``run`` in its place
    (Bash), allowed outright (``vouched``), or none of these (the person's mode decides)."""

    refusal: str | None = None
    run: str | None = None
    vouched: bool = False
    why: str = ""  # what maker vouches for, shown with an allow


Plumbing = Callable[[str], "Limit | None"]
"""A front end's own way to run maker's plumbing: the Limit for a command that is it."""


BACKGROUND_REFUSAL = (
    "maker: a step executor's Bash runs in the foreground: a command left running in the "
    "background would keep acting while maker checks this step's files and its file tools "
    "write them. Send it again without run_in_background (give a long command a timeout, "
    "up to 600000 ms); a server a check needs is started and stopped in the same command.")


def executor_limits(store: PlanStore, record: StepRecord, tool: str,
                    tool_input: Mapping[str, Any], *, cwd: Path,
                    workspace: Path | None = None,
                    plumbing: Plumbing | None = None) -> Limit:
    """maker's answer on ``tool`` called with ``tool_input`` by the executor of step
    ``record`` (in progress), working in ``cwd`` (``workspace``: its worktree, when it
    runs beside others). Raises what reading the plan raises (the front ends refuse the
    call then, naming it).

    A Bash command already in the step's box, as :func:`maker.tools.box.boundary.wrap` wrote
    it (the client asks the model to send a command a hook changed again, as changed,
    so that auto mode can review what will run), is checked as the command inside it and
    runs as sent."""
    given = dict(tool_input)
    sent = given.get("command") if tool == "Bash" else None
    sent = sent if isinstance(sent, str) else ""
    inner = unwrap(sent, store.root, record.number, workspace) if sent else None
    command = sent if inner is None else inner
    moved = inner is None and bool(sent) and _moved(command, cwd, workspace, record.number)
    if moved:  # a step in its worktree: its commands run there, with no `cd` to remember
        command = f"cd {shlex.quote(str(workspace))} && {command}"
    if inner is not None or moved:
        given["command"] = command
    settings = load_settings(store.root)
    # A command that runs in the box (not maker's own, which runs outside it) is checked
    # knowing so: the kernel holds what the guard would otherwise look for in its text.
    boxed = tool == "Bash" and not is_plumbing(command, record.number) and \
        will_box(settings.boundary)
    reason = executor_decision(record.spec, tool, given, cwd=cwd, plans_root=store.root,
                               workspace=workspace, boxed=boxed)
    if reason:
        return Limit(reason)
    if edits_project(tool, command):
        refused = edit_refusal(record)
        if refused:
            return Limit(refused)
    if tool != "Bash":
        return Limit()
    if given.get("run_in_background"):
        return Limit(BACKGROUND_REFUSAL)
    if inner is None and is_plumbing(command, record.number):
        # maker's own commands run outside the box (maker verify boxes the checks it
        # runs), by maker's own program: one found on PATH may be a step's planting
        own = plumbing(command) if plumbing is not None else None
        if own is not None:
            return own
    refusal, rewritten = step_git_run(record.spec.tools, command, cwd)
    if refusal:
        return Limit(refusal)
    refusal, in_box = boxed_command(store.root, record.number, rewritten or command,
                                    workspace=workspace, writes=record.spec.writes,
                                    setting=settings.boundary,
                                    network=step_network(settings.network, record.spec.tools))
    if refusal:
        return Limit(refusal)
    if boxed and in_box is None:  # (checked as boxed: it must not run unboxed)
        return Limit("maker: this command was checked to run in the step's box, which "
                     "could not be made for it; hand off with status: blocked and this "
                     "reason.")
    if rewritten is not None:
        return Limit(run=in_box or rewritten, vouched=True,
                     why="read-only git, run without the programs git's config names")
    if in_box is None:
        return Limit(run=command if moved else None)
    if is_read_only(command):  # (no prompt would have asked, no classifier reviewed it)
        return Limit(run=in_box, vouched=True, why="a read-only command, in the step's box")
    return Limit(run=None if in_box == sent else in_box)


def _moved(command: str, cwd: Path, workspace: Path | None, step: int) -> bool:
    """Whether a worktree step's command, sent from outside its worktree, runs there
    (maker's own commands run where they are sent: they know the step's worktree)."""
    if workspace is None or is_plumbing(command, step):
        return False
    try:
        here, tree = cwd.resolve(), workspace.resolve()
    except OSError:
        return False
    return here != tree and tree not in here.parents


def is_plumbing(command: str, step: int) -> bool:
    """Whether ``command`` is exactly one of maker's own commands for step ``step``."""
    found = makers_command(command)
    if orient_command(command) == step:
        return True
    return found is not None and (found[0] not in ("context", "verify --step", "land")
                                  or found[1] == step)
