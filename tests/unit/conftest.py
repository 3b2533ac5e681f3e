"""The unit tests' shared fixtures: ``project``, a project folder as cwd (the isolation of
HOME and the environment is ``tests/conftest.py``'s), and ``both``, one project for each
front end (the plugin's hooks, ``maker run``'s engine). A module that needs another project
(the plugin's, a repository) defines its own ``project``, which takes precedence.

The unit tests read the guard's own answers: the kernel boundary is off in them (the
machine's protection reads as the guard alone), except in a test marked ``kernel``
(``test_boundary.py``). The end-to-end tests run hooks in the real client, boundary on."""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.tools.box import boundary


@pytest.fixture(autouse=True)
def guard_alone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("kernel") is None:
        monkeypatch.setattr(boundary, "protection", lambda **_: boundary.Protection(
            "guard", "the unit tests read the guard's own answers"))


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
