"""Every test runs isolated from the developer's machine: its own HOME, no maker
settings from outside, and (headless, like `maker run`) steps approve themselves
unless a test of the approval gate turns that off."""

from __future__ import annotations

from pathlib import Path

import pytest

_OUTSIDE = ("MAKER_PLANS_DIR", "CLAUDE_PROJECT_DIR", "MAKER_SESSION_ID", "MAKER_VERIFY_TIMEOUT",
            "FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD", "CLAUDE_ENV_FILE",
            "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT", "MAKER_PYTHON", "XDG_DATA_HOME")


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    home: Path = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in _OUTSIDE:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MAKER_AUTOAPPROVE", "1")
