"""Votes on what code does, end to end in ``maker run`` (the real SDK and CLI; only the
model is scripted, the code and the tests are real): a code step with ``votes: 2`` is
sampled in worktrees of its own from the same base; the samples' tests run against one
another's code; the first behaviour to lead by 2 wins, its smallest diff lands into the
main checkout, and the others' worktrees are removed. The vote's matrix is in the handoff
and the ledger."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.maker_run import run_maker
from harness.plugin import step, write_plan
from harness.scenarios import EXECUTOR, handoff
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, ToolUseBlock

pytestmark = pytest.mark.e2e

TEST_CMD = f"{sys.executable} -m pytest -q -p no:cacheprovider"
BASE = "def clamp(x, lo, hi):\n    return x\n"
RIGHT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
RIGHT_LONGER = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                "    if x > hi:\n        return hi\n    return x\n")
OFF_BY_ONE = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"
TEST_RIGHT = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 3\n"
TEST_LOW = "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-2, 0, 3) == 0\n"
TEST_OFF = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 2\n"
FILES = ["src/calc.py", "tests/test_calc.py"]
WORKTREE = re.compile(r"/[^\s`'\"]*/plans/\.maker/worktrees/step-0-s\d+-[0-9a-f]+")
# In the order the samples' sessions first ask: right, off by one (1 to 1: two more),
# right written otherwise, right: 3 to 1, a lead of 2.
VARIANTS = [(RIGHT_LONGER, TEST_LOW), (OFF_BY_ONE, TEST_OFF), (RIGHT, TEST_RIGHT),
            (RIGHT_LONGER, TEST_RIGHT)]


def code_plan() -> dict[str, Any]:
    return {"task": "Fix clamp", "reasoning": "One code step, voted on.", "plan": [{
        "step": 0, "task_type": "action_step", "title": "Fix clamp in src/calc.py",
        "task_description": "clamp(x, lo, hi) must return x bounded to [lo, hi]. Fix it "
                            "and add a test in tests/test_calc.py.",
        "primary_tools": ["Read", "Write", "Bash"], "fallback_tools": [],
        "primary_tool_instructions": "Write the files.", "fallback_tool_instructions": "None.",
        "input_variables": [], "output_variable": "step_0_output",
        "output_schema": "{files: list}", "next_step_sequence_number": -1, "depends_on": [],
        "writes": ["src/calc.py", "tests/"], "votes": 2}]}


def samples() -> Callable[[RecordedRequest], Reply]:
    """Every executor session: orient, write its variant, hand off; its variant chosen by
    the order in which its worktree (named in its session) first asks."""
    seen: dict[str, int] = {}
    turns: dict[str, int] = {}

    def turn(request: RecordedRequest) -> Reply:
        found = WORKTREE.search(request.system_text + request.all_text)
        assert found, "expected the sample's worktree in its session"
        cwd = found.group(0)
        seen.setdefault(cwd, len(seen))
        turns[cwd] = turns.get(cwd, 0) + 1
        code, test = VARIANTS[seen[cwd]]
        if turns[cwd] == 1:
            return Reply.tool("Bash", {"command": "maker orient 0 none",
                                       "description": "Record my orientation"})
        if turns[cwd] == 2:
            return Reply.of(*(ToolUseBlock("Write", {"file_path": f"{cwd}/{name}",
                                                     "content": text})
                              for name, text in zip(FILES, (code, test), strict=True)))
        return Reply.text(handoff(0, {"files": FILES}, files=FILES))
    return turn


def test_maker_run_votes_on_what_the_samples_code_does(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "calc.py").write_text(BASE)
    (project / "tests").mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['src']\n")
    for cmd in (["git", "add", "-A"], ["git", "-c", "user.name=a", "-c", "user.email=a@b",
                                       "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=project, check=True, capture_output=True)
    write_plan(project, code_plan())
    fake_api.script(EXECUTOR, *[samples()] * (3 * len(VARIANTS)))

    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": TEST_CMD})

    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    fake_api.assert_done()
    assert step(project, 0).status == "complete"
    assert (project / "src" / "calc.py").read_text() == RIGHT  # (the smallest right diff)
    assert (project / "tests" / "test_calc.py").read_text() == TEST_RIGHT
    store = PlanStore(project / "plans")
    vote = store.read_handoff(0)["vote"]
    assert (vote["k"], vote["samples"], vote["decided"]) == (2, 4, True)
    rows = vote["matrix"]["rows"]
    assert len(rows) == 4 and len({tuple(r) for r in rows.values()}) == 2
    assert [t["votes"] for t in vote["tally"]] == [3, 1]
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-0-*"))
    calls = Ledger(store).calls()
    assert [c.kind for c in calls].count("vote") == 4 + 1  # (the samples, the record)
