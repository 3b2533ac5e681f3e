"""A code step voted on by what its samples' code does (``maker.engine.code_vote``): the
project (a ``clamp`` that does not clamp), the plan (one code step, ``votes: 2``), and
scripted samples, each answering by the worktree its session names."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.scenarios import handoff
from maker_scripted import RecordedRequest, Reply, ToolUseBlock

__all__ = ["BASE", "DELETES", "FILES", "OFF_BY_ONE", "RIGHT", "RIGHT_LONGER", "TEST_LOW",
           "TEST_OFF", "TEST_RIGHT", "TEST_VACUOUS", "Variant", "clamp_project",
           "code_plan", "samples"]

BASE = "def clamp(x, lo, hi):\n    return x\n"
RIGHT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
RIGHT_LONGER = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                "    if x > hi:\n        return hi\n    return x\n")
OFF_BY_ONE = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"
TEST_RIGHT = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 3\n"
TEST_LOW = "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-2, 0, 3) == 0\n"
TEST_OFF = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 2\n"
TEST_VACUOUS = "from calc import clamp\n\n\ndef test_exists():\n    assert callable(clamp)\n"
OLD_TEST = "from calc import clamp\n\n\ndef test_inside():\n    assert clamp(1, 0, 3) == 1\n"
DELETES = "tests/test_old.py"  # (a variant's third part: the test it deletes)
FILES = ["src/calc.py", "tests/test_calc.py"]
WORKTREE = re.compile(r"/[^\s`'\"]*/plans/\.maker/worktrees/step-0-s\d+-[0-9a-f]+")

# (src/calc.py, tests/test_calc.py, a test it deletes or ""); no code: it changes nothing
Variant = tuple[str, str, str]


def clamp_project(project: Path) -> None:
    """src/calc.py's clamp returns x as it is; tests/test_old.py passes; all committed."""
    (project / "src").mkdir()
    (project / "src" / "calc.py").write_text(BASE)
    (project / "tests").mkdir()
    (project / "tests" / "test_old.py").write_text(OLD_TEST)
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['src']\n")
    for cmd in (["git", "add", "-A"], ["git", "-c", "user.name=a", "-c", "user.email=a@b",
                                       "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=project, check=True, capture_output=True)


def code_plan(votes: int = 2) -> dict[str, Any]:
    return {"task": "Fix clamp", "reasoning": "One code step, voted on.", "plan": [{
        "step": 0, "task_type": "action_step", "title": "Fix clamp in src/calc.py",
        "task_description": "clamp(x, lo, hi) must return x bounded to [lo, hi]. Fix it "
                            "and add a test in tests/test_calc.py.",
        "primary_tools": ["Read", "Write", "Bash"], "fallback_tools": [],
        "primary_tool_instructions": "Write the files.", "fallback_tool_instructions": "None.",
        "input_variables": [], "output_variable": "step_0_output",
        "output_schema": "{files: list}", "next_step_sequence_number": -1, "depends_on": [],
        "writes": ["src/calc.py", "tests/"], "votes": votes}]}


def samples(variants: Sequence[Variant]) -> Callable[[RecordedRequest], Reply]:
    """Every executor session: orient, write its variant (and delete a test, for one
    that does), hand off; its variant chosen by the order in which its worktree (named
    in its session) first asks."""
    seen: dict[str, int] = {}
    turns: dict[str, int] = {}

    def turn(request: RecordedRequest) -> Reply:
        found = WORKTREE.search(request.system_text + request.all_text)
        assert found, "expected the sample's worktree in its session"
        cwd = found.group(0)
        seen.setdefault(cwd, len(seen))
        turns[cwd] = turns.get(cwd, 0) + 1
        code, test, deleted = variants[seen[cwd]]
        files = [*FILES, *([deleted] if deleted else [])] if code else []
        if turns[cwd] == 1:
            return Reply.tool("Bash", {"command": "maker orient 0 none",
                                       "description": "Record my orientation"})
        if turns[cwd] == 2 and not code:  # (one that changes nothing)
            return Reply.tool("Bash", {"command": "true", "description": "Look"})
        if turns[cwd] == 2:
            return Reply.of(*(ToolUseBlock("Write", {"file_path": f"{cwd}/{name}",
                                                     "content": text})
                              for name, text in zip(FILES, (code, test), strict=True)),
                            *([ToolUseBlock("Bash", {"command": f"rm {deleted}",
                                                     "description": "Remove it"})]
                              if deleted else []))
        return Reply.text(handoff(0, {"files": files}, files=files))
    return turn
