"""The unit tests' shared fixtures: ``project``, a project folder as cwd (the isolation of
HOME and the environment is ``tests/conftest.py``'s), and ``both``, one project for each
front end (the plugin's hooks, ``maker run``'s engine). A module that needs another project
(the plugin's, a repository) defines its own ``project``, which takes precedence."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            verification_off: None) -> Path:
    """A project dir as cwd, with no verification command unless a test sets one."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


@pytest.fixture()
def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         verification_off: None) -> tuple[Path, Path]:
    """Two projects: one the plugin runs in (the hooks' cwd), one for the engine."""
    plugin, engine = tmp_path / "plugin", tmp_path / "engine"
    plugin.mkdir()
    engine.mkdir()
    monkeypatch.chdir(plugin)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(plugin))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    return plugin, engine
