"""The ``maker`` command: a thin click adapter over the core.

Command modules are imported only when their command runs (the plugin calls
``maker`` several times a step, so start-up time is paid often). Each module
registers its commands on ``cli`` when imported.
"""

from __future__ import annotations

import importlib

import click

from maker import __version__

__all__ = ["cli", "main"]

# command name -> the modules that define it (and its subcommands)
_STEP = ("maker.cli.step_cmds", "maker.cli.flow_cmds")
_COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "plan": ("maker.cli.plan_cmds",),
    "step": _STEP,
    "status": _STEP,
    "next": _STEP,
    "context": _STEP,
    "handoff": _STEP,
    "request": _STEP,
    "policy": _STEP,
    "verify": ("maker.cli.verify_cmd",),
    "demo": ("maker.cli.demo_cmd",),
    "run": ("maker.cli.run_cmd",),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(_COMMAND_MODULES) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module in _COMMAND_MODULES.get(cmd_name, ()):
            importlib.import_module(module)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="maker")
def cli() -> None:
    """Plan long work as typed steps; run each step in an isolated subagent."""


def main() -> None:
    cli(prog_name="maker")


if __name__ == "__main__":
    main()
