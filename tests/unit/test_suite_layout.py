"""The tests' own layout: what the tests share lives in ``tests/harness/`` (fixtures in a
``conftest.py``), and a test module imports from the harness, never from another test
module or a conftest. Beside the test modules there is no helper module, except a script
a subprocess runs by its path (``RUN_BY_PATH``), which no module imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

# Files a subprocess runs by path, kept beside the tests that start them.
RUN_BY_PATH = {
    "e2e/_mcp_server.py": "Claude Code starts it as an MCP server from --mcp-config",
}
# What a folder of tests may hold besides its test modules.
ALLOWED = {"conftest.py", "__init__.py"}


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names ``node`` imports from, a relative one with its leading dots."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = "." * node.level + (node.module or "")
    if node.module is None:  # from . import x
        return [base + alias.name for alias in node.names]
    return [base]


def _why_not(name: str) -> str | None:
    parts = [part for part in name.lstrip(".").split(".") if part]
    if name.startswith("."):
        return "a relative import (import the shared helper from harness)"
    if any(part.startswith("test_") or part == "conftest" for part in parts):
        return "a test module or conftest imported (move what is shared to tests/harness/)"
    if parts and parts[0] in {"tests", "unit", "e2e"}:
        return "a test package imported (move what is shared to tests/harness/)"
    return None


def layout_problems(root: Path) -> list[str]:
    """Every breach of the layout under ``root`` (a tests folder), each as
    ``path[:line]: what``."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        in_harness = rel.startswith("harness/")
        if (not in_harness and not path.name.startswith("test_")
                and path.name not in ALLOWED and rel not in RUN_BY_PATH):
            problems.append(f"{rel}: a helper module outside tests/harness/ (move it there)")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(node):
                    why = _why_not(name)
                    if why is not None:
                        problems.append(f"{rel}:{node.lineno}: imports {name}: {why}")
    return problems


def test_the_suite_keeps_its_helpers_in_the_harness() -> None:
    assert layout_problems(TESTS) == []


def test_each_script_run_by_path_is_there() -> None:
    for rel in RUN_BY_PATH:
        assert (TESTS / rel).is_file(), f"{rel} is gone: take it out of RUN_BY_PATH"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "conftest.py": "import pytest\n",
    "harness/__init__.py": "",
    "harness/plans.py": "from harness.other import x\n",
    "unit/__init__.py": "",
    "unit/conftest.py": "from harness.plans import x\n",
    "unit/test_a.py": "from harness.plans import x\nfrom maker.core import models\n",
    "e2e/_mcp_server.py": "import json\n",
}


def test_a_clean_tree_has_no_problem(tmp_path: Path) -> None:
    assert layout_problems(_tree(tmp_path, CLEAN)) == []


@pytest.mark.parametrize(("planted", "found"), [
    ({"unit/test_b.py": "from .test_a import helper\n"}, "unit/test_b.py:1: imports .test_a"),
    ({"unit/test_b.py": "from . import test_a\n"}, "unit/test_b.py:1: imports .test_a"),
    ({"unit/test_b.py": "import pytest\n\nfrom unit.test_a import x\n"},
     "unit/test_b.py:3: imports unit.test_a"),
    ({"e2e/test_b.py": "def f():\n    from test_a import x\n"},
     "e2e/test_b.py:2: imports test_a"),
    ({"e2e/test_b.py": "from .conftest import StartInteractive\n"},
     "e2e/test_b.py:1: imports .conftest"),
    ({"harness/plans.py": "from unit.test_a import x\n"},
     "harness/plans.py:1: imports unit.test_a"),
    ({"unit/test_b.py": "from ._plans import x\n"}, "unit/test_b.py:1: imports ._plans"),
    ({"unit/_plans.py": "X = 1\n"}, "unit/_plans.py: a helper module outside tests/harness/"),
    ({"e2e/helpers.py": "X = 1\n"}, "e2e/helpers.py: a helper module outside tests/harness/"),
    ({"unit/_mcp_server.py": "X = 1\n"},
     "unit/_mcp_server.py: a helper module outside tests/harness/"),
])
def test_a_planted_breach_is_named(tmp_path: Path, planted: dict[str, str],
                                   found: str) -> None:
    problems = layout_problems(_tree(tmp_path, {**CLEAN, **planted}))
    assert len(problems) == 1 and problems[0].startswith(found), problems
