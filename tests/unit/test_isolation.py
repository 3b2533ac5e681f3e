"""The one isolation fixture (``isolated_env`` in tests/conftest.py) keeps a developer's
settings out of every test: a pytest run started with them set still sees none of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from maker_scripted.claude_cli import isolated_env

# Settings a developer's shell (or Claude Code, running the suite) may hold.
OUTSIDE = {"MAKER_PLANS_DIR": "/elsewhere/plans", "MAKER_AUTOAPPROVE": "1",
           "MAKER_SESSION_ID": "outer", "MAKER_PYTHON": "/nowhere/python",
           "MAKER_VERIFY_TIMEOUT": "1", "MAKER_SOME_NEW_SETTING": "x",
           "CLAUDE_PROJECT_DIR": "/elsewhere", "CLAUDE_PLUGIN_DATA": "/elsewhere/data",
           "CLAUDE_CODE_SESSION_ID": "outer", "CLAUDE_ENV_FILE": "/elsewhere/env",
           "ANTHROPIC_API_KEY": "not-a-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
           "XDG_DATA_HOME": "/elsewhere/xdg", "XDG_CONFIG_HOME": "/elsewhere/config",
           "FORMAT_CMD": "false", "LINT_CMD": "false", "BUILD_CMD": "false",
           "TEST_CMD": "false"}
_OUTER_HOME = "ISOLATION_TEST_OUTER_HOME"  # no prefix the fixture removes


def test_no_outside_setting_reaches_a_test() -> None:
    assert not [var for var in OUTSIDE if var in os.environ]
    assert os.environ["HOME"] != os.environ.get(_OUTER_HOME, Path.home().parent)
    assert Path(os.environ["HOME"]).is_dir()


def test_a_run_started_with_the_settings_set_sees_none_of_them(tmp_path: Path) -> None:
    outer_home = tmp_path / "outer-home"
    outer_home.mkdir()
    env = dict(os.environ, **OUTSIDE, HOME=str(outer_home), **{_OUTER_HOME: str(outer_home)})
    target = f"{Path(__file__)}::test_no_outside_setting_reaches_a_test"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n0", "-p",
                             "no:cacheprovider", target], env=env, capture_output=True,
                            text=True, timeout=120, check=False,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_client_finds_no_other_maker_on_path(tmp_path: Path) -> None:
    """An activated virtualenv puts its own `maker` first on PATH: the client started for
    a test (or the demo) must find the plugin's own instead, which it puts last."""
    other = tmp_path / "venv" / "bin"
    other.mkdir(parents=True)
    (other / "maker").write_text("#!/bin/sh\necho other\n")
    (other / "maker").chmod(0o755)
    plain = tmp_path / "tools"
    plain.mkdir()
    env = isolated_env("http://127.0.0.1:9", tmp_path / "home",
                       inherit={"PATH": os.pathsep.join([str(other), str(plain), "/usr/bin"])})
    assert env["PATH"].split(os.pathsep) == [str(plain), "/usr/bin"]
