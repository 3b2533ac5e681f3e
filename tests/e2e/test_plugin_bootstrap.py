"""An installed plugin with nothing but `python3` on PATH: on first use the launcher
finds an interpreter, caches its real path in maker's own folder (one cache for every
entry point), and the hooks and the `maker` command run from it (no MAKER_PYTHON, as
for a real user)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.plugin import PLUGIN_ROOT, Run, write_plan
from harness.scenarios import plugin_env
from maker_scripted import FakeMessagesAPI, Reply

pytestmark = pytest.mark.e2e


def test_first_use_bootstraps_the_interpreter_for_hooks_and_commands(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, tmp_path: Path,
        claude_home: Path) -> None:
    write_plan(project)
    # A PATH whose python3 is a Python with PyYAML and click (this venv's), found by name.
    bindir = tmp_path / "userbin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env = plugin_env()
    env["MAKER_PYTHON"] = ""
    env["XDG_DATA_HOME"] = str(claude_home / ".local" / "share")  # (a fresh one: no cache)
    env["PATH"] = f"{bindir}{os.pathsep}{os.environ['PATH']}"
    fake_api.script("main", Reply.text("Here is the plan's status."))

    run = run_claude("/maker:status", plugin_dirs=[PLUGIN_ROOT], env=env)

    fake_api.assert_done()
    assert run.result == "Here is the plan's status."
    # The command's line ran `maker status` through the bootstrapped launcher.
    (request,) = fake_api.requests_for("main")
    assert "0     Write hello.txt  pending  -" in request.all_text
    # One interpreter cache for the hooks, the command's line and the Bash tool's maker:
    # maker's own folder, not the plugin data dir Claude Code gives the hooks.
    cache = claude_home / ".local" / "share" / "maker" / "python"
    assert Path(cache.read_text().splitlines()[0]).exists()
    assert not list((claude_home / ".claude" / "plugins" / "data").glob("*/python"))

