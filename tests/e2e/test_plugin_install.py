"""The plugin as a user installs it: `claude plugin validate`, then the marketplace."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from maker_scripted.claude_cli import isolated_env

from ._maker import PLUGIN_ROOT

pytestmark = pytest.mark.e2e

# What a clone of the repository holds that the plugin needs (no .venv, no caches).
PLUGIN_PARTS = (".claude-plugin", "agents", "bin", "commands", "hooks", "scripts", "src",
                "README.md", "pyproject.toml")


def claude(binary: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = isolated_env("http://127.0.0.1:9", home)
    return subprocess.run([str(binary), *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_claude_plugin_validate_passes(claude_binary: Path, claude_home: Path) -> None:
    result = claude(claude_binary, claude_home, "plugin", "validate", str(PLUGIN_ROOT))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout


def test_the_marketplace_installs_the_plugin(claude_binary: Path, claude_home: Path,
                                             tmp_path: Path) -> None:
    checkout = tmp_path / "maker"
    checkout.mkdir()
    for part in PLUGIN_PARTS:
        source = PLUGIN_ROOT / part
        if source.is_dir():
            shutil.copytree(source, checkout / part, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, checkout / part)

    added = claude(claude_binary, claude_home, "plugin", "marketplace", "add", str(checkout))
    assert added.returncode == 0, added.stdout + added.stderr
    assert "maker-plugins" in added.stdout
    installed = claude(claude_binary, claude_home, "plugin", "install", "maker@maker-plugins")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    record = json.loads((claude_home / ".claude/plugins/installed_plugins.json").read_text())
    (entry,) = record["plugins"]["maker@maker-plugins"]
    root = Path(entry["installPath"])
    for part in ("commands/plan.md", "commands/step.md", "agents/step-executor.md",
                 "hooks/hooks.json", "scripts/hook", "bin/maker"):
        assert (root / part).is_file(), part
