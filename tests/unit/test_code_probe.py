"""The probe of a vote on a code step (``maker.engine.code_probe``, ``probe: true``): one
more session that writes only tests of the step's interface; those that fail on the base
join every sample's row. Sessions scripted (each writes its files into its own
worktree), the rest real: git's worktrees, the boxes, pytest; and the engine's run of
such a step, its ledger and its record. The plan field: only where the step's code is
voted on."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.code_votes import (
    HIGH_ONLY,
    RIGHT,
    TEST_LOW,
    TEST_RIGHT,
    Sample,
    answer,
    draws,
    run_vote,
    sample_tree,
    voting_store,
)
from harness.engine_fakes import FakeLedger, parts, run
from harness.step_plans import handoff
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.code_sample import measure
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_COMPLETE
from maker.executor.protocol.orient import record_orient
from maker.planner.linter import lint_text
from maker.planner.parser import parse_plan
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.verify.cross_runs import SampleTree, cross_run
from maker.verify.pytest_runs import code_vote_note
from maker.voting.behaviour import FAIL, INCOMPATIBLE, PASS, CodeSample, decide

# Both pass their own test (clamp(5, 0, 3) == 3) and so agree; HIGH_ONLY does not clamp
# below lo, which only the probe's test (clamp(-2, 0, 3) == 0) shows. Their diffs are
# the same size: without the probe the first (HIGH_ONLY) wins.
WRONG = {"src/calc.py": HIGH_ONLY, "tests/test_calc.py": TEST_RIGHT}
GOOD = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}
PROBE_TEST = "tests/test_clamp_interface.py"
PROBE = {PROBE_TEST: TEST_LOW}
TEST_INSIDE = "from calc import clamp\n\n\ndef test_in():\n    assert clamp(1, 0, 3) == 1\n"


def test_without_a_probe_two_samples_agree_wrongly_and_with_one_the_right_one_wins(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the probe: wrong, right vote together (their tests agree), and the wrong
    one lands (the first of equal diffs). With the probe's test among the columns they
    part; two more right samples decide it, and the first right one wins. The probe is
    no voter: not in the rows, not the winner; its session is in the cost and the
    matrix names it. Kept, the winner's worktree holds the probe's test that chose it, and
    the winner's answer names it among its files."""
    store = voting_store(project, monkeypatch, probe=True)
    blind = run_vote(store, draws([WRONG, GOOD, GOOD, GOOD]))  # (no probe drawn)
    assert blind.winner is not None and blind.winner.name == "s1", blind.why
    assert blind.vote is not None and len(set(blind.vote.rows.values())) == 1
    assert blind.probe is None and "probe" not in (blind.record_of().matrix or {})

    vote = run_vote(store, draws([WRONG, GOOD, GOOD, GOOD]), draws([PROBE], session="probe"))
    assert vote.winner is not None and vote.winner.name == "s2", vote.why
    assert vote.vote is not None and vote.vote.probe_flag is None
    column = f"probe:{PROBE_TEST}::test_low"
    assert column in vote.vote.columns
    at = vote.vote.columns.index(column)
    rows = vote.vote.rows
    assert set(rows) == {"s1", "s2", "s3", "s4"}
    assert rows["s1"][at] == "fail" and rows["s2"][at] == rows["s3"][at] == "pass"
    assert rows["s1"][:at] == rows["s2"][:at]  # (their own tests and checks: the same)
    kept = vote.record_of()
    assert kept.samples == 4 and kept.ballots == ("sess-0", "sess-1", "sess-2", "sess-3")
    assert kept.cost_usd == pytest.approx(0.05)  # (four samples and the probe)
    assert kept.matrix is not None and kept.matrix["probe"] == {
        "name": "probe", "session": "probe-0", "flag": None, "tests": [column],
        "landed": [], "not_landed": {}}
    assert (project / "src" / "calc.py").read_text().endswith("return x\n")  # (untouched)
    answer, kept = vote.keep(vote.winner)  # (the winner's worktree the step's; the probe's
    (folder,) = (store.root / ".maker" / "worktrees").glob("step-0-*")  # (gone too)
    assert folder.name.split("-")[2] == "s2"
    assert (folder / PROBE_TEST).read_text() == TEST_LOW
    assert kept.matrix is not None and kept.matrix["probe"]["landed"] == [PROBE_TEST]
    assert yaml.safe_load(answer.raw_response)["files_changed"] == [
        "src/calc.py", "tests/test_calc.py", PROBE_TEST]


