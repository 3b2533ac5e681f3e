"""What every maker command shares: the plans-dir and session options, error reporting."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from maker.core.bounded import read_regular_file, read_stdin
from maker.core.paths import find_plans_dir
from maker.errors import InputError, MakerError
from maker.store.layout import check_layout
from maker.store.requests import load_request_record

__all__ = ["data_dir_option", "echo_json", "plans_dir_option", "read_input", "reports_errors",
           "resolve_plans_dir", "saved_arguments", "saved_record", "session_option"]

F = TypeVar("F", bound=Callable[..., Any])

plans_dir_option = click.option(
    "--plans-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="MAKER_PLANS_DIR",
    default=None,
    help="The plans directory (default: plans/ at the project root). Env: MAKER_PLANS_DIR.",
)

# The Claude Code session a command acts for. Both spellings are accepted everywhere (the
# /maker: commands write `--session`, `maker step start` documented `--session-id`); the
# Bash tool's environment has MAKER_SESSION_ID (scripts/hook exports it), Claude Code's
# own CLAUDE_CODE_SESSION_ID. "" when none is known.
session_option = click.option(
    "--session", "--session-id", "session_id",
    envvar=["MAKER_SESSION_ID", "CLAUDE_CODE_SESSION_ID"],
    default="",
    help="The Claude Code session (default: $MAKER_SESSION_ID, else $CLAUDE_CODE_SESSION_ID).",
)


def resolve_plans_dir(plans_dir: Path | None) -> Path:
    """The plans directory; PlanFileError when an entry in it has the wrong kind."""
    root = find_plans_dir(plans_dir)
    check_layout(root)
    return root


def reports_errors(func: F) -> F:
    """Turn a MakerError into its message on stderr and exit code 1 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MakerError as exc:
            click.echo(f"maker: {exc}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def read_input(source: str) -> bytes:
    """The bytes of FILE, or of stdin when FILE is ``-``, within maker's input limit.

    Raises InputError (exit 1) for stdin over the limit, and a usage error (exit 2)
    for a FILE that cannot be read, is not a regular file or is over the limit."""
    if source == "-":
        return read_stdin()
    try:
        return read_regular_file(source)
    except OSError as exc:
        raise click.BadParameter(f"cannot read {source}: {exc.strerror}") from None
    except InputError as exc:  # a directory, a FIFO, a device, too large
        raise click.BadParameter(f"cannot read {source}: {exc}") from None


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _claude_ancestor() -> bool:
    """Whether a Claude Code process started this one (Linux: the parent chain in
    /proc), so that clearing the environment does not make the model a person."""
    pid = os.getppid()
    for _ in range(64):
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read(4096)
        except OSError:
            return False
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        if comm == "claude":
            return True
        fields = stat[stat.rfind(")") + 2:].split()
        pid = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
    return False


def person_only(command: str, instead: str = "") -> str:
    """Who decides: a person at a terminal. Raises click.UsageError when run inside
    Claude Code (its Bash tool, or anything it started), where it would be the model
    deciding for the user. ``instead``: how the user decides from Claude Code."""
    not_inside_claude_code(command, instead)
    if not is_terminal():
        raise click.UsageError(
            f"`{command}` is a person's decision: run it in a terminal (its input is not "
            "one here, so no person is there to decide)"
            + (f", or type `{instead}` in Claude Code." if instead else "."))
    return "person (terminal)"


def not_inside_claude_code(command: str, instead: str = "") -> None:
    """Raise click.UsageError when run inside Claude Code (its Bash tool, or anything it
    started): for a person's decision, made there it would be the model's. A script or
    CI outside Claude Code passes (``maker run --approve``, set by whoever runs it)."""
    if os.environ.get("CLAUDECODE") or os.environ.get("CLAUDE_CODE_ENTRYPOINT") \
            or _claude_ancestor():
        raise click.UsageError(
            f"`{command}` is a person's decision and does not run inside Claude Code, "
            "where the model would be deciding for the user. "
            + (f"The user types `{instead}` in Claude Code, or runs" if instead
               else "The user runs") + " this command in a terminal of their own.")


def is_terminal() -> bool:
    """Whether standard input is a terminal, where a person can be."""
    try:
        return os.isatty(0)
    except OSError:
        return False


# A command's `!` line runs moments after the prompt that expanded it was saved.
_FRESH_S = 300.0
# A command's !`…` line does not get CLAUDE_PLUGIN_DATA in its environment (hooks do),
# so the line passes the dir the UserPromptSubmit hook saved the request in.
data_dir_option = click.option(
    "--data-dir", envvar="CLAUDE_PLUGIN_DATA", default="",
    help="Where the UserPromptSubmit hook saved the request: the plugin's data dir "
         "(default: $CLAUDE_PLUGIN_DATA, else ~/.local/share/maker).")


def saved_record(session_id: str, command: str, data_dir: str) -> dict[str, Any]:
    return load_request_record(session_id, command, Path(data_dir) if data_dir else None,
                               max_age_s=_FRESH_S) or {}


def saved_arguments(session_id: str, command: str, data_dir: str) -> str | None:
    args = saved_record(session_id, command, data_dir).get("arguments")
    return args if isinstance(args, str) else None
