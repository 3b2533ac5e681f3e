"""Voting in a headless run: the real vote, store, gate and ledger, with
the executor's sessions scripted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.engine_fakes import ScriptedModel, oriented, parts, run
from harness.step_plans import branch_plan, handoff, make_step, write
from maker.core.events import StepFlagged
from maker.engine.ledger import Call, Ledger
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_COMPLETE, EXIT_FAILED
from maker.executor.rules.vote_rules import (
    SAMPLES_PER_K,
    VoteRecord,
    side_effect_free,
    step_votes,
)
from maker.planner.parser import structure_problems


def chose(n: int, reason: str = "because") -> str:
    return handoff(1, output={"next_step": n, "reason": reason})


GARBAGE = "- a list\n- not a handoff\n"


def test_a_conditional_step_is_decided_by_the_first_answer_ahead_by_k(project: Path) -> None:
    steps = branch_plan().steps
    steps[2] = replace(steps[2], primary_tools=["Read", "Edit"])  # step 3 edits: no vote
    store = write(project, steps)
    # First three at once: 3, 2 and a flagged one; then three more for 3: 4 to 1.
    model = ScriptedModel([chose(3, "tests exist"), chose(2), GARBAGE,
                           chose(3, "I see tests/"), chose(3, "there are  tests"), chose(3),
                           oriented(store, 3, handoff(3))])
    engine = parts(model)
    engine.votes = 3
    result = run(Orchestrator(store, engine))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert [p[0] for p in model.prompts] == [1] * 6 + [3]  # step 2, the other branch: skipped
    assert len({p[1] for p in model.prompts[:6]}) == 1  # six samples of one brief
    (flag,) = [e.reason for e in result.events if isinstance(e, StepFlagged)]
    assert "not a dict" in flag
    vote = store.read_handoff(1)["vote"]
    assert (vote["k"], vote["samples"], vote["flagged"], vote["margin"]) == (3, 6, 1, 3)
    assert vote["decided"] is True
    assert vote["tally"] == [{"answer": '["complete", 3]', "votes": 4},
                             {"answer": '["complete", 2]', "votes": 1}]
    assert vote["cost_usd"] == pytest.approx(0.06)
    kinds = [(c.kind, c.step, c.detail is not None) for c in engine.ledger.calls]
    assert kinds == [("vote", 1, False)] * 6 + [("vote", 1, True), ("executor", 3, False)]
    # Each ballot named by its sample's session, as the ledger's calls name them; the
    # ledger keeps the handoff's record, in the plugin's shape.
    samples = engine.ledger.calls[:6]
    assert sorted(vote["ballots"]) == sorted(c.session_id for c in samples)
    assert len(set(vote["ballots"])) == 6
    assert engine.ledger.calls[6].detail == vote == VoteRecord.from_dict(vote).to_dict()
    assert "vote" not in store.read_handoff(3)


def test_an_undecided_vote_fails_the_step_with_the_tally(project: Path) -> None:
    store = write(project, branch_plan().steps)
    model = ScriptedModel([chose(2), chose(3)] * (2 * SAMPLES_PER_K))
    engine = parts(model)
    engine.votes = 2
    result = run(Orchestrator(store, engine))
    assert result.exit_code == EXIT_FAILED
    assert len(model.prompts) == SAMPLES_PER_K * 2  # bounded
    assert "the vote was undecided: no answer led by 2 after 8 samples" in result.message
    assert "4 for" in result.message
    assert store.load().get(1).status == "failed"
    (record,) = [c for c in engine.ledger.calls if c.detail is not None]
    assert record.error == "undecided" and record.detail["decided"] is False


def test_only_steps_without_side_effects_vote(project: Path) -> None:
    reads = make_step(1, 2)  # Read only
    writes = replace(make_step(2, -1), primary_tools=["Read", "Write"])
    store = write(project, [reads, writes])
    model = ScriptedModel([handoff(1), handoff(1), oriented(store, 2, handoff(2))])
    engine = parts(model)
    engine.votes = 2
    result = run(Orchestrator(store, engine))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert [p[0] for p in model.prompts] == [1, 1, 2]  # two samples agree; step 2 once
    assert store.read_handoff(1)["vote"]["samples"] == 2
    assert "vote" not in store.read_handoff(2)


def test_a_steps_own_votes_apply_without_the_run_flag(project: Path) -> None:
    store = write(project, [replace(make_step(1, -1), votes=2)])
    model = ScriptedModel([handoff(1), handoff(1)])
    result = run(Orchestrator(store, parts(model)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert len(model.prompts) == 2 and store.read_handoff(1)["vote"]["k"] == 2


def test_which_steps_vote() -> None:
    assert side_effect_free(make_step(1, -2, conditional=True))
    assert side_effect_free(replace(make_step(1, 2), primary_tools=["Read", "Grep"]))
    assert not side_effect_free(replace(make_step(1, 2), primary_tools=["Read", "Bash"]))
    assert not side_effect_free(replace(make_step(1, 2), fallback_tools=["Edit"]))
    assert step_votes(make_step(1, 2), 1) == 1
    assert step_votes(make_step(1, 2), 3) == 3  # its tools only read: --vote 3 applies
    assert step_votes(replace(make_step(1, 2), primary_tools=["Write"]), 3) == 1
    assert step_votes(replace(make_step(1, 2), votes=5), 1) == 5
    # A conditional step votes with a lead of 2 in maker run too, as in /maker:step.
    assert step_votes(make_step(1, -2, conditional=True)) == 2
    assert step_votes(make_step(1, -2, conditional=True), 3) == 3
    assert step_votes(make_step(1, -2, conditional=True, votes=1), 3) == 1
    # A conditional step whose tools write is answered once, whatever the run asks:
    # each sample would do its writes.
    writes = replace(make_step(1, -2, conditional=True), primary_tools=["Read", "Write"])
    assert not side_effect_free(writes)
    assert step_votes(writes) == step_votes(writes, 5) == 1


def _raw(**changes: object) -> dict[str, object]:
    step: dict[str, object] = {
        "step": 0, "task_type": "action_step", "title": "t", "task_description": "Do it.",
        "primary_tools": ["Read"], "fallback_tools": [], "input_variables": [],
        "output_variable": "step_0_output", "output_schema": "{result: string}",
        "next_step_sequence_number": -1}
    step.update(changes)
    return {"reasoning": "r", "plan": [step]}


@pytest.mark.parametrize(("changes", "expected"), [
    ({"votes": 3}, None),
    # A conditional step's tools may write too: two samples would both write.
    ({"votes": 3, "primary_tools": ["Edit"], "task_type": "conditional_step",
      "next_step_sequence_number": -1}, "a conditional step's tools Edit have side effects"),
    ({"votes": 1, "primary_tools": ["Write"]}, None),
    # A code step's samples each work in a worktree of their own (maker run).
    ({"votes": 3, "primary_tools": ["Read", "Write"]}, None),
    ({"votes": 0}, "must be a whole number from 1 to 20"),
    ({"votes": True}, "must be a whole number from 1 to 20"),
    ({"votes": "3"}, "must be a whole number from 1 to 20"),
    ({"votes": 21}, "must be a whole number from 1 to 20"),
])
def test_votes_are_linted(changes: dict[str, object], expected: str | None) -> None:
    problems = [str(p) for p in structure_problems(_raw(**changes)) if "votes" in str(p)]
    if expected is None:
        assert problems == []
    else:
        assert len(problems) == 1 and expected in problems[0]


def test_a_votes_record_survives_the_ledger_file(project: Path) -> None:
    store = write(project, [make_step(1, -1)])
    ledger = Ledger(store)
    ledger.record(Call(kind="vote", step=1, attempt=0, cost_usd=0.0, duration_ms=0,
                       input_tokens=0, output_tokens=0, model=None, error=None, at="t",
                       session_id=None, detail={"k": 3, "margin": 3}))
    (call,) = ledger.calls()
    assert call.detail == {"k": 3, "margin": 3}
    with pytest.raises(ValueError, match="detail"):
        Call(kind="vote", step=1, attempt=0, cost_usd=0.0, duration_ms=0, input_tokens=0,
             output_tokens=0, model=None, error=None, at="t", session_id=None,
             detail=[1])  # type: ignore[arg-type]
