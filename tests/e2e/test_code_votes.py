"""Votes on what code does, end to end in ``maker run`` (the real SDK and CLI; only the
model is scripted, the code and the tests are real): a code step with ``votes: 2`` is
sampled in worktrees of its own from the same base; the samples' tests run against one
another's code; the first behaviour to lead by 2 wins, its smallest diff lands into the
main checkout, and the others' worktrees are removed. The vote's matrix is in the handoff
and the ledger."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.code_votes import (
    DELETES,
    HIGH_ONLY,
    OFF_BY_ONE,
    RIGHT,
    RIGHT_LONGER,
    TEST_LOW,
    TEST_OFF,
    TEST_RIGHT,
    TEST_VACUOUS,
    clamp_project,
    code_plan,
    samples,
)
from harness.maker_run import run_maker
from harness.plugin import step, write_plan
from harness.scenarios import EXECUTOR
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI

pytestmark = pytest.mark.e2e

TEST_CMD = f"{sys.executable} -m pytest -q -p no:cacheprovider"


def test_maker_run_votes_on_what_the_samples_code_does(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """Right (written at length), off by one: 1 to 1, two more are drawn; right, right:
    3 to 1, a lead of 2. Two right samples written differently vote together; the
    smallest right diff lands."""
    clamp_project(project)
    write_plan(project, code_plan())
    variants = [(RIGHT_LONGER, TEST_LOW, ""), (OFF_BY_ONE, TEST_OFF, ""),
                (RIGHT, TEST_RIGHT, ""), (RIGHT_LONGER, TEST_RIGHT, "")]
    fake_api.script(EXECUTOR, *[samples(variants)] * (3 * len(variants)))

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


def test_a_test_that_proves_nothing_and_a_deleted_test_are_flagged(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """A sample whose only test passes on the code before the step, and one that deletes
    an existing test, are dropped (never repaired) and drawn again; two right ones win."""
    clamp_project(project)
    write_plan(project, code_plan())
    variants = [(RIGHT, TEST_VACUOUS, ""), (RIGHT, TEST_RIGHT, ""),
                (RIGHT, TEST_RIGHT, DELETES), (RIGHT_LONGER, TEST_LOW, "")]
    fake_api.script(EXECUTOR, *[samples(variants)] * (3 * len(variants)))

    run = run_maker(fake_api, project, claude_home, "--approve", "auto", "--events", "-",
                    extra={"TEST_CMD": TEST_CMD})

    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    fake_api.assert_done()
    flags = sorted(PlanStore(project / "plans").read_handoff(0)["vote"]["matrix"][
        "flags"].values())  # (which sample is which: the order their sessions first asked)
    assert len(flags) == 2, flags
    assert "it weakens the tests: tests/test_old.py (deleted)" in flags[0]
    assert "none of its tests fails on the code before the step" in flags[1]
    assert said.count("StepFlagged") == 2
    assert (project / "src" / "calc.py").read_text() == RIGHT
    assert (project / "tests" / "test_old.py").is_file()


def test_an_undecided_vote_fails_the_step_with_the_matrix(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """Samples that change nothing are each dropped: no behaviour leads by 2 within 4 x 2
    samples; the step fails, saying the matrix, and the main checkout is as it was.
    (Samples that disagree, turn about: tests/unit/test_behaviour_vote.py.)"""
    clamp_project(project)
    write_plan(project, code_plan())
    variants = [("", "", "")] * 8
    fake_api.script(EXECUTOR, *[samples(variants)] * (3 * len(variants)))

    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": TEST_CMD})

    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0, said[-3000:]
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "failed"
    reason = " ".join(str(record.meta.get("reasons")).split())
    assert "the vote on the step's code was undecided: no behaviour led by 2 after 8 " \
           "samples" in reason, reason
    assert "rows: none" in reason and "s8: it changed no file" in reason
    assert (project / "src" / "calc.py").read_text() == "def clamp(x, lo, hi):\n    return x\n"
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-0-*"))


def test_a_probes_test_parts_two_samples_that_agree_wrongly(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """`probe: true`: one more session, told to write tests alone, adds a test of the low
    bound. A sample that clamps only above and a right one pass each other's tests, but
    not the probe's: 1 to 1, two more right ones decide it, and a right one lands. The
    probe is no voter (four samples), its session in the ledger and the matrix; its test,
    which chose the winner, lands with it (in the handoff's files too)."""
    clamp_project(project)
    write_plan(project, code_plan(probe=True))
    variants = [(HIGH_ONLY, TEST_RIGHT, ""), (RIGHT, TEST_RIGHT, ""),
                (RIGHT, TEST_RIGHT, ""), (RIGHT, TEST_RIGHT, "")]
    told: dict[str, str] = {}
    turns = samples(variants, {"tests/test_clamp_low.py": TEST_LOW}, told)
    fake_api.script(EXECUTOR, *[turns] * (3 * (len(variants) + 1)))

    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": TEST_CMD})

    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    fake_api.assert_done()
    assert "You are this step's probe, not its executor" in told["probe"]
    assert (project / "src" / "calc.py").read_text() == RIGHT
    assert (project / "tests" / "test_clamp_low.py").read_text() == TEST_LOW
    store = PlanStore(project / "plans")
    handed = store.read_handoff(0)
    assert "tests/test_clamp_low.py" in handed["files_changed"]
    vote = handed["vote"]
    assert (vote["samples"], vote["decided"]) == (4, True)
    assert [t["votes"] for t in vote["tally"]] == [3, 1]
    probe = vote["matrix"]["probe"]
    assert probe["flag"] is None and probe["tests"] == [
        "probe:tests/test_clamp_low.py::test_low"]
    assert probe["landed"] == ["tests/test_clamp_low.py"] and probe["not_landed"] == {}
    assert "probe" not in vote["matrix"]["rows"]
    calls = Ledger(store).calls()
    assert [c.kind for c in calls].count("probe") == 1
    assert [c.kind for c in calls].count("vote") == 4 + 1
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-0-*"))