@pytest.mark.parametrize(("probe", "why"), [
    ({PROBE_TEST: TEST_LOW, "src/calc.py": RIGHT},
     "it changed files that are not tests (a probe writes tests alone): src/calc.py"),
    ({PROBE_TEST: TEST_INSIDE},
     f"none of its tests fails on the code before the step (probe:{PROBE_TEST}::test_in)"),
], ids=["code", "passes-on-base"])
def test_a_probe_that_is_not_tests_alone_is_flagged_and_its_tests_unused(
        project: Path, monkeypatch: pytest.MonkeyPatch, probe: Sample, why: str) -> None:
    """A probe that writes code (though its test would show the wrong sample), and one
    whose tests pass on the base: flagged, its tests no column; the vote is decided as
    without it (the wrong one wins), and the flag is said as a sample's is."""
    store = voting_store(project, monkeypatch, probe=True)
    vote = run_vote(store, draws([WRONG, GOOD]), draws([probe], session="probe"))
    assert vote.vote is not None and vote.vote.probe_flag is not None
    assert vote.vote.probe_flag.startswith(why), vote.vote.probe_flag
    assert not any(c.startswith("probe:") for c in vote.vote.columns)
    assert vote.winner is not None and vote.winner.name == "s1"
    assert vote.flagged() == [f"the probe: {vote.vote.probe_flag}"]
    kept = vote.record_of()
    assert kept.matrix is not None and kept.matrix["probe"]["flag"] == vote.vote.probe_flag
    assert kept.flagged == 0 and kept.matrix["probe"]["tests"] == []


@pytest.mark.parametrize(("probe", "why"), [
    ({PROBE_TEST: TEST_LOW}, None),
    ({PROBE_TEST: TEST_LOW, "src/calc.py": RIGHT, "src/more.py": "", "README": "",
      "setup.py": ""}, "it changed files that are not tests (a probe writes tests alone): "
                       "README, setup.py, src/calc.py and 1 more"),
    ({PROBE_TEST: TEST_LOW, "tests/conftest.py": "import os\n"},
     "it changes how the tests run (a sample's votes must come from its tests alone): "
     "tests/conftest.py"),
    ({"tests/notes.txt": "clamp(-2, 0, 3) is 0\n"},
     "it added no test (a vote compares samples by their tests)"),
    ({"tests/test_old.py": TEST_LOW}, "it weakens the tests: tests/test_old.py"),
], ids=["tests", "code", "conftest", "no-test", "edits-a-test"])
def test_the_probe_is_measured_as_a_sample_is_and_may_change_tests_alone(
        project: Path, monkeypatch: pytest.MonkeyPatch, probe: Sample, why: str | None
        ) -> None:
    """Before any test runs (``code_sample.measure``): a probe's diff is of tests
    alone; one that changes any other file, how the tests run, or an existing test, or
    that adds no test, is flagged. A sample may change code."""
    store = voting_store(project, monkeypatch, probe=True)
    folder, record, tree = sample_tree(store, "probe")
    for name, text in probe.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    got = measure("probe", folder, answer(sorted(probe), "p"), flagger=RedFlagger(),
                  tree=tree, writes=[], store=store, record=record, probe=True)
    if why is None:
        assert got.sample.flag is None and got.tests == (PROBE_TEST,)
        assert got.sample.diff_lines == 0  # (tests are no cost)
        return
    assert (got.sample.flag or "").startswith(why), got.sample.flag
    if why.startswith("it changed files"):
        assert measure("s1", folder, answer(sorted(probe), "p"), flagger=RedFlagger(),
                       tree=tree, writes=[], store=store, record=record
                       ).sample.flag is None  # (a sample may)


