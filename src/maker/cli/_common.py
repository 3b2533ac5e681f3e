"""What every maker command shares: the plans-dir option and error reporting."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from maker.core.bounded import read_regular_file, read_stdin
from maker.core.paths import find_plans_dir
from maker.errors import InputError, MakerError
from maker.store.layout import check_layout

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
