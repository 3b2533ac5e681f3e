"""The plugin's ballots, in the run's record (plans/.maker/runs/step-NN.json), in odd
states: a FIFO, a file nested too deep to parse, a folder, and a vote decided by the
ballots on file but never applied. None may hang a hook, raise a traceback or leave the
step stuck in progress."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.ballots import ballot_file, branching, chose, fire_stop, launch_limit
from maker.executor.votes.ballots import cast, vote_state
from maker.store.plan_store import PlanStore


@pytest.fixture(name="hooked")
def hooked_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(project / "plugin-data"))
    return project


def _votes_file(store: PlanStore) -> Path:
    folder = store.state_dir / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "step-00.json"


def current_votes(store: PlanStore, step: int) -> tuple[list[tuple[str, int]], int, int]:
    """(the votes so far, the ballots so far, the votes the leader lacks)."""
    state = vote_state(store, step)
    assert state is not None
    return state.counts(), len(state.tally.ballots), state.need


def _within(seconds: float, call: Any, fifo: Path) -> Any:
    """``call()``'s result, or fail when it is still blocked after ``seconds`` (then the
    FIFO is opened for writing and closed, so the blocked reader gets its end)."""
    box: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: box.update(value=call()), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(5)
        raise AssertionError(f"blocked for {seconds}s on the FIFO {fifo}")
    return box["value"]


def test_a_fifo_for_the_votes_file_never_blocks(hooked: Path) -> None:
    store = branching(hooked, votes=2)
    fifo = _votes_file(store)
    os.mkfifo(fifo)
    assert _within(5, lambda: launch_limit(store, 0), fifo) == 2
    out = _within(5, lambda: fire_stop(hooked, "a1", chose(2)), fifo)
    assert "recorded as a vote" in out["systemMessage"]
    assert current_votes(store, 0) == ([('["complete", 2]', 1)], 1, 1)


def test_a_votes_file_nested_too_deep_starts_the_vote_afresh(hooked: Path) -> None:
    store = branching(hooked, votes=2)
    started = store.read_active()["started_at"]
    _votes_file(store).write_text('{"started_at": %s, "ballots": %s}' % (
        json.dumps(started), "[" * 100_000 + "]" * 100_000))
    assert launch_limit(store, 0) == 2
    assert current_votes(store, 0) == ([], 0, 2)
    out = fire_stop(hooked, "a1", chose(2))
    assert "recorded as a vote" in out["systemMessage"]


def test_a_folder_for_the_votes_file_is_named_with_its_fix(hooked: Path) -> None:
    store = branching(hooked, votes=2)
    _votes_file(store).mkdir()
    out = fire_stop(hooked, "a1", chose(2))
    text = out["systemMessage"]
    assert "step-00.json: is a folder" in text and "rm -r" in text
    assert "IsADirectoryError" not in text


def test_a_vote_decided_on_file_but_not_applied_is_applied_by_the_next_return(
        project: Path) -> None:
    """Ballots restored by hand (or a vote decided by ballots a crash kept) used to
    leave the step in progress for ever: every later ballot was "not counted", and the
    main agent was told to launch one more executor, again and again."""
    store = branching(project, votes=2)
    started = store.read_active()["started_at"]
    _votes_file(store).write_text(json.dumps({"step": 0, "started_at": started, "ballots": [
        {"agent": a, "answer": ["complete", 1], "flag": None, "text": chose(1)}
        for a in ("x1", "x2")]}))
    result = cast(store, 0, "a1", chose(2))
    assert result is not None and result.outcome == "accepted", result
    assert store.load_step(0).status == "complete"
    assert store.read_handoff(0)["output"]["next_step"] == 1
    assert store.read_handoff(0)["vote"]["ballots"] == ["x1", "x2"]  # a1 not counted


def test_a_vote_spent_on_file_but_not_applied_fails_the_step(project: Path) -> None:
    store = branching(project, votes=1 + 1)
    started = store.read_active()["started_at"]
    _votes_file(store).write_text(json.dumps({"step": 0, "started_at": started, "ballots": [
        {"agent": f"x{i}", "answer": None, "flag": "not a mapping", "text": "?"}
        for i in range(8)]}))
    result = cast(store, 0, "a1", chose(2))
    assert result is not None and result.outcome == "failed", result
    assert store.load_step(0).status == "failed"
    assert "the vote was undecided" in result.reasons[0]


def test_a_record_over_its_limit_fails_the_vote_rather_than_start_it_again(
        project: Path) -> None:
    """Long answers once outgrew the record: it then read as a fresh one, the vote began
    again with every executor, and its bound was never reached (QA finding)."""
    from maker.executor.votes import run_record

    store = branching(project, votes=2)
    path = _votes_file(store)
    path.write_bytes(b" " * (run_record._RECORD_LIMIT + 1))
    result = cast(store, 0, "a1", chose(2))
    assert result is not None and result.outcome == "failed"
    assert "outgrew maker's limit" in result.reasons[0]
    assert store.load_step(0).status == "failed"


def test_only_the_first_answer_of_its_kind_keeps_its_text(project: Path) -> None:
    store = branching(project, votes=3)
    for agent, text in [("a1", chose(2, "first")), ("a2", "Probably docs."),
                        ("a3", chose(2, "second")), ("a4", chose(1, "other"))]:
        cast(store, 0, agent, text)
    texts = {b["agent"]: b["text"] for b in ballot_file(store)["ballots"]}
    assert "first" in texts["a1"] and "other" in texts["a4"]
    assert texts["a2"] == texts["a3"] == ""  # a flagged answer, a second of its kind
    for agent in ("a5", "a6"):
        cast(store, 0, agent, chose(2, "later"))
    assert store.read_handoff(0)["output"]["reason"] == "first"  # the winner's own text


def test_ids_that_are_not_text_in_the_record_or_the_client_s_tasks_break_no_hook(
        hooked: Path) -> None:
    """A launch whose agent is a list (planted), or a Stop input whose background task
    has a list for its id, made the Stop and agent-return hooks raise (QA finding)."""
    from maker.executor.state.lifecycle import start_step
    from maker.hooks.handlers import HANDLERS
    from maker.hooks.protocol import run_hook

    store = branching(hooked, votes=2)
    start_step(store, 0, session_id="sess-1")  # (this session's step: its Stop is held)
    started = store.read_active()["started_at"]
    _votes_file(store).write_text(json.dumps({"step": 0, "started_at": started, "launches": [
        {"id": "t1", "agent": ["x"], "background": True, "done": False},
        {"id": {"a": 1}, "agent": "a2", "background": True, "done": False}]}))
    stop = {"session_id": "sess-1", "transcript_path": str(hooked / "t.jsonl"),
            "cwd": str(hooked), "hook_event_name": "Stop", "stop_hook_active": False,
            "background_tasks": [{"id": ["x"], "status": "running"}, "junk"]}
    out = run_hook("stop", HANDLERS["stop"], stdin=json.dumps(stop))
    assert "could not" not in out and "Traceback" not in out
    assert "launch 2 maker:step-executor subagents at once" in json.loads(out)["reason"]
    fire_stop(hooked, "a1", chose(2))
    back = {"session_id": "sess-1", "cwd": str(hooked), "hook_event_name": "PostToolUse",
            "tool_name": "Agent", "tool_use_id": "t1",
            "tool_input": {"subagent_type": "maker:step-executor", "prompt": "Execute maker "
                           "step 0.", "description": "step 0"},
            "tool_response": {"agentId": "a1", "status": "completed", "content": []}}
    out = run_hook("agent-return", HANDLERS["agent-return"], stdin=json.dumps(back))
    assert "recorded as a vote" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_record_that_holds_ballots_is_always_written_durably(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.executor.votes import run_record
    from maker.executor.votes.runs import add_turn, start_launch

    store = branching(project, votes=2)
    writes: list[bool] = []
    real = run_record.atomic_write

    def spy(path: Path, text: str, durable: bool = True) -> None:
        writes.append(durable)
        real(path, text, durable)

    monkeypatch.setattr(run_record, "atomic_write", spy)
    add_turn(store, 0, "sess-1", "p0")
    assert writes == [False]  # turns and launches alone: bookkeeping
    cast(store, 0, "a1", chose(2))
    add_turn(store, 0, "sess-1", "p1")
    assert start_launch(store, "t9", "sess-1", "p1") is None
    assert writes[1:] == [True, True, True]
