"""The ``maker`` command: a thin click adapter over the core.

Command modules are imported only when their command runs (the plugin calls
``maker`` several times a step, so start-up time is paid often). Each module
registers its commands on ``cli`` when imported.
"""

from __future__ import annotations

import difflib
import importlib

import click

from maker import __version__

__all__ = ["MakerGroup", "cli", "main"]

# command name -> the modules that define it (and its subcommands)
# (the readers an executor and /maker:status run load step_cmds alone: their imports are
# what they need, and the step group's other subcommands live in flow_cmds)
_READ = ("maker.cli.step_cmds",)
_FLOW = ("maker.cli.flow_cmds",)  # (it imports step_cmds, whose `step` group it extends)
_COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "plan": ("maker.cli.plan_cmds",),
    "step": _FLOW,
    "status": _READ,
    "next": _READ,
    "context": _READ,
    "orient": _READ,
    "handoff": _READ,
    "request": _FLOW,
    "policy": _FLOW,
    "proposal": ("maker.cli.decide_cmds",),
    "verify": ("maker.cli.verify_cmd",),
    "land": ("maker.cli.land_cmd",),
    "demo": ("maker.cli.demo_cmd",),
    "run": ("maker.cli.run_cmd",),
    "loop": ("maker.cli.loop_cmd",),
    "calibrate": ("maker.cli.calibrate_cmd",),
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
