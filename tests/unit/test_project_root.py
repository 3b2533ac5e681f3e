"""The project a plan is for is found on its own, not taken to be the plans folder's
parent: with ``MAKER_PLANS_DIR=docs/plans`` (seed 004's own example, docs/architecture.md#the-seeds)
maker took ``docs/`` for the project, found no test command there, and accepted a
``complete`` handoff while the project's tests failed; the engine's sessions and the
reviewer ran in ``docs/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.step_plans import handoff, linear
from maker.core.paths import find_plans_dir, project_of, project_record
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.brief import build_brief
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore
from maker.verify.detect import detect_commands

PYPROJECT = '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


def _python_project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "tests" / "test_it.py").write_text("def test_it():\n    assert False\n")
    return root


def test_a_plan_in_docs_plans_is_the_projects_and_its_checks_hold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _python_project(tmp_path / "project")
    monkeypatch.chdir(project)
    monkeypatch.setenv("MAKER_PLANS_DIR", "docs/plans")
    plans = find_plans_dir()
    assert plans == project / "docs" / "plans"
    store = linear(project / "docs", 1)  # (writes docs/plans)
    assert store.root == plans and store.project == project
    assert [c.kind for c in detect_commands(store.project)] != []
    start_step(store, 1, session_id="s")
    brief = build_brief(store, None, 1)  # the executor is told to run the project's tests
    assert "run `maker verify --step 1`: it runs" in brief and "test (`" in brief
    # The project has tests: a complete handoff needs their passing run, sealed.
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(store, handoff(1))
    assert any(p.field == "evidence" for p in refused.value.problems)


def test_a_docs_folder_of_its_own_does_not_take_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Sphinx docs/ (its own Makefile) or a JS docs site (package.json) under the
    project: the plan made at the project's root is the project's, not docs/'s."""
    project = _python_project(tmp_path / "project")
    (project / "docs").mkdir()
    (project / "docs" / "Makefile").write_text("html:\n\tsphinx-build . _build\n")
    (project / "docs" / "package.json").write_text("{}")
    monkeypatch.chdir(project)
    store = linear(project / "docs", 1)
    assert store.project == project
    assert (store.state_dir / "project").read_text() == "../..\n"
    assert PlanStore(store.root).project == project  # every later reader, too


def test_a_new_project_in_a_home_with_markers_stays_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Makefile (or a dotfiles .git) in the home directory never makes the home the
    project of a plan made in a new folder beneath it (a QA pass ran `make test` there)."""
    home = tmp_path / "home"
    (home / "newproj").mkdir(parents=True)
    (home / "Makefile").write_text("test:\n\ttouch RAN_IN_HOME\n")
    monkeypatch.chdir(home / "newproj")
    store = linear(home / "newproj", 1)
    assert store.project == home / "newproj"
    assert not (store.state_dir / "project").exists()


def test_a_record_that_is_not_a_climb_is_ignored(tmp_path: Path) -> None:
    store = linear(tmp_path / "work", 1)
    record = store.state_dir / "project"
    for planted in ("/etc\n", "../../../x\n", "..\\..\n", "\n", "../" * 100):
        record.write_text(planted)
        assert PlanStore(store.root).project == store.root.parent, planted
    record.write_text("..\n")
    assert PlanStore(store.root).project == (tmp_path / "work").resolve()


def test_outside_the_project_nothing_is_recorded_and_a_new_plan_drops_an_old_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = tmp_path / "elsewhere" / "plans"
    monkeypatch.chdir(_python_project(tmp_path / "project"))
    assert project_record(plans) is None  # not inside the project where it is made
    store = linear(tmp_path / "elsewhere", 1)
    assert store.project == plans.parent
    (store.state_dir / "project").write_text("..\n")
    linear(tmp_path / "elsewhere", 1)  # a new plan, made here: its own record (none)
    assert not (store.state_dir / "project").exists()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert project_record(plans) == "../.."
    assert project_of(tmp_path / "missing" / "plans") == tmp_path / "missing"
