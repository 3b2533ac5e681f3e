"""The vote on a code step as ``maker run`` runs it (``maker.engine.code_vote``), its
sessions scripted (each writes its files into its own worktree), the rest real: git's
worktrees, the box around each folder, pytest. What a sample cannot do to the vote: make
its own outcomes with a conftest.py, win with no test, write into another sample's
folder or out of its own through a link."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.code_votes import (
    BASE,
    OFF_BY_ONE,
    RIGHT,
    RIGHT_LONGER,
    TEST_LOW,
    TEST_RIGHT,
    clamp_project,
)
from harness.step_plans import step_spec, write
from maker.core.models import AgentResult
from maker.engine.code_vote import CodeVote
from maker.executor.state.lifecycle import start_step
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import WORKTREE_KEY

FILES = ["src/calc.py", "tests/test_calc.py"]
CHEAT = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
         "def pytest_runtest_makereport(item, call):\n    report = yield\n"
         "    report.get_result().outcome = 'passed'\n")
Sample = dict[str, str]  # file -> text ("" for a link planted by the step: see _LINKS)


def _store(project: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    clamp_project(project)
    store = write(project, [step_spec(0, -1, primary_tools=["Read", "Write", "Bash"],
                                      writes=["src/calc.py", "tests/"], votes=2)])
    start_step(store, 0)
    return store


def _draws(samples: list[Sample], extra: Callable[[Path, int], None] | None = None
           ) -> Callable[[StepRecord], object]:
    count = [0]

    async def draw(record: StepRecord) -> AgentResult | None:
        i = count[0]
        count[0] += 1
        folder = record.path.parent.parent / str(record.meta[WORKTREE_KEY])
        for name, text in samples[i % len(samples)].items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        if extra is not None:
            extra(folder, i)
        files = sorted(samples[i % len(samples)])
        answer = ("step: 0\nstatus: complete\noutput: {files: [x]}\nsummary: Fixed clamp.\n"
                  f"files_changed: {files}\nsweep: {{considered: [x], found: []}}\n")
        return AgentResult(output={"status": "complete"}, raw_response=answer,
                           session_id=f"sess-{i}")
    return draw


def _vote(store: PlanStore, draw: Callable[[StepRecord], object]) -> CodeVote:
    vote = CodeVote(store, store.load_step(0), 2, RedFlagger(), draw)  # type: ignore[arg-type]
    winner, why = asyncio.run(vote.run())
    vote.winner, vote.why = winner, why  # type: ignore[attr-defined]
    return vote


def test_a_conftest_that_makes_every_test_pass_is_flagged(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(project, monkeypatch)
    right = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}
    cheat = {"src/calc.py": BASE + "\n", "tests/test_calc.py": TEST_RIGHT,
             "tests/conftest.py": CHEAT}
    vote = _vote(store, _draws([cheat, right, right]))
    flags = vote.vote.flags if vote.vote else {}
    assert "it changes how the tests run" in flags["s1"] and "conftest.py" in flags["s1"]
    assert vote.winner is not None and vote.winner.name in ("s2", "s3")


def test_a_sample_with_no_test_does_not_win_by_its_smaller_diff(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(project, monkeypatch)
    bare = {"src/calc.py": RIGHT}
    tested = {"src/calc.py": RIGHT_LONGER, "tests/test_calc.py": TEST_LOW}
    vote = _vote(store, _draws([bare, tested, tested]))
    flags = vote.vote.flags if vote.vote else {}
    assert "it added no test" in flags["s1"]
    assert vote.winner is not None and vote.winner.name != "s1"


@pytest.mark.kernel
def test_a_samples_test_writes_into_no_other_folder_nor_out_through_a_link(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder runs in a box of its own: a test that writes into its siblings' and
    the base's folders fails there; a link a sample plants where another's test is put
    is not written through (maker writes there itself, outside any box)."""
    from harness.kernel import require_kernel

    require_kernel()
    store = _store(project, monkeypatch)
    outside = project / "src" / "assert_planted.py"  # (its name: an assertion, to git)
    spoil = ("from pathlib import Path\nfrom calc import clamp\n\n\ndef test_high():\n"
             "    for d in Path.cwd().parent.iterdir():\n        try:\n"
             "            (d / 'src' / 'calc.py').write_text('def clamp(x, lo, hi):\\n"
             "    return 0\\n')\n        except OSError:\n            pass\n"
             "    assert clamp(5, 0, 3) == 2\n")
    off = {"src/calc.py": OFF_BY_ONE, "tests/test_calc.py": spoil}
    right = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}

    def link(folder: Path, i: int) -> None:
        if i == 1:  # (the second sample: a link where the first sample's test goes)
            os.symlink(outside, folder / "tests" / "test_maker_s1_calc.py")

    vote = _vote(store, _draws([off, right, right, right], link))
    assert not outside.exists()
    assert vote.winner is not None and vote.winner.name in ("s2", "s3", "s4"), vote.why
    rows = vote.vote.rows if vote.vote else {}
    assert len({rows[n] for n in rows if n != "s1"}) == 1  # (the right ones unspoiled)
    assert (project / "src" / "calc.py").read_text() == BASE
