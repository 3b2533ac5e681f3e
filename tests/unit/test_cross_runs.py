"""Samples of a code step run against one another's tests (``maker.verify.cross_runs``):
real code, real tests, real pytest; then the vote on what they do
(``maker.voting.behaviour``). The base's ``clamp`` does not clamp; each sample fixes it
in a worktree of its own (or not) and adds a test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from maker.verify.cross_runs import SampleTree, cross_run, placed
from maker.verify.detect import VerifyCommand
from maker.voting.behaviour import FAIL, INCOMPATIBLE, NOT_RUN, PASS, CodeSample, decide

BASE = "def clamp(x, lo, hi):\n    return x\n"
RIGHT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
RIGHT_OTHERWISE = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                   "    if x > hi:\n        return hi\n    return x\n")
OFF_BY_ONE = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"
RENAMED = RIGHT + "\n\ndef limit(x, lo, hi):\n    return clamp(x, lo, hi)\n"
TEST_RIGHT = ("from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 3\n"
              "\n\ndef test_low():\n    assert clamp(-1, 0, 3) == 0\n")
TEST_OTHER = "from calc import clamp\n\n\ndef test_top():\n    assert clamp(9, 1, 4) == 4\n"
TEST_OFF = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 2\n"
TEST_VACUOUS = "from calc import clamp\n\n\ndef test_exists():\n    assert callable(clamp)\n"
TEST_RENAMED = "from calc import limit\n\n\ndef test_limit():\n    assert limit(5, 0, 3) == 3\n"
# (on the base, fails the first time it runs in a folder and passes after: flaky)
TEST_FLAKY = ("import os\nfrom calc import clamp\n\n\ndef test_once():\n"
              "    seen = os.path.exists('ran-once')\n    open('ran-once', 'w').close()\n"
              "    assert seen or clamp(5, 0, 3) == 3\n")
SAMPLES = {"r1": (RIGHT, TEST_RIGHT), "off": (OFF_BY_ONE, TEST_OFF),
           "r2": (RIGHT_OTHERWISE, TEST_OTHER), "vac": (RIGHT, TEST_VACUOUS),
           "ren": (RENAMED, TEST_RENAMED), "flaky": (RIGHT, TEST_FLAKY)}
PYTEST = [sys.executable, "-m", "pytest"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _run(command: str, folder: Path, timeout: float) -> int:
    done = subprocess.run(command, shell=True, cwd=folder, capture_output=True,
                          timeout=timeout, check=False)
    return done.returncode


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[str, tuple[str, ...]]]:
    root = tmp_path_factory.mktemp("cross")
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "src" / "calc.py").write_text(BASE)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    base = _git(project, "rev-parse", "HEAD")
    trees = []
    for name, (code, test) in SAMPLES.items():
        folder = root / f"wt-{name}"
        _git(project, "worktree", "add", "-q", "--detach", str(folder), base)
        (folder / "src" / "calc.py").write_text(code)
        (folder / "tests").mkdir(exist_ok=True)
        (folder / "tests" / "test_calc.py").write_text(test)
        trees.append(SampleTree(name, folder, ("tests/test_calc.py",)))
    check = VerifyCommand("test", f"{sys.executable} -m pytest -q -p no:cacheprovider "
                          "-o pythonpath=src")
    return cross_run(project, base, trees, root / "scratch", _run, pytest=PYTEST,
                     checks=[check])


def test_each_samples_tests_run_on_every_result_and_twice_on_the_base(ran) -> None:  # type: ignore[no-untyped-def]
    outcomes, known = ran
    assert known["r1"] == ("r1:tests/test_calc.py::test_high", "r1:tests/test_calc.py::test_low")
    high = "r1:tests/test_calc.py::test_high"
    assert outcomes.base[high] == (FAIL, FAIL)
    assert outcomes.runs[("r1", high)] == PASS and outcomes.runs[("r2", high)] == PASS
    assert outcomes.runs[("off", high)] == FAIL
    assert outcomes.base["vac:tests/test_calc.py::test_exists"] == (PASS, PASS)
    assert outcomes.base["flaky:tests/test_calc.py::test_once"] == (FAIL, PASS)
    renamed = "ren:tests/test_calc.py::test_limit"
    assert outcomes.runs[("r1", renamed)] == INCOMPATIBLE  # (no limit() there)
    assert outcomes.base[renamed] == (FAIL, FAIL)  # (not there yet: it fails)
    assert outcomes.checks["r1"] == {check: True for check in outcomes.checks["r1"]}
    assert placed("tests/test_calc.py", "r1") == "tests/test_maker_r1_calc.py"


def test_the_vote_lands_a_right_sample_and_drops_what_proves_nothing(ran) -> None:  # type: ignore[no-untyped-def]
    outcomes, known = ran
    samples = {n: CodeSample(n, 2 + i, known[n]) for i, n in enumerate(SAMPLES)}
    vote = decide([samples[n] for n in ("r1", "off", "vac", "flaky", "r2", "ren")],
                  outcomes, 2)
    assert "none of its tests fails on the code before the step" in vote.flags["vac"]
    assert "flaky:tests/test_calc.py::test_once" not in vote.columns
    assert not vote.decided  # (r1 and r2; off and ren each apart: a lead of 1)
    assert vote.rows["r1"] == vote.rows["r2"] != vote.rows["off"]
    # ren adds limit(): its test cannot import on the others' code, where it is
    # incompatible (not failed); its interface stands apart from theirs.
    assert INCOMPATIBLE in vote.rows["r1"] and INCOMPATIBLE not in vote.rows["ren"]
    assert vote.rows["ren"] != vote.rows["r1"]
    # Two right samples written differently vote together: a lead of 2 decides.
    again = decide([samples["r2"], samples["r1"]], outcomes, 2)
    assert again.decided and again.winner == samples["r1"]  # (the smaller diff)


def test_a_test_that_hangs_on_the_base_proves_nothing(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A run with no result (it hung past its time) is not a failure on the base: the
    sample's test proves nothing there, and the sample is dropped, saying why."""
    root = tmp_path_factory.mktemp("hang")
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "calc.py").write_text(BASE)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    base = _git(project, "rev-parse", "HEAD")
    folder = root / "wt"
    _git(project, "worktree", "add", "-q", "--detach", str(folder), base)
    (folder / "src" / "calc.py").write_text(RIGHT)
    (folder / "tests").mkdir()
    (folder / "tests" / "test_calc.py").write_text(
        "import time\nfrom calc import clamp\n\n\ndef test_waits():\n"
        "    while clamp(5, 0, 3) != 3:\n        time.sleep(0.1)\n")

    def run(command: str, where: Path, timeout: float) -> int:
        try:
            return _run(command, where, timeout)
        except subprocess.TimeoutExpired:
            return 124

    outcomes, known = cross_run(project, base, [SampleTree("w", folder, ("tests/test_calc.py",))],
                                root / "scratch", run, pytest=PYTEST, timeout=12)
    test = "w:tests/test_calc.py::test_waits"
    assert known["w"] == (test,) and outcomes.runs[("w", test)] == PASS
    assert outcomes.base[test] == (NOT_RUN, NOT_RUN)
    vote = decide([CodeSample("w", 2, known["w"])], outcomes, 1)
    assert "its tests could not be run on the code before the step" in vote.flags["w"]
