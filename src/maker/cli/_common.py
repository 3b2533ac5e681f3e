"""What every maker command shares: the plans-dir option and error reporting."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from maker.core.paths import find_plans_dir
from maker.errors import MakerError

__all__ = ["echo_json", "plans_dir_option", "read_input", "reports_errors", "resolve_plans_dir"]

F = TypeVar("F", bound=Callable[..., Any])

plans_dir_option = click.option(
    "--plans-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="MAKER_PLANS_DIR",
    default=None,
    help="The plans directory (default: plans/ at the project root). Env: MAKER_PLANS_DIR.",
)


def resolve_plans_dir(plans_dir: Path | None) -> Path:
    return find_plans_dir(plans_dir)


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
    """The bytes of FILE, or of stdin when FILE is ``-``."""
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {source}: {exc.strerror}") from None


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
    if os.environ.get("CLAUDECODE") or os.environ.get("CLAUDE_CODE_ENTRYPOINT") \
            or _claude_ancestor():
        raise click.UsageError(
            f"`{command}` is a person's decision and does not run inside Claude Code, "
            "where the model would be deciding for the user. "
            + (f"The user types `{instead}` in Claude Code, or runs" if instead
               else "The user runs") + " this command in a terminal of their own.")
    return "person (terminal)"
