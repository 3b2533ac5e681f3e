"""The winner of a vote on a code step, from its choice to its landing
(``maker.engine.code_vote``'s ``keep``, ``maker.engine.code_winner``, ``code_probe``'s
``copy_tests``): the probe's tests that chose it go into its worktree, not one that
did not choose it, collides with the winner's, lies outside the step's writes or would be
written through a link; and a run killed after the winner was kept, before it landed,
goes on from it at the next run (no new vote), or, where it cannot, votes again with the
step's front matter naming no removed folder. Sessions scripted (each writes its files
into its own worktree), the rest real: git's worktrees, pytest, the engine, the gate."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import maker.engine.step_run as step_run
from harness.code_votes import (
    HIGH_ONLY,
    RIGHT,
    TEST_LOW,
    TEST_OFF,
    TEST_RIGHT,
    draws,
    run_vote,
    voting_store,
)
from harness.engine_fakes import FakeLedger, parts, run
from harness.step_plans import handoff
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.code_probe import copy_tests
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_COMPLETE
from maker.executor.protocol.orient import record_orient
from maker.store.plan_store import PlanStore
from maker.store.workspace import WORKTREE_KEY, worktree_of
from maker.tools.git.worktrees import WORKTREES

PROBE_TEST = "tests/test_clamp_interface.py"
TEST_TOP = "from calc import clamp\n\n\ndef test_top():\n    assert clamp(9, 0, 3) == 3\n"
WRONG = {"src/calc.py": HIGH_ONLY, "tests/test_calc.py": TEST_RIGHT}
GOOD = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}


def test_only_the_probes_tests_that_chose_the_winner_go_into_its_worktree(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe wrote three test files, each failing on the base: one the winner passes
    (copied in), one at a path the winner wrote too (the winner's kept), one the winner
    fails (every sample does: it parts none, and is no test of the winner). The record
    names what landed and why the rest did not; the answer names the one copied."""
    store = voting_store(project, monkeypatch, probe=True)
    probe = {PROBE_TEST: TEST_LOW, "tests/test_calc.py": TEST_TOP, "tests/test_off.py": TEST_OFF}
    vote = run_vote(store, draws([GOOD, GOOD]), draws([probe], session="probe"))
    assert vote.winner is not None and vote.vote is not None, vote.why
    assert vote.vote.probe_flag is None
    answer, kept = vote.keep(vote.winner)
    folder = store.root / str(store.load_step(0).meta[WORKTREE_KEY])
    assert (folder / PROBE_TEST).read_text() == TEST_LOW
    assert (folder / "tests" / "test_calc.py").read_text() == TEST_RIGHT  # (the winner's)
    assert not (folder / "tests" / "test_off.py").exists()
    assert kept.matrix is not None
    said = kept.matrix["probe"]
    assert said["landed"] == [PROBE_TEST]
    assert said["not_landed"] == {
        "tests/test_calc.py": "the winner wrote a file of that path: the winner's is kept",
        "tests/test_off.py": "the winner's outcome of a test of it is fail"}
    assert yaml.safe_load(answer.raw_response)["files_changed"] == [
        "src/calc.py", "tests/test_calc.py", PROBE_TEST]


def test_a_probes_test_outside_the_writes_or_behind_a_link_is_not_copied(
        tmp_path: Path) -> None:
    """Outside the step's writes (the vote's measure flags such a probe before: this is
    the copy's own rule), and where the winner's folder leads out through a link: not
    copied, nothing written out of the folder, and each said why."""
    probe, winner, outside = tmp_path / "probe", tmp_path / "winner", tmp_path / "outside"
    for name in ("docs/test_a.py", "tests/sub/test_b.py", "tests/test_c.py"):
        (probe / name).parent.mkdir(parents=True, exist_ok=True)
        (probe / name).write_text(TEST_LOW)
    (winner / "tests").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, winner / "tests" / "sub")
    (winner / "tests" / "test_c.py").symlink_to(outside / "planted.py")
    landed, left = copy_tests(probe, winner, ["docs/test_a.py", "tests/sub/test_b.py",
                                              "tests/test_c.py"], ["src/", "tests/"], [])
    assert landed == ["tests/test_c.py"]
    assert left == {"docs/test_a.py": "it lies outside the step's writes",
                    "tests/sub/test_b.py": "its folder in the winner's worktree is a link "
                                           "out of it"}
    assert list(outside.iterdir()) == []  # (the link at test_c.py replaced, not followed)
    assert not (winner / "tests" / "test_c.py").is_symlink()
    assert (winner / "tests" / "test_c.py").read_text() == TEST_LOW


class _Killed(BaseException):
    """The run killed (SIGKILL) at this point: nothing after it runs."""


