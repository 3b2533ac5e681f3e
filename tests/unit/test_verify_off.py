"""An empty ``TEST_CMD=`` (and the other ``*_CMD``) means "this check is off", and every
message says so: never "not set" for a variable that is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import linear
from maker.cli.main import cli
from maker.verify.detect import ENV_VARS, detect_commands, off_text, turned_off

pytestmark = pytest.mark.usefixtures("project")


def _python_project(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.ruff]\n")
    (root / "tests").mkdir()


def test_an_empty_variable_turns_that_check_off(project: Path) -> None:
    _python_project(project)
    env = {"TEST_CMD": ""}
    assert [c.kind for c in detect_commands(project, env)] == ["format", "lint"]
    assert turned_off(env) == ["test"]
    assert off_text(["test", "lint"]) == ("TEST_CMD is set empty: tests are off; LINT_CMD is "
                                          "set empty: linting is off")


def test_verify_says_which_checks_are_off(project: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    linear(project, 1)
    monkeypatch.setenv("LINT_CMD", "true")  # the others are set empty by the fixture
    result = CliRunner().invoke(cli, ["verify"])
    assert result.exit_code == 0, result.output
    assert ("verification passed: lint (FORMAT_CMD is set empty: formatting is off; "
            "BUILD_CMD is set empty: the build is off; TEST_CMD is set empty: tests are "
            "off)") in result.output


def test_verify_with_every_check_off_says_so(project: Path) -> None:
    linear(project, 1)
    result = CliRunner().invoke(cli, ["verify"])
    assert "every check is off (FORMAT_CMD is set empty" in result.output
    assert "not set" not in result.output and "set FORMAT_CMD" not in result.output


def test_the_brief_says_the_checks_are_off_not_unset(project: Path) -> None:
    linear(project, 1)
    out = CliRunner().invoke(cli, ["context", "1"]).output
    assert "TEST_CMD is set empty: tests are off" in out
    assert "not set" not in out


def test_the_brief_says_unset_when_unset(project: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    linear(project, 1)
    for var in ENV_VARS.values():
        monkeypatch.delenv(var)
    monkeypatch.setenv("TEST_CMD", "")
    out = CliRunner().invoke(cli, ["context", "1"]).output
    assert ("(TEST_CMD is set empty: tests are off; none detected, and FORMAT_CMD, LINT_CMD, "
            "BUILD_CMD are not set)") in out
