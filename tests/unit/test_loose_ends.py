"""Loose ends of issue 16, item 8: an error that keeps its problems, the step statuses
in one home, no ``noqa`` for a rule that is not enabled, every agent with its tools."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import maker
from maker.core.statuses import STEP_STATUSES
from maker.errors import PlanFileError
from maker.store.plan_store import PlanStore

from ._step_plans import linear

SRC = Path(maker.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]


def test_a_plan_file_error_keeps_every_problem_with_its_file_field_and_fix(
        project: Path) -> None:
    store = linear(project, 3)
    steps = sorted((store.root / "steps").glob("*.md"))
    second = steps[1].read_text().replace("status: pending", "status: nope")
    steps[1].write_text(second.replace("## Task", "").replace("Do the work of step 2.", ""))
    steps[2].write_text(steps[2].read_text().replace("depends_on:\n- 2", "depends_on:\n- 9"))
    (store.root / "steps" / "xx-stray.md").write_text("stray")
    with pytest.raises(PlanFileError) as caught:
        PlanStore(store.root).load()
    error = caught.value
    found = [(p.path.name, p.field) for p in error.problems]
    assert found == [(steps[1].name, "status"), (steps[1].name, "body"),
                     ("xx-stray.md", None), (steps[2].name, "depends_on")]
    assert all(p.fix and p.problems == [p] for p in error.problems)
    assert str(error).splitlines()[1:] == [
        f"- {steps[1]}: status: 'nope' is not a status (fix: use one of "
        f"{', '.join(STEP_STATUSES)}); body: no task description (fix: write the task "
        "under a `## Task` heading)",
        f"- {steps[1].parent / 'xx-stray.md'}: not a step file name (NN-<title>.md) (fix: "
        f"move it out of {steps[1].parent})",
        f"- {steps[2]}: depends_on: no step 9 in the plan (fix: remove it from depends_on)"]


def _spelled(node: ast.AST) -> set[str]:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else []
    return {e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def test_the_step_statuses_are_spelled_out_in_one_place() -> None:
    places = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if set(STEP_STATUSES) <= _spelled(node):
                places.append(f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}")
    assert places == [f"core{os.sep}statuses.py:9"]


def test_no_noqa_names_a_rule_that_is_not_enabled() -> None:
    """(``tests/`` has its own: they are being reworked with the tests' imports.)"""
    pytest.importorskip("ruff")
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--extend-select", "RUF100",
         "--output-format", "concise", "src", "benchmarks"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert found.returncode in (0, 1), found.stderr
    assert [line for line in found.stdout.splitlines() if "RUF100" in line] == []
