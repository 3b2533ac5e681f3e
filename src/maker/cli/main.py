"""The ``maker`` command: a thin click adapter over the core."""

from __future__ import annotations

import importlib

import click

from maker import __version__

__all__ = ["cli", "main"]

# Each module registers its commands on ``cli`` when imported; a module that is
# not there yet (or fails to import) must not take the whole CLI down with it.
_COMMAND_MODULES = (
    "maker.cli.plan_cmds",
    "maker.cli.step_cmds",
    "maker.cli.flow_cmds",
    "maker.cli.demo_cmd",
    "maker.cli.verify_cmd",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="maker")
def cli() -> None:
    """Plan long work as typed steps; run each step in an isolated subagent."""


for _name in _COMMAND_MODULES:
    try:
        importlib.import_module(_name)
    except ModuleNotFoundError as exc:
        if exc.name != _name:
            raise


def main() -> None:
    cli(prog_name="maker")


if __name__ == "__main__":
    main()
