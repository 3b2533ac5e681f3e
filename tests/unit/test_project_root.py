"""The project a plan is for is found on its own, not taken to be the plans folder's
parent (issue 15, item 8): with ``MAKER_PLANS_DIR=docs/plans`` (seed 004's own example)
maker took ``docs/`` for the project, found no test command there, and accepted a
``complete`` handoff while the project's tests failed; the engine's sessions and the
reviewer ran in ``docs/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.core.paths import find_plans_dir, project_of
from maker.errors import HandoffRejectedError
from maker.executor.accept import accept_handoff
from maker.executor.brief import build_brief
from maker.executor.lifecycle import start_step
from maker.store.plan_store import PlanStore
from maker.verify.detect import detect_commands

from ._step_plans import handoff, linear

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


@pytest.mark.parametrize(("layout", "expected"), [
    ("plans", "."),                      # plans/ at a project's root: that root
    ("docs/plans", "."),                 # the project above docs/ (it has .git)
    ("sub/plans", "sub"),                # a sub-project with its own pyproject.toml
    ("bare/deeper/plans", "."),          # no marker below the repository: its root
])
def test_the_project_of_a_plans_folder(tmp_path: Path, layout: str, expected: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text(PYPROJECT)
    plans = tmp_path / layout
    plans.mkdir(parents=True)
    assert project_of(plans, env={}) == (tmp_path / expected).resolve()


def test_outside_a_repository_the_client_s_project_or_the_parent(tmp_path: Path) -> None:
    plans = tmp_path / "work" / "docs" / "plans"
    plans.mkdir(parents=True)
    assert project_of(plans, env={}) == plans.parent  # nothing says more: as before
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path / "work")}
    assert project_of(plans, env=env) == tmp_path / "work"
    elsewhere = {"CLAUDE_PROJECT_DIR": str(tmp_path / "other")}
    assert project_of(plans, env=elsewhere) == plans.parent
    assert project_of(tmp_path / "work" / "plans", env=env) == tmp_path / "work"
    assert PlanStore(plans).project == plans.parent
