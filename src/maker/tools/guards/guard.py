"""The step executor's guard: it cannot move the plan's state or touch maker's files.

Whatever tools its step lists, the executor may not

* write into ``plans/`` (Write, Edit, MultiEdit, NotebookEdit; in a worktree, nor into its
  copy of ``plans/``), nor name ``plans/`` or
  maker's data directory (where the sealing key lives, ``maker.store.seal``) in a Bash
  command: to read, write, link, copy, move, ``cd`` into or delete it;
* run maker's commands that move the plan's state (``maker step …``, ``maker handoff
  accept``, ``maker plan write``, …): of maker's commands only
  ``maker.tools.command.maker_commands.EXECUTOR_COMMANDS`` (``maker verify --step N``, ``maker
  context N``, ``maker status``, …) may run.

The places are ``maker.tools.box.protected``'s; a Bash command is read by
``maker.tools.guards.guard_bash`` (through the shell lexer, never as raw text).

Code the executor writes to a file and then runs (a test, a script) is not read: the
guard stops a model taking a shortcut, not a person with a shell
(docs/internals.md#what-maker-guarantees).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from maker.core.paths import project_of
from maker.tools.box.protected import resolve
from maker.tools.box.runs_later import runs_later
from maker.tools.guards.guard_bash import BashGuard

__all__ = ["WRITERS", "bash_refusal", "executor_refusal"]

# maker's own program: the plugin's root (src/maker/tools/guards -> the root)
_PROGRAM = Path(__file__).resolve().parents[4]
# Tools that write files, and the key of the path they write.
WRITERS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
           "NotebookEdit": "notebook_path"}
_READERS = {"Read": "file_path", "NotebookRead": "notebook_path", "Grep": "path",
            "Glob": "path", "LS": "path"}
_SEARCHERS = ("Grep", "Glob", "LS")  # (they read every file below the path they are given)


def executor_refusal(tool: str, tool_input: Mapping[str, Any], *, cwd: Path,
                     plans_root: Path, data_dirs: tuple[Path, ...] | None = None,
                     home: Path | None = None, workspace: Path | None = None,
                     step: int | None = None, writes: Sequence[str] | None = None,
                     boxed: bool = False) -> str | None:
    """Why the step executor may not make this call, or None when the guard allows it
    (the step's own tool list is checked apart, by ``maker.tools.guards.permissions``).

    ``data_dirs`` defaults to ``maker_data_dirs()``, ``home`` to the user's home;
    ``workspace`` is the worktree of a step run beside others (it writes only there);
    ``step``, the executor's own step (``maker land`` lands no other); ``writes``, what
    the step says it changes (it may name a file that runs code later); ``boxed``: a Bash
    command runs in the step's OS boundary (``maker.tools.box.boundary``).
    """
    guard = BashGuard(plans_root, data_dirs, home, workspace, step=step, boxed=boxed)
    if tool == "Bash":
        command = tool_input.get("command")
        return guard.bash(command if isinstance(command, str) else "", cwd)
    key = WRITERS.get(tool) or _READERS.get(tool)
    value = tool_input.get(key) if key else None
    if tool in _SEARCHERS and value in (None, ""):
        value = str(cwd)  # (a search with no path searches where it runs)
    if not isinstance(value, str) or not value:
        return None
    if "\0" in value:  # (no file has that name: a call that cannot be read says no)
        return "maker: the path holds a NUL byte, which no file name can; give the path itself."
    path = resolve(cwd, value)
    if guard.inside(path, guard.key_dirs) or (tool in _SEARCHERS and any(
            guard.inside(key, (path,)) for key in guard.key_dirs)):
        return guard.key_text()  # (a search of a folder above it reads it too)
    if tool in WRITERS and guard.workspace_git(path):
        return guard.git_text()
    if tool in WRITERS and guard.names_plans_copy(value, cwd):
        return guard.plans_copy_text()
    if workspace is not None and tool in WRITERS and not guard.in_workspace(path):
        return guard.workspace_text()
    if tool in WRITERS:
        what = runs_later(path, workspace or project_of(plans_root), writes, home, _PROGRAM)
        if what is not None:
            return (f"maker: {value[:200]} is {what}: what a step writes there runs later, "
                    "outside its box, so its file tools may not write it unless the plan's "
                    "step names it in `writes`. Do the step without it, or hand off with "
                    "status: blocked and say why it is needed.")
    if guard.in_workspace(path):
        return None
    if tool in WRITERS and guard.inside(path, guard.plan_dirs):
        return guard.plans_text()
    if tool in WRITERS and guard.inside(path, guard.git_places):
        return guard.git_text()
    return None


def bash_refusal(command: str, *, cwd: Path, plans_root: Path,
                 data_dirs: tuple[Path, ...] | None = None, home: Path | None = None,
                 workspace: Path | None = None) -> str | None:
    """Why the step executor may not run this Bash command, or None."""
    return BashGuard(plans_root, data_dirs, home, workspace).bash(command, cwd)
