"""A project whose ``add`` subtracts, for the end-to-end tests of tests that can fail: the
fix, a test that catches the bug, and one that passes on the code before the fix too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["CATCHES", "FILES", "FIXED", "TEST_CMD", "VACUOUS", "buggy"]

TEST_CMD = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FIXED = "def add(a, b):\n    return a + b\n"
CATCHES = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
VACUOUS = "from calc import add\n\n\ndef test_add_exists():\n    assert callable(add)\n"
FILES = ["src/calc.py", "tests/test_calc.py", "tests/test_exists.py"]


def buggy(project: Path) -> None:
    """src/calc.py subtracts; pytest finds it through pyproject.toml; all committed."""
    (project / "src").mkdir()
    (project / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "tests").mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['src']\n")
    for cmd in (["git", "add", "-A"], ["git", "-c", "user.name=a", "-c", "user.email=a@b",
                                       "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=project, check=True, capture_output=True)
