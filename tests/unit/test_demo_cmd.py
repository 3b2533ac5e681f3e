"""`maker demo` when it cannot run: clear errors, no traceback (no CLI run needed);
without its scripted model (the installed plugin), where it runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from maker.cli.main import cli
from maker_scripted import claude_cli
from maker_scripted.errors import PluginNotFoundError
from maker_scripted.scenarios import find_plugin_root


def test_without_the_cli_the_demo_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_cli, "find_spec", lambda name: None)

    result = CliRunner().invoke(cli, ["demo"])

    assert result.exit_code == 1
    assert "pip install 'maker[sdk]'" in result.output
    assert "Traceback" not in result.output


def test_a_plugin_dir_without_the_plugin_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--plugin-dir", str(tmp_path)])

    assert result.exit_code == 1
    assert f"{tmp_path} is not the maker plugin" in result.output


def test_headless_takes_no_plugin_dir(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--headless", "--plugin-dir", str(tmp_path)])

    assert result.exit_code == 2
    assert "--plugin-dir is for the plugin demo" in result.output


def test_help_names_the_headless_demo() -> None:
    result = CliRunner().invoke(cli, ["demo", "--help"])

    assert result.exit_code == 0
    assert "--headless" in result.output
    assert "Show `maker run` instead" in result.output
    assert "--print" in result.output and "print mode (claude -p" in result.output


def test_the_plugin_is_found_above_the_package_or_not_at_all(tmp_path: Path) -> None:
    root = find_plugin_root()
    assert (root / ".claude-plugin" / "plugin.json").is_file()
    # Installed from a wheel: site-packages/maker_scripted/scenarios.py, no plugin above.
    wheel = tmp_path / "site-packages" / "maker_scripted" / "scenarios.py"
    with pytest.raises(PluginNotFoundError, match="pass --plugin-dir"):
        find_plugin_root(wheel)


def test_quiet_narration_keeps_the_prompts_answers_and_files(tmp_path: Path) -> None:
    from maker_scripted.demo import STAGES, _Say

    lines: list[str] = []
    say = _Say(lines.append, quiet=True)
    say.banner("2.1.330", tmp_path, tmp_path / "project")
    say.stage(1, 3, STAGES[0])
    say.line("model", "main agent (scripted) calls Bash: maker status")
    say.files(["plans/PLAN.md"])
    say.excerpt("plans/PLAN.md", "# Plan\n")

    assert lines[0].startswith("maker demo (SCRIPTED): the real Claude Code CLI (2.1.330)")
    assert "  you type  /maker:plan Add a hello.txt greeting to the project, and check it" \
        in lines
    assert "  files     new: plans/PLAN.md" in lines
    assert not [line for line in lines if "model" in line.split()[:1] or "excerpt" in line]


class _NoScriptedModel:
    """A finder first in line that finds no ``maker_scripted``, as if not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] == "maker_scripted":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def test_without_the_scripted_model_the_demo_says_where_it_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As in the installed plugin, whose path is src/ only: no maker_scripted to import.
    for name in [m for m in sys.modules if m.partition(".")[0] == "maker_scripted"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoScriptedModel(), *sys.meta_path])

    result = CliRunner().invoke(cli, ["demo"])

    assert result.exit_code == 1, result.output
    assert "runs from a clone of the maker repository with the development install" \
        in result.output and "pip install -q -e '.[dev]'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
