"""The plugin as a user installs it: `claude plugin validate`, then the marketplace."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.install import claude, install_plugin, plugin_checkout
from harness.plugin import PLUGIN_ROOT

pytestmark = pytest.mark.e2e


def test_claude_plugin_validate_passes(claude_binary: Path, claude_home: Path) -> None:
    result = claude(claude_binary, claude_home, "plugin", "validate", str(PLUGIN_ROOT))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout


def test_the_marketplace_installs_the_plugin(claude_binary: Path, claude_home: Path,
                                             tmp_path: Path) -> None:
    root = install_plugin(claude_binary, claude_home, plugin_checkout(tmp_path / "maker"))
    for part in ("commands/plan.md", "commands/step.md", "agents/step-executor.md",
                 "hooks/hooks.json", "scripts/hook", "bin/maker"):
        assert (root / part).is_file(), part
