"""Every test runs isolated from the developer's machine: its own HOME and no settings
from outside (``isolated_env``, the one isolation fixture). Approval is the default (a
person approves every step); tests that want steps to complete on acceptance set the
`auto` policy, as a person would.

Tests that need more set it themselves, from two shared fixtures: ``verification_off``
(every verification kind set empty, so no command runs and no evidence is required) and
``plugin_project`` (a project as cwd, as Claude Code runs the plugin there).

The report's first line names the client the end-to-end tests drive (claude-agent-sdk and
the Claude Code it bundles) and says whether it is the release pyproject.toml pins.

Hypothesis runs under the profile ``HYPOTHESIS_PROFILE`` names: ``ci`` (the default, what
``pytest`` and CI run: each test's own example count, Hypothesis's defaults elsewhere) or
``dev`` (a quick run while working: at most ``DEV_EXAMPLES`` examples a test, its own
count included, and no deadline). docs/testing.md says how to choose."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from maker.verify.detect import ENV_VARS
from maker_scripted.claude_cli import installed_client, pinned_sdk

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

DEV_EXAMPLES = 10
# ci: the settings Hypothesis loads when nothing chooses (this suite's run time as it was).
settings.register_profile("ci", parent=settings.default)
settings.register_profile("dev", max_examples=DEV_EXAMPLES, deadline=None)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``dev``, a test that asks for more than ``DEV_EXAMPLES`` examples in its own
    ``@settings`` runs ``DEV_EXAMPLES`` (a profile alone changes only the defaults). The
    settings a ``@given`` test runs with are read when it runs, from the attribute its
    ``@settings`` decorator sets."""
    if PROFILE != "dev":
        return
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None and own.max_examples > DEV_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(
                own, max_examples=DEV_EXAMPLES, deadline=None)


# What configures maker, Claude Code, the API client and the XDG directories, whatever
# the variable's name: removed from every test's environment.
_PREFIXES = ("MAKER_", "CLAUDE_", "ANTHROPIC_", "XDG_", "STEP_")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The client, as the report's first line (before pytest's own header, and with
    ``-q`` too; the controller prints it under pytest-xdist): a report says which Claude
    Code it ran against."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(session.config, "workerinput"):
        reporter.write_line(installed_client().against(pinned_sdk(PYPROJECT)))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME (returned); no MAKER_*, CLAUDE_*, ANTHROPIC_* or XDG_* variable and
    no verification command (FORMAT_CMD, LINT_CMD, BUILD_CMD, TEST_CMD) from outside."""
    home: Path = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    outside = set(ENV_VARS.values())
    for var in list(os.environ):
        if var.startswith(_PREFIXES) or var in outside:
            monkeypatch.delenv(var)
    return home


@pytest.fixture
def verification_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every verification kind set empty: nothing runs, no evidence is required."""
    for var in ENV_VARS.values():
        monkeypatch.setenv(var, "")


@pytest.fixture
def plugin_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   verification_off: None) -> Path:
    """``tmp_path`` as the project Claude Code runs in (cwd, CLAUDE_PROJECT_DIR), the
    plugin's data in ``tmp_path/plugin-data``, verification off."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    return tmp_path
