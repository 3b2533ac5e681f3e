"""Every test runs isolated from the developer's machine: its own HOME and no maker
settings from outside. Approval is the default (a person approves every step); tests
that want steps to complete on acceptance set the `auto` policy, as a person would."""

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
    monkeypatch.delenv("MAKER_AUTOAPPROVE", raising=False)