@dataclass
class _Session:
    """A session of the engine's: sample ``name`` (``s1``…, or ``probe``, by its
    worktree) writes its files there and hands off; one asked for is noted."""

    store: PlanStore
    folder: Path
    name: str
    asked: list[tuple[str, Any]]

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        record = self.store.load_step(0)  # (what the step's front matter names by now)
        self.asked.append((self.name, record.meta.get(WORKTREE_KEY)))
        record_orient(self.store, 0, "none")
        files = {"s1": WRONG, "probe": {PROBE_TEST: TEST_LOW}}.get(self.name, GOOD)
        for name, text in files.items():
            (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(text)
        answer = handoff(0, output={"files": sorted(files)}, files_changed=sorted(files))
        return AgentResult(yaml.safe_load(answer), answer, cost_usd=0.01, duration_ms=5,
                           session_id=self.name)


class _Sessions:
    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self.asked: list[tuple[str, Any]] = []

    def factory(self, **options: Any) -> _Session:
        folder = Path(options["cwd"])  # (step-0-<name>-<commit>)
        return _Session(self.store, folder, folder.name.split("-")[2], self.asked)


def _killed_after_keep(store: PlanStore, monkeypatch: pytest.MonkeyPatch,
                       parallel: int) -> Path:
    """Step 0's vote run by the engine, the run killed once the winner was kept (its
    worktree the step's own), before its verification: the winner's worktree."""
    real = step_run.verify_apart

    async def killed(*_: Any) -> Any:
        raise _Killed()

    monkeypatch.setattr(step_run, "verify_apart", killed)
    sessions = _Sessions(store)
    with pytest.raises(_Killed):
        run(Orchestrator(store, parts(sessions), parallel=parallel))  # type: ignore[arg-type]
    monkeypatch.setattr(step_run, "verify_apart", real)
    record = store.load_step(0)
    kept = worktree_of(store, record)
    assert record.status == "in-progress" and kept is not None and kept.is_dir()
    assert kept.name.split("-")[2] == "s2"  # (the right one: the probe parted them)
    assert [p.name for p in (store.root / WORKTREES).glob("step-0-*")] == [kept.name]
    won = json.loads((store.state_dir / "votes" / "step-0-won.json").read_text())
    assert won["worktree"] == record.meta[WORKTREE_KEY]  # (kept beside it: its answer,
    assert PROBE_TEST in yaml.safe_load(won["answer"])["files_changed"]  # (the vote's
    assert won["record"]["matrix"]["probe"]["landed"] == [PROBE_TEST]  # record)
    return kept


def _names_no_missing_folder(store: PlanStore) -> None:
    for record in store.load().steps:
        folder = worktree_of(store, record)
        assert folder is None or folder.is_dir(), (record.number, record.meta)


@pytest.mark.parametrize("parallel", [1, 2], ids=["serial", "waves"])
def test_a_run_killed_after_the_winner_was_kept_goes_on_from_it(
        project: Path, monkeypatch: pytest.MonkeyPatch, parallel: int) -> None:
    """The next run draws no session: the kept winner is verified, landed (the probe's
    test that chose it too) and accepted with the vote's record; nothing names a
    folder that is gone."""
    store = voting_store(project, monkeypatch, probe=True, output_schema="{files: list}")
    _killed_after_keep(store, monkeypatch, parallel)
    again, ledger = _Sessions(store), FakeLedger()
    result = run(Orchestrator(store, parts(again, ledger),  # type: ignore[arg-type]
                              parallel=parallel))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert again.asked == []
    assert not [c for c in ledger.calls if c.kind in ("vote", "probe")]
    assert (project / "src" / "calc.py").read_text() == RIGHT
    assert (project / PROBE_TEST).read_text() == TEST_LOW
    vote = store.read_handoff(0)["vote"]
    assert vote["decided"] and vote["matrix"]["probe"]["landed"] == [PROBE_TEST]
    assert vote["ballots"] == ["s1", "s2", "s3", "s4"]
    _names_no_missing_folder(store)


def test_a_killed_runs_winner_that_cannot_be_gone_on_from_is_forgotten_before_a_new_vote(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The winner's answer is gone (a run of an older maker kept none): the next run
    votes again, and before its first sample the step's front matter names no folder
    that is gone (the old winner's work kept in ``unlanded``); the new winner lands."""
    store = voting_store(project, monkeypatch, probe=True, output_schema="{files: list}")
    old = _killed_after_keep(store, monkeypatch, 1)
    (store.state_dir / "votes" / "step-0-won.json").unlink()
    again = _Sessions(store)
    result = run(Orchestrator(store, parts(again)))  # type: ignore[arg-type]
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert again.asked and not old.exists()
    named = {name for _, name in again.asked}
    assert named == {None}, named  # (each session asked: the step named no worktree)
    assert store.load_step(0).meta.get("unlanded")  # (the old winner's work, as a tree)
    assert (project / "src" / "calc.py").read_text() == RIGHT
    _names_no_missing_folder(store)

