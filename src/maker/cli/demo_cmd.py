"""``maker demo``: watch the whole flow with the real Claude Code CLI and a scripted model."""

from __future__ import annotations

from pathlib import Path

import click

from maker.cli.main import cli

__all__ = ["demo"]


@cli.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
@click.option("--plugin-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The maker plugin to load (default: the checkout this maker runs from).")
@click.option("--quiet", is_flag=True, help="Print only the prompts, outcomes and files.")
def demo(keep: bool, plugin_dir: Path | None, quiet: bool) -> None:
    """Watch plan, step and status run for real, with a SCRIPTED model (no API key)."""
    from maker.errors import MakerError
    from maker.scripted.claude_cli import ClaudeNotFoundError, find_claude
    from maker.scripted.demo import run_demo
    from maker.scripted.scenarios import PluginNotFoundError, find_plugin_root

    try:
        find_claude()
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
    from maker.scripted.scenarios import PluginNotFoundError, is_plugin_root

    if not is_plugin_root(path):
        raise PluginNotFoundError(
            f"{path} is not the maker plugin: it needs .claude-plugin/plugin.json, "
            "hooks/hooks.json, commands/, agents/, scripts/ and bin/maker")
    return path.resolve()
