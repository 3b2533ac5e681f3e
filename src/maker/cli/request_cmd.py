"""``maker request``: what the person typed after ``/maker:COMMAND``, verbatim, for the
command's line to show the model (only the session id is on the command line)."""

from __future__ import annotations

import click

from maker.cli._common import data_dir_option, saved_arguments, session_option
from maker.cli.main import cli

__all__ = ["request"]


@cli.command("request", hidden=True)
@click.argument("command")
@session_option
@data_dir_option
def request(command: str, session_id: str, data_dir: str) -> None:
    """Print what the user typed after /maker:COMMAND, verbatim, between markers."""
    text = saved_arguments(session_id, command, data_dir)
    if text is None:
        click.echo(f"(maker could not read what was typed after /maker:{command}; use the "
                   "text in <command-args> above, exactly as written)")
        return
    click.echo(f"<user-text>\n{text}\n</user-text>" if text else "<user-text></user-text>")