@dataclass
class _Session:
    """A session of the engine's: sample ``name`` (its worktree says which: ``s1``…, or
    ``probe``) writes its files there, and hands off; what it was told is kept."""

    store: PlanStore
    folder: Path
    name: str
    told: dict[str, str]

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        self.told[self.name] = context
        record_orient(self.store, 0, "none")  # (as its brief asks: `maker orient 0 none`)
        files = {"s1": WRONG, "probe": PROBE}.get(self.name, GOOD)
        for name, text in files.items():
            (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(text)
        answer = handoff(0, output={"files": sorted(files)}, files_changed=sorted(files))
        return AgentResult(yaml.safe_load(answer), answer, cost_usd=0.01, duration_ms=5,
                           session_id=self.name)


class _Sessions:
    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self.prompts: dict[str, str] = {}

    def factory(self, **options: Any) -> _Session:
        folder = Path(options["cwd"])  # (step-0-<name>-<commit>)
        return _Session(self.store, folder, folder.name.split("-")[2], self.prompts)


def test_maker_run_draws_the_probe_with_its_own_brief_and_counts_it(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the engine: the probe's session is told to write tests alone (the step's brief
    after that), is in the ledger as kind probe and in the vote's cost; the right sample
    lands, and the probe's test that chose it with it (the gate takes it: the handoff
    names it), the record saying so."""
    store = voting_store(project, monkeypatch, probe=True, output_schema="{files: list}")
    sessions, ledger = _Sessions(store), FakeLedger()
    result = run(Orchestrator(store, parts(sessions, ledger)))  # type: ignore[arg-type]
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert (project / "src" / "calc.py").read_text() == RIGHT
    assert (project / PROBE_TEST).read_text() == TEST_LOW  # (landed with the winner)
    said = sessions.prompts["probe"]
    assert said.startswith("# You are this step's probe, not its executor")
    assert "you do NOT do the step" in said and sessions.prompts["s1"] in said
    assert "probe" not in sessions.prompts["s1"].split("\n", 1)[0]
    kinds = [c.kind for c in ledger.calls]
    assert kinds.count("probe") == 1 and kinds.count("vote") == 4 + 1
    (record,) = [c.detail for c in ledger.calls if c.kind == "vote" and c.detail]
    assert record["cost_usd"] == pytest.approx(0.05)
    assert record["matrix"]["probe"]["session"] == "probe"
    handed = store.read_handoff(0)
    assert handed["vote"]["matrix"]["probe"]["tests"] == [f"probe:{PROBE_TEST}::test_low"]
    assert handed["vote"]["matrix"]["probe"]["landed"] == [PROBE_TEST]
    assert PROBE_TEST in handed["files_changed"] and PROBE_TEST in handed["files_measured"]


def _shell(command: str, folder: Path, timeout: float) -> int:
    return subprocess.run(command, shell=True, cwd=folder, capture_output=True,
                          timeout=timeout, check=False).returncode


def test_the_probes_tests_are_known_by_the_runs_that_could_collect_them(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's own folder is not run (its code is the base's): its tests' ids are
    those the samples' runs found. A test of a name one sample has is a column (passed
    there, incompatible with the other, failed on the base); a file that imports a name
    no sample has is known by its file alone, incompatible with both. Counted, the
    probe is in no row and wins nothing."""
    voting_store(project, monkeypatch)
    renamed = RIGHT + "\n\ndef limit(x, lo, hi):\n    return clamp(x, lo, hi)\n"
    trees = []
    for name, code in (("s1", RIGHT), ("s2", renamed), ("probe", "")):
        folder = project.parent / name
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(folder), "HEAD"],
                       cwd=project, check=True)
        if code:
            (folder / "src" / "calc.py").write_text(code)
        (folder / "tests" / "test_calc.py").write_text(TEST_RIGHT)
        trees.append(SampleTree(name, folder, ("tests/test_calc.py",)))
    probe = trees.pop()
    (probe.folder / "tests" / "test_calc.py").unlink()
    (probe.folder / "tests" / "test_limit.py").write_text(
        "from calc import limit\n\n\ndef test_limit():\n    assert limit(5, 0, 3) == 3\n")
    (probe.folder / "tests" / "test_bound.py").write_text(
        "from calc import bound\n\n\ndef test_bound():\n    assert bound(5, 0, 3) == 3\n")
    probes = [SampleTree("probe", probe.folder, ("tests/test_bound.py", "tests/test_limit.py"))]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, check=True,
                          capture_output=True, text=True).stdout.strip()
    outcomes, known = cross_run(project, head, trees, project.parent / "scratch", _shell,
                                pytest=[sys.executable, "-m", "pytest"], probes=probes)
    limit, bound = "probe:tests/test_limit.py::test_limit", "probe:tests/test_bound.py"
    assert sorted(known["probe"]) == [bound, limit]
    assert outcomes.runs[("s2", limit)] == PASS and outcomes.runs[("s1", limit)] == INCOMPATIBLE
    assert outcomes.runs[("s1", bound)] == outcomes.runs[("s2", bound)] == INCOMPATIBLE
    assert outcomes.base[limit] == outcomes.base[bound] == (FAIL, FAIL)
    samples = [CodeSample(t.name, 2, known[t.name]) for t in trees]
    vote = decide(samples, outcomes, 1, probe=CodeSample("probe", 0, known["probe"]))
    assert vote.probe_flag is None and {limit, bound} <= set(vote.columns)
    assert set(vote.rows) == {"s1"} and vote.winner is not None and vote.winner.name == "s1"


