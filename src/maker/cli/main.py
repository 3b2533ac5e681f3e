"""The ``maker`` command: a thin click adapter over the core.

Command modules are imported only when their command runs (the plugin calls
``maker`` several times a step, so start-up time is paid often). Each module
registers its commands on ``cli`` (or ``step``) when imported.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from typing import Any

import click

from maker import __version__

__all__ = ["MakerGroup", "cli", "loop", "main", "step"]

# command -> the module that defines it, imported when the command runs: each module's
# imports are what its commands need (`maker orient` loads no brief, `maker next` no ledger)
_COMMAND_MODULES: dict[str, str] = {
    "plan": "maker.cli.plan_cmds",
    "status": "maker.cli.status_cmd",
    "next": "maker.cli.read_cmds",
    "orient": "maker.cli.read_cmds",
    "context": "maker.cli.step_cmds",
    "handoff": "maker.cli.handoff_cmds",
    "request": "maker.cli.request_cmd",
    "policy": "maker.cli.decide_cmds",
    "proposal": "maker.cli.decide_cmds",
    "verify": "maker.cli.verify_cmd",
    "land": "maker.cli.land_cmd",
    "demo": "maker.cli.demo_cmd",
    "run": "maker.cli.run_cmd",
    "calibrate": "maker.cli.calibrate_cmd",
}
# `maker step SUBCOMMAND` -> its module, the same way
_STEP_MODULES: dict[str, str] = {
    "start": "maker.cli.step_cmds",
    "reset": "maker.cli.step_cmds",
    "fail": "maker.cli.step_cmds",
    "outcome": "maker.cli.step_cmds",
    "approve": "maker.cli.decide_cmds",
    "reject": "maker.cli.decide_cmds",
    "begin": "maker.cli.begin_cmds",
    "reset-request": "maker.cli.begin_cmds",
}
# `maker loop SUBCOMMAND` (/maker:run's plumbing) -> its module, the same way
_LOOP_MODULES: dict[str, str] = {
    "begin": "maker.cli.loop_cmd",
    "stretch": "maker.cli.stretch_cmd",
}


class MakerGroup(click.Group):
    """A group whose help shows each command's whole summary (wrapped, never cut with
    "…"), and whose unknown command gets "Did you mean …?"."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            ctx.fail(f"No such command '{name}'.{hint}")
        return super().resolve_command(ctx, args)


class _LazyGroup(MakerGroup):
    """A group whose commands live in modules imported when one of them is asked for."""

    def __init__(self, *args: Any, modules: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.modules = modules

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.modules) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.modules:
            importlib.import_module(self.modules[cmd_name])
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, modules=_COMMAND_MODULES,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="maker")
def cli() -> None:
    """Plan long work as typed steps; run each step in an isolated subagent."""


@cli.group("step", cls=_LazyGroup, modules=_STEP_MODULES)
def step() -> None:
    """Run the plan's steps one at a time: start one and print its brief, record it
    failed or put it back (reset), and a person's approve or reject of its handoff."""


@cli.group("loop", cls=_LazyGroup, modules=_LOOP_MODULES, hidden=True)
def loop() -> None:
    """The interactive run's plumbing (/maker:run)."""


def main() -> None:
    cli(prog_name="maker")


if __name__ == "__main__":  # `python -m maker.cli.main`: the commands register on this module
    sys.modules.setdefault("maker.cli.main", sys.modules[__name__])
    main()
