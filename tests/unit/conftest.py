"""The unit tests' shared fixture: ``project``, a project folder as cwd (the isolation of
HOME and the environment is ``tests/conftest.py``'s). A module that needs another project
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
