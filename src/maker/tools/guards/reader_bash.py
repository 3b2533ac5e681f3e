"""The Bash of an agent that only reads (the planner, the reviewer), decided in one place
for both of maker's hosts: the plugin's PreToolUse hook (``maker.hooks.tool_use``) and
the headless reviewer's SDK session (``maker.engine.sessions``).

It runs read-only commands (``maker.tools.command.readonly``), a read-only git command as
``maker.tools.git.git_programs`` rewrites it (none of the programs git's config names), and,
for the reviewer, ``maker verify --step N``; anything else is refused, with the reason
written for the model. An executor whose step may only read has its git rewritten too
(:func:`step_git_run`), by both hosts.
"""

from __future__ import annotations

from pathlib import Path

from maker.tools.command.readonly import why_not_read_only
from maker.tools.command.shell import Refused
from maker.tools.git.git_programs import program_free
from maker.tools.guards.permissions import MAKER_COMMAND

__all__ = ["git_run", "reader_bash", "step_git_run"]


def reader_bash(command: str, cwd: Path, *, who: str,
                may_verify: bool = False) -> tuple[str | None, str | None]:
    """``(refusal, run)`` for a reading agent's Bash ``command`` in ``cwd``: why it may not
    run, or None; and, when it may, the command to run in its place, or None to run it as
    it is. ``who`` names the agent in the refusal; ``may_verify``: ``maker verify`` too."""
    if may_verify and MAKER_COMMAND.match(command):
        return None, None
    reason = why_not_read_only(command)
    if reason is not None:
        return (f"maker: the {who} only reads. This command was refused because {reason}. "
                "Use Read, or read-only commands such as ls, rg, grep, find, git "
                "log/show/diff/status."), None
    return git_run(command, cwd)


def step_git_run(tools: list[str], command: str, cwd: Path) -> tuple[str | None, str | None]:
    """``git_run`` for the Bash of an executor whose step lists ``tools``, when the step
    may only read with it (no ``Bash`` of its own: read-only commands, its ``Bash(...)``
    rules); ``(None, None)`` for a step that may run anything."""
    return (None, None) if "Bash" in tools else git_run(command, cwd)


def git_run(command: str, cwd: Path) -> tuple[str | None, str | None]:
    """``(refusal, run)`` for a Bash ``command`` maker lets an agent run: its git made to
    run none of the programs git's config names (``program_free``), or refused when it
    cannot be; ``(None, None)``: run it as it is."""
    try:
        return None, program_free(command, cwd)
    except Refused as refused:
        return f"maker: this git command was refused because {refused.reason}.", None
