"""A sample of a vote on a code step whose handoff the gate would refuse is dropped
(``maker.handoff.gate.check_sample``, called by ``maker.engine.code_sample.measure``),
the gate's own words in its flag: a handoff for another step, an output without a key of
the step's ``output_schema``, a ``files_changed`` that is not what git measures in the
sample's worktree, maker's red flags. Samples scripted, in real worktrees; the vote run
with real pytest."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.code_votes import (
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
from maker.core.models import AgentResult
from maker.engine.code_sample import measure
from maker.red_flag.red_flagger import RedFlagger
from maker.store.records import StepRecord

GOOD = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}
REFUSED = "its handoff is refused by the gate: "


def _said(result: AgentResult, old: str, new: str) -> AgentResult:
    """``result`` with ``old`` in its answer's text said as ``new``."""
    assert old in result.raw_response
    return dataclasses.replace(result, raw_response=result.raw_response.replace(old, new))


def test_a_sample_whose_output_lacks_a_key_of_the_schema_is_flagged_and_the_others_decide(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """s1's output has no ``files`` (the step's ``output_schema``): dropped before any
    test runs, with the gate's words; s2 and s3 do the same and decide the vote."""
    store = voting_store(project, monkeypatch)
    scripted = draws([GOOD])
    count = [0]

    async def draw(record: StepRecord) -> AgentResult | None:
        result = await scripted(record)
        count[0] += 1
        return _said(result, "output: {files: [x]}", "output: {done: yes}") \
            if count[0] == 1 and result is not None else result

    vote = run_vote(store, draw)
    flags = vote.vote.flags if vote.vote else {}
    assert flags["s1"].startswith(REFUSED + "output: missing `files` (required by the "
                                  "step's output_schema {files: list})"), flags["s1"]
    assert vote.winner is not None and vote.winner.name in ("s2", "s3"), vote.why
    assert "s1" not in (vote.vote.rows if vote.vote else {})
    assert len(flags["s1"]) <= len(REFUSED) + 300  # (short: the gate's fix is left out)


@pytest.mark.parametrize(("files", "old", "new", "why"), [
    (GOOD, "files_changed: ['src/calc.py', 'tests/test_calc.py']",
     "files_changed: ['src/calc.py']",
     "files_changed: leaves out 1 file(s) this step changed, as maker measured the working "
     "tree against the step's start: tests/test_calc.py"),
    (GOOD, "files_changed: ['src/calc.py', 'tests/test_calc.py']",
     "files_changed: ['src/calc.py', 'tests/test_calc.py', 'tests/test_old.py']",
     "files_changed: names 1 file(s) maker measured no change to since the step began: "
     "tests/test_old.py"),
    (GOOD, "step: 0", "step: 3",
     "step: this handoff says step 3 (the plan has no step 3), but the step in progress is "
     "step 0"),
    (GOOD, "", "", None),
], ids=["omits-a-file", "names-one-unchanged", "another-step", "clean"])
def test_a_samples_handoff_is_checked_by_the_gates_stages_in_its_worktree(
        project: Path, monkeypatch: pytest.MonkeyPatch, files: Sample, old: str, new: str,
        why: str | None) -> None:
    """Measured in its own worktree from the vote's base: a ``files_changed`` that leaves
    out a file the sample changed, or names one it did not, and a handoff of another
    step, are flagged with the gate's words. A clean sample is not, though the step has
    no orientation recorded (the gate's orientation stage is the step's, not a
    sample's: ``check_sample``)."""
    store = voting_store(project, monkeypatch)
    folder, record, tree = sample_tree(store, "s1")
    for name, text in files.items():
        (folder / name).write_text(text)
    result = answer(sorted(files), "s")
    got = measure("s1", folder, _said(result, old, new) if old else result,
                  flagger=RedFlagger(), tree=tree, writes=[], store=store, record=record)
    if why is None:
        assert "orient" not in store.load_step(0).meta
        assert got.sample.flag is None and got.tests == ("tests/test_calc.py",)
        return
    assert (got.sample.flag or "").startswith(REFUSED + why), got.sample.flag
    assert got.sample.diff_lines == 2  # (its code's lines, kept with the flag)


def test_the_probe_and_the_gates_red_flags_are_checked_too(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's handoff is checked as a sample's (its ``files_changed`` leaves out
    its test); and maker's red flags on a handoff are the gate's, whatever the run's
    flagger lets through (here: an answer of any length)."""
    store = voting_store(project, monkeypatch, probe=True)
    folder, record, tree = sample_tree(store, "probe")
    (folder / "tests" / "test_clamp.py").write_text(TEST_LOW)
    got = measure("probe", folder, answer([], "p"), flagger=RedFlagger(), tree=tree,
                  writes=[], store=store, record=record, probe=True)
    assert (got.sample.flag or "").startswith(
        REFUSED + "files_changed: leaves out 1 file(s)"), got.sample.flag
    long = _said(answer(["tests/test_clamp.py"], "p"), "summary: Fixed clamp.",
                 "summary: " + "Fixed clamp. " * 2000)
    got = measure("probe", folder, long, flagger=RedFlagger(max_chars=None), tree=tree,
                  writes=[], store=store, record=record, probe=True)
    assert (got.sample.flag or "").startswith(
        REFUSED + "handoff: red flag: Answer too long"), got.sample.flag

