"""``maker demo``: watch the whole flow with the real Claude Code CLI and a scripted model:
the plugin's slash commands, or (``--headless``) ``maker run`` over claude-agent-sdk."""

from __future__ import annotations

from pathlib import Path

import click

from maker.cli.main import cli

__all__ = ["demo"]


@cli.command("demo")
@click.option("--headless", is_flag=True,
              help="Show `maker run` instead: planning, live step lines, a flagged answer "
                   "resampled, the ledger (needs no plugin files).")
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
@click.option("--plugin-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The maker plugin to load (default: the checkout this maker runs from).")
@click.option("--quiet", is_flag=True, help="Print only the prompts, outcomes and files.")
def demo(headless: bool, keep: bool, plugin_dir: Path | None, quiet: bool) -> None:
    """Watch plan, step and status (or `maker run`) for real, with a SCRIPTED model."""
    from maker.errors import ClaudeNotFoundError, MakerError, PluginNotFoundError
    from maker.scripted.claude_cli import find_claude
    from maker.scripted.demo import run_demo
    from maker.scripted.scenarios import find_plugin_root

    if headless and plugin_dir is not None:
        raise click.UsageError("--plugin-dir is for the plugin demo: --headless runs "
                               "`maker run`, which loads no plugin")
    try:
        find_claude()
        if headless:
            from maker.scripted.headless import run_headless_demo

            run_headless_demo(click.echo, keep=keep, quiet=quiet)
            return
        root = _plugin_root(plugin_dir) if plugin_dir else find_plugin_root()
        run_demo(click.echo, plugin_root=root, keep=keep, quiet=quiet)
    except ClaudeNotFoundError as exc:
        raise click.ClickException(
            f"{exc}\nThe demo drives the real Claude Code CLI, which comes with the "
            "optional dependencies: pip install 'maker[sdk]'") from None
    except PluginNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    except MakerError as exc:
        raise click.ClickException(f"the demo stopped: {exc}") from None


def _plugin_root(path: Path) -> Path:
    from maker.errors import PluginNotFoundError
    from maker.scripted.scenarios import is_plugin_root

    if not is_plugin_root(path):
        raise PluginNotFoundError(
            f"{path} is not the maker plugin: it needs .claude-plugin/plugin.json, "
            "hooks/hooks.json, commands/, agents/, scripts/ and bin/maker")
    return path.resolve()
