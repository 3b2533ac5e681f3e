"""A code step voted on by what its samples' code does (``maker.engine.code_vote``): the
project (a ``clamp`` that does not clamp), the plan (one code step, ``votes: 2``), and
scripted samples, each answering by the worktree its session names: through the scripted
Messages API (:func:`samples`), or as a ``CodeVote``'s draws (:func:`draws`)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.scenarios import handoff
from harness.step_plans import step_spec, write
from maker.core.models import AgentResult
from maker.engine.code_vote import CodeVote, Draw
from maker.executor.state.lifecycle import start_step
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import BASE_KEY, READY_KEY, WORKTREE_KEY
from maker.tools.git import worktrees
from maker_scripted import RecordedRequest, Reply, ToolUseBlock

__all__ = ["BASE", "DELETES", "FILES", "HIGH_ONLY", "OFF_BY_ONE", "RIGHT", "RIGHT_LONGER",
           "TEST_LOW", "TEST_OFF", "TEST_RIGHT", "TEST_VACUOUS", "Sample", "Variant",
           "answer", "clamp_project", "code_plan", "draws", "run_vote", "sample_tree",
           "samples", "voting_store"]

BASE = "def clamp(x, lo, hi):\n    return x\n"
RIGHT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
RIGHT_LONGER = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                "    if x > hi:\n        return hi\n    return x\n")
OFF_BY_ONE = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"
HIGH_ONLY = "def clamp(x, lo, hi):\n    return min(x, hi)\n"  # (wrong below lo: TEST_LOW)
TEST_RIGHT = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 3\n"
TEST_LOW = "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-2, 0, 3) == 0\n"
TEST_OFF = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 2\n"
TEST_VACUOUS = "from calc import clamp\n\n\ndef test_exists():\n    assert callable(clamp)\n"
OLD_TEST = "from calc import clamp\n\n\ndef test_inside():\n    assert clamp(1, 0, 3) == 1\n"
DELETES = "tests/test_old.py"  # (a variant's third part: the test it deletes)
FILES = ["src/calc.py", "tests/test_calc.py"]
WORKTREE = re.compile(r"/[^\s`'\"]*/plans/\.maker/worktrees/step-0-(?:s\d+|probe)-[0-9a-f]+")

# (src/calc.py, tests/test_calc.py, a test it deletes or ""); no code: it changes nothing
Variant = tuple[str, str, str]
Sample = dict[str, str]  # file -> text


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


def code_plan(votes: int = 2, **more: Any) -> dict[str, Any]:
    return {"task": "Fix clamp", "reasoning": "One code step, voted on.", "plan": [{
        "step": 0, "task_type": "action_step", "title": "Fix clamp in src/calc.py",
        "task_description": "clamp(x, lo, hi) must return x bounded to [lo, hi]. Fix it "
                            "and add a test in tests/test_calc.py.",
        "primary_tools": ["Read", "Write", "Bash"], "fallback_tools": [],
        "primary_tool_instructions": "Write the files.", "fallback_tool_instructions": "None.",
        "input_variables": [], "output_variable": "step_0_output",
        "output_schema": "{files: list}", "next_step_sequence_number": -1, "depends_on": [],
        "writes": ["src/calc.py", "tests/"], "votes": votes, **more}]}


def samples(variants: Sequence[Variant], probe: Sample | None = None,
            told: dict[str, str] | None = None) -> Callable[[RecordedRequest], Reply]:
    """Every executor session: orient, write its variant (and delete a test, for one
    that does), hand off; its variant chosen by the order in which its worktree (named
    in its session) first asks. The probe's session (``probe: true``) writes ``probe``'s
    files, what its first request said kept in ``told["probe"]``."""
    seen: dict[str, int] = {}
    turns: dict[str, int] = {}

    def turn(request: RecordedRequest) -> Reply:
        found = WORKTREE.search(request.system_text + request.all_text)
        assert found, "expected the sample's worktree in its session"
        cwd = found.group(0)
        probing = cwd.rsplit("/", 1)[-1].startswith("step-0-probe-")
        if not probing:
            seen.setdefault(cwd, len(seen))
        turns[cwd] = turns.get(cwd, 0) + 1
        if turns[cwd] == 1:
            if probing and told is not None:
                told["probe"] = request.all_text
            return Reply.tool("Bash", {"command": "maker orient 0 none",
                                       "description": "Record my orientation"})
        if probing:
            assert probe is not None, "a probe's session, and no probe scripted"
            if turns[cwd] == 2:
                return Reply.of(*(ToolUseBlock("Write", {"file_path": f"{cwd}/{name}",
                                                         "content": text})
                                  for name, text in probe.items()))
            return Reply.text(handoff(0, {"files": sorted(probe)}, files=sorted(probe)))
        code, test, deleted = variants[seen[cwd]]
        files = [*FILES, *([deleted] if deleted else [])] if code else []
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


def voting_store(project: Path, monkeypatch: pytest.MonkeyPatch, **changes: Any) -> PlanStore:
    """A git project whose clamp does not clamp (:func:`clamp_project`), its tests
    pytest's; one code step (0) with ``votes: 2``, the output its samples hand off
    (:func:`answer`) and ``changes``, started."""
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    clamp_project(project)
    store = write(project, [step_spec(0, -1, **{
        "primary_tools": ["Read", "Write", "Bash"], "writes": ["src/calc.py", "tests/"],
        "votes": 2, "output_schema": "{files: list}", **changes})])
    start_step(store, 0)
    return store


def sample_tree(store: PlanStore, name: str) -> tuple[Path, StepRecord, str]:
    """Sample ``name``'s worktree of step 0, cut from the main checkout as it is now, where
    a vote makes one (``CodeVote._one``), and the step's record as its session gets it:
    ``(folder, record, tree)``, ``tree`` the base its changes are measured from."""
    commit, tree = worktrees.base_commit(store.project, "plans")
    rel = f"{worktrees.WORKTREES}/step-0-{name}-{commit[:12]}"
    worktrees.add_worktree(store.project, store.root / rel, commit)
    record = store.load_step(0)
    record.meta.update({WORKTREE_KEY: rel, BASE_KEY: commit, READY_KEY: True,
                        "measured_from": tree})
    return store.root / rel, record, tree


def draws(scripted: list[Sample], extra: Callable[[Path, int], None] | None = None,
          session: str = "sess") -> Callable[[StepRecord], Awaitable[AgentResult | None]]:
    """A ``CodeVote``'s draws: the i-th session (``<session>-<i>``, at $0.01) writes
    ``scripted[i]`` (round and round) into the worktree its record names, then
    ``extra(folder, i)``, and hands off."""
    count = [0]

    async def draw(record: StepRecord) -> AgentResult | None:
        i = count[0]
        count[0] += 1
        folder = record.path.parent.parent / str(record.meta[WORKTREE_KEY])
        for name, text in scripted[i % len(scripted)].items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        if extra is not None:
            extra(folder, i)
        return answer(sorted(scripted[i % len(scripted)]), f"{session}-{i}")
    return draw


def answer(files: list[str], session: str) -> AgentResult:
    """A sample's session's answer (at $0.01): a complete handoff of step 0 that
    changed ``files``."""
    text = ("step: 0\nstatus: complete\noutput: {files: [x]}\nsummary: Fixed clamp.\n"
            f"files_changed: {files}\nsweep: {{considered: [x], found: []}}\n")
    return AgentResult(output={"status": "complete"}, raw_response=text, session_id=session,
                       cost_usd=0.01)


def run_vote(store: PlanStore, draw: Draw, probe: Draw | None = None) -> CodeVote:
    """Step 0's vote on its code (a lead of 2), run: its ``winner`` and ``why`` set."""
    held = CodeVote(store, store.load_step(0), 2, RedFlagger(), draw, probe=probe)
    winner, why = asyncio.run(held.run())
    held.winner, held.why = winner, why  # type: ignore[attr-defined]
    return held