def _plan(**step: Any) -> str:
    return yaml.safe_dump({"reasoning": "One step.", "plan": [{
        "step": 0, "task_type": "action_step", "title": "Fix clamp",
        "task_description": "Make clamp(x, lo, hi) bound x to [lo, hi] in src/calc.py.",
        "primary_tools": ["Read", "Write"], "output_schema": "{files: list}",
        "next_step_sequence_number": -1, "writes": ["src/calc.py", "tests/"], **step}]})


@pytest.mark.parametrize(("step", "why"), [
    ({"primary_tools": ["Read", "Grep"], "votes": 3}, "it has no tool that writes"),
    ({"task_type": "conditional_step", "next_step_sequence_number": -2,
      "output_schema": "{next_step: int}"}, "a conditional step's code is never voted on"),
    ({"votes": 1}, "`votes: 1` turns its vote off"),
    ({"probe": "yes"}, "must be true or false, got 'yes'"),
], ids=["reads-only", "conditional", "votes-1", "not-a-boolean"])
def test_the_linter_refuses_a_probe_where_the_steps_code_is_not_voted_on(
        step: dict[str, Any], why: str) -> None:
    plan, problems = lint_text(_plan(**{"probe": True, **step}))
    said = [str(p) for p in problems if p.field == "probe"]
    assert plan is None and len(said) == 1 and why in said[0], problems
    assert "fix: remove `probe`" in said[0] or "fix: write `probe: true`" in said[0]


@pytest.mark.parametrize("step", [{"votes": 2}, {}, {"probe": False, "primary_tools": ["Read"]}],
                         ids=["votes-2", "under-vote-k", "false-anywhere"])
def test_a_probe_where_the_steps_code_is_voted_on_is_planned_and_kept(
        tmp_path: Path, step: dict[str, Any]) -> None:
    """Accepted, kept in the step's file through a reload, and the written plan's words
    say the probe costs one session more."""
    plan, problems = lint_text(_plan(**{"probe": True, **step}))
    assert problems == [] and plan is not None
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan)
    assert store.load().get(0).spec.probe is (step.get("probe") is not False)
    note = code_vote_note(plan.steps)
    if step.get("votes") == 2:
        assert "step 0 (at least 2 samples, and its probe: one more session)" in note
    text = store.load().get(0).path.read_text()
    assert bool(re.search(r"^probe: true$", text, re.M)) is store.load().get(0).spec.probe


def test_parse_plan_reads_probe() -> None:
    assert parse_plan(yaml.safe_load(_plan(probe=True, votes=2))).steps[0].probe is True
    assert parse_plan(yaml.safe_load(_plan(votes=2))).steps[0].probe is False
