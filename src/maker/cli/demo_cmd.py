"""``maker demo``: watch the whole flow with the real Claude Code CLI and a scripted model:
the plugin's slash commands in an interactive session as people run it (``--print``: in
``claude -p``), or (``--headless``) ``maker run`` over claude-agent-sdk.

The scripted model is ``maker_scripted`` (in ``dev/``, beside ``src/``, a distribution of
its own), which the development install brings and neither the installed plugin nor a
wheel of maker carries: loaded only here, and when it is absent the command says where
the demo runs."""

from __future__ import annotations

from pathlib import Path

import click

from maker.cli.main import cli
from maker.errors import ClaudeNotFoundError, MakerError

__all__ = ["demo"]

NO_DEMO = (
    "`maker demo` runs from a clone of the maker repository with the development "
    "install, which brings its scripted model (dev/, a package of its own) and the "
    "Claude Code CLI it drives: python3 -m venv .venv && .venv/bin/pip install -q -e "
    "'.[dev]' -e ./dev && .venv/bin/maker demo. The installed plugin carries only what "
    "it runs (its commands, hooks and core), not the demo.")


@cli.command("demo")
@click.option("--headless", is_flag=True,
              help="Show `maker run` instead: planning, live step lines, a flagged answer "
                   "resampled, the ledger (needs no plugin files).")
@click.option("--print", "print_mode", is_flag=True,
              help="Run the slash commands in print mode (claude -p, subagents in the "
                   "foreground), with every model turn narrated.")
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
@click.option("--plugin-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The maker plugin to load (default: the checkout this maker runs from).")
@click.option("--quiet", is_flag=True, help="Print only the prompts, outcomes and files.")
def demo(headless: bool, print_mode: bool, keep: bool, plugin_dir: Path | None,
         quiet: bool) -> None:
    """Watch plan, step and status in a Claude Code session (or `maker run`), for real,
    with a SCRIPTED model."""

    try:  # (maker_scripted is not installed with the plugin: see NO_DEMO)
        from maker_scripted.claude_cli import find_claude
        from maker_scripted.demo import run_demo
        from maker_scripted.errors import DemoError, PluginNotFoundError
        from maker_scripted.scenarios import find_plugin_root
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "maker_scripted":
            raise
        raise click.ClickException(NO_DEMO) from None

    if headless and plugin_dir is not None:
        raise click.UsageError("--plugin-dir is for the plugin demo: --headless runs "
                               "`maker run`, which loads no plugin")
    if headless and print_mode:
        raise click.UsageError("--print is for the plugin demo: --headless runs `maker run`")
    try:
        find_claude()
        if headless:
            from maker_scripted.headless import run_headless_demo

            run_headless_demo(click.echo, keep=keep, quiet=quiet)
            return
        root = _plugin_root(plugin_dir) if plugin_dir else find_plugin_root()
        if print_mode:
            run_demo(click.echo, plugin_root=root, keep=keep, quiet=quiet)
            return
        try:
            from maker_scripted.session_demo import run_session_demo
        except ImportError as exc:  # pexpect, pyte: the development install brings them
            raise click.ClickException(
                f"the interactive demo needs {exc.name}: pip install -e '.[dev]' (or run "
                "`maker demo --print`, which needs only the Claude Code CLI)") from None
        run_session_demo(click.echo, plugin_root=root, keep=keep, quiet=quiet)
    except ClaudeNotFoundError as exc:
        raise click.ClickException(
            f"{exc}\nThe demo drives the real Claude Code CLI, which comes with the "
            "optional dependencies: pip install 'maker[sdk]'") from None
    except PluginNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    except (DemoError, MakerError) as exc:  # off script, or maker refused what it ran
        raise click.ClickException(f"the demo stopped: {exc}") from None


def _plugin_root(path: Path) -> Path:
    from maker_scripted.errors import PluginNotFoundError
    from maker_scripted.scenarios import is_plugin_root

    if not is_plugin_root(path):
        raise PluginNotFoundError(
            f"{path} is not the maker plugin: it needs .claude-plugin/plugin.json, "
            "hooks/hooks.json, commands/, agents/, scripts/ and bin/maker")
    return path.resolve()
