"""Voting in the plugin (``maker.executor.votes.ballots``): each executor's answer a ballot;
the winner accepted once it leads by K; the bound; one ballot per executor; crash safety;
launches limited to the votes still needed; and the hooks' side (SubagentStop)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.ballots import ballot_file, branching, chose, fire_stop, launch_limit
from harness.step_plans import handoff, make_step, write
from maker.executor.rules.vote_rules import VoteRecord, step_votes
from maker.executor.state.lifecycle import start_step
from maker.executor.state.schedule import next_steps
from maker.executor.votes import ballots
from maker.executor.votes.ballots import cast, launch_instruction
from maker.executor.votes.runs import start_launch
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook


def test_the_lead_is_the_steps_votes_else_2_for_a_conditional_step_else_1() -> None:
    assert step_votes(make_step(0, -2, conditional=True, votes=5)) == 5
    assert step_votes(make_step(0, -2, conditional=True)) == 2
    assert step_votes(make_step(0, -2, conditional=True, votes=1)) == 1
    assert step_votes(make_step(0, -1)) == 1
    assert step_votes(make_step(0, -1, votes=3)) == 3


def test_a_step_that_does_not_vote_is_left_to_the_gate(project: Path) -> None:
    store = branching(project, votes=1)
    assert cast(store, 0, "agent-1", chose(2)) is None
    assert not (store.state_dir / "runs" / "step-00.json").exists()
    assert store.load_step(0).status == "in-progress"
    assert launch_limit(store, 0) == 1
    assert launch_instruction(store, 0).startswith("launch the maker:step-executor subagent")


def test_ballots_are_never_accepted_alone_and_the_winner_leads_by_k(project: Path) -> None:
    store = branching(project, votes=3)
    flow = [("a1", chose(2, "docs are missing"), "voted"), ("a2", chose(1), "voted"),
            ("a3", "Probably docs, I would say.", "flagged"), ("a4", chose(2), "voted"),
            ("a5", chose(2), "voted")]
    for agent, text, outcome in flow:
        result = cast(store, 0, agent, text)
        assert result is not None and result.outcome == outcome
        assert store.load_step(0).status == "in-progress"
        assert store.read_handoff(0) is None
    assert result.need == 1 and result.ballots == 5
    assert result.tally == [('["complete", 2]', 3), ('["complete", 1]', 1)]
    last = cast(store, 0, "a6", chose(2, "docs, clearly"))
    assert last is not None and last.outcome == "accepted" and last.status == "complete"
    kept = store.read_handoff(0)
    assert kept["output"] == {"next_step": 2, "reason": "docs are missing"}  # the first for 2
    vote = kept["vote"]
    assert (vote["k"], vote["samples"], vote["flagged"], vote["margin"]) == (3, 6, 1, 3)
    assert vote["ballots"] == ["a1", "a2", "a3", "a4", "a5", "a6"]
    assert vote["flag_reasons"][0].startswith("Output is not a dict")
    assert vote["cost_usd"] is None  # (what a subagent cost, maker does not learn)
    assert VoteRecord.from_dict(vote).to_dict() == vote  # maker run's shape
    assert [r.number for r in next_steps(store.load(), store)] == [2]  # the winner's branch


def test_a_handoff_the_gate_refuses_is_flagged_and_does_not_vote(project: Path) -> None:
    store = branching(project, votes=2)
    wrong_step = handoff(1, output={"next_step": 2, "reason": "r"})
    result = cast(store, 0, "a1", wrong_step)
    assert result is not None and result.outcome == "flagged" and result.need == 2
    assert result.flag and "step" in result.flag
    no_summary = "step: 0\nstatus: complete\noutput: {next_step: 2, reason: r}\n"
    result = cast(store, 0, "a2", no_summary)
    assert result is not None and result.outcome == "flagged" and "summary" in str(result.flag)
    assert ballot_file(store)["ballots"][1]["answer"] is None


def test_a_second_ballot_from_the_same_executor_is_not_counted(project: Path) -> None:
    store = branching(project, votes=2)
    first = cast(store, 0, "a1", chose(2))
    again = cast(store, 0, "a1", chose(2))
    nameless = cast(store, 0, "", chose(2))
    assert first is not None and first.outcome == "voted"
    assert again is not None and again.outcome == "duplicate" and again.ballots == 1
    assert nameless is not None and nameless.outcome == "duplicate"
    assert store.load_step(0).status == "in-progress"  # one vote for 2, not three
    assert len(ballot_file(store)["ballots"]) == 1


def test_ballots_of_another_run_or_planted_by_hand_do_not_count(project: Path) -> None:
    store = branching(project, votes=2)
    path = store.state_dir / "runs" / "step-00.json"
    path.parent.mkdir(parents=True)
    planted = {"agent": "x", "answer": ["complete", 1], "flag": None, "text": chose(1)}
    path.write_text(json.dumps({"step": 0, "started_at": "an older run",
                                "ballots": [planted, {**planted, "agent": "y"}]}))
    result = cast(store, 0, "a1", chose(2))
    assert result is not None and result.outcome == "voted" and result.ballots == 1
    assert result.tally == [('["complete", 2]', 1)]


def test_an_undecided_vote_fails_the_step_with_the_tally_within_the_bound(
        project: Path) -> None:
    store = branching(project, votes=2)
    bound = ballots.SAMPLES_PER_K * 2
    for i in range(bound - 2):
        result = cast(store, 0, f"a{i}", chose(1 + i % 2))
        assert result is not None and result.outcome == "voted"
    assert cast(store, 0, "flagged", "I am not sure.") is not None
    assert launch_limit(store, 0) == 1  # a tie: 2 votes needed, but 1 ballot left in the bound
    result = cast(store, 0, "last", chose(2))
    assert result is not None and result.outcome == "failed"
    record = store.load_step(0)
    assert record.status == "failed"
    assert record.meta["reasons"][0].startswith(
        "the vote was undecided: no answer led by 2 after 8 executors (1 flagged); votes: "
        '4 for ["complete", 2], 3 for ["complete", 1]')
    assert store.read_handoff(0) is None
    late = cast(store, 0, "late", chose(2))  # the step is no longer in progress
    assert late is None and store.load_step(0).status == "failed"


def test_a_crash_while_accepting_leaves_the_old_state(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = branching(project, votes=2)
    assert cast(store, 0, "a1", chose(2)) is not None
    before = ballot_file(store)

    def crash(*_: Any, **__: Any) -> Any:
        raise RuntimeError("killed mid-accept")

    monkeypatch.setattr("maker.executor.acceptance.accept.accept_handoff", crash)
    with pytest.raises(RuntimeError):
        cast(store, 0, "a2", chose(2))
    assert ballot_file(store) == before  # the ballot and the acceptance: all or nothing
    assert store.load_step(0).status == "in-progress"
    monkeypatch.undo()
    result = cast(store, 0, "a2", chose(2))  # the same executor's answer, not a duplicate
    assert result is not None and result.outcome == "accepted"


def test_launches_are_limited_to_the_votes_the_leader_still_lacks(project: Path) -> None:
    store = branching(project, votes=3)
    assert "launch 3 maker:step-executor subagents at once" in launch_instruction(store, 0)
    assert [start_launch(store, f"t{i}", "s", "p") for i in range(3)] == [None] * 3
    refusal = start_launch(store, "t3", "s", "p")
    assert refusal is not None and "3 executors for step 0 are already running" in refusal
    assert launch_instruction(store, 0, running=3).startswith("wait: 3 executor(s)")
    cast(store, 0, "a1", chose(2))
    cast(store, 0, "a2", chose(2))
    assert launch_limit(store, 0) == 1
    assert "launch 1 maker:step-executor subagent at once" in launch_instruction(store, 0)


def test_a_step_that_does_not_vote_still_runs_one_executor_at_a_time(project: Path) -> None:
    store = branching(project, votes=1)
    assert start_launch(store, "t0", "s", "p") is None
    refusal = start_launch(store, "t1", "s", "p")
    assert refusal is not None and "one executor works on a step at a time" in refusal


@pytest.fixture()
def hooked(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(project / "plugin-data"))
    return project


def test_the_executors_stop_hook_casts_a_ballot_and_never_blocks(hooked: Path) -> None:
    store = branching(hooked, votes=2)
    out = fire_stop(hooked, "a1", "Probably docs.")  # flagged: discarded, not repaired
    assert out is not None and "decision" not in out
    assert "flagged and does not vote" in out["systemMessage"]
    out = fire_stop(hooked, "a2", chose(2))
    assert "recorded as a vote" in out["systemMessage"]
    assert store.load_step(0).status == "in-progress"
    # Another agent's stop (not maker's executor) casts nothing.
    fire_stop(hooked, "a3", chose(2), agent="general-purpose")
    assert store.load_step(0).status == "in-progress"
    out = fire_stop(hooked, "a4", chose(2))
    assert "the vote decided step 0 (complete)" in out["systemMessage"]
    assert store.read_handoff(0)["vote"]["ballots"] == ["a1", "a2", "a4"]


def test_the_stop_hook_and_the_outcome_say_how_many_executors_a_vote_needs(
        hooked: Path) -> None:
    from maker.executor.verdicts.outcome import outcome

    store = write(hooked, [make_step(0, -2, conditional=True, votes=3), make_step(1, -1),
                           make_step(2, -1)])
    start_step(store, 0, session_id="sess-1")
    cast(store, 0, "a1", chose(2))
    data = {"session_id": "sess-1", "transcript_path": str(hooked / "t.jsonl"),
            "cwd": str(hooked), "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Done."}
    out = json.loads(run_hook("stop", HANDLERS["stop"], stdin=json.dumps(data)))
    assert out["decision"] == "block"
    assert "Next: launch 2 maker:step-executor subagents at once" in out["reason"]
    assert "launch 2 maker:step-executor subagents at once" in outcome(store, 0)["next"]
