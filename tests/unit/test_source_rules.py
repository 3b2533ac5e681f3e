"""Rules the source keeps across the tree: the step statuses spelled out in one place,
and no ``noqa`` that names a rule ruff does not enable."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import maker
from maker.core.statuses import STEP_STATUSES

SRC = Path(maker.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]


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
    """Anywhere ruff looks: the package, the benchmarks, the tests and the demo's harness."""
    pytest.importorskip("ruff")
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--extend-select", "RUF100",
         "--output-format", "concise", "src", "benchmarks", "tests", "dev"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert found.returncode in (0, 1), found.stderr
    assert [line for line in found.stdout.splitlines() if "RUF100" in line] == []


