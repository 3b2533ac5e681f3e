"""Orient and the deviation gate (seed 004: orient, route_staleness, gate_deviation;
docs/architecture.md#the-seeds), through
the hooks as the client fires them: no edit before orient; a major deviation stops for a
person; STEP_AUTOAPPROVE passes this gate only, and only from the hook's own environment."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.hooks import EXECUTOR, fire, stop_input, subagent_input, tool_input
from harness.step_plans import handoff, linear
from maker.cli.main import cli
from maker.errors import HandoffRejectedError, StepError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approve_step, set_policy
from maker.executor.launch.brief import build_brief
from maker.executor.protocol.orient import (
    DEVIATION_LABELS,
    findings,
    pending_deviation,
    record_orient,
)
from maker.executor.state.lifecycle import reset_step, start_step
from maker.executor.verdicts.outcome import outcome
from maker.store.plan_store import PlanStore
from maker.tools.command.maker_commands import orient_command


@pytest.fixture()
def project(plugin_project: Path) -> Path:
    return plugin_project


def _started(project: Path, n: int = 1) -> PlanStore:
    """A three-step chain, step ``n`` started; it may write (Write, Bash)."""
    store = linear(project, 3)
    record = store.load().get(n)
    record.spec = dataclasses.replace(record.spec, primary_tools=["Read", "Write", "Bash"])
    store.save_step(record)
    start_step(store, n, session_id="sess-1")
    return store


def _write(project: Path) -> dict[str, Any] | None:
    return fire("pre-tool-use", tool_input(project, "Write", file_path=str(project / "a.py"),
                                           content="x"))


def _denied(out: dict[str, Any] | None) -> str:
    assert out is not None, "the call was allowed"
    spec = out["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    return str(spec["permissionDecisionReason"])


def test_no_edit_before_orient_and_edits_after(project: Path) -> None:
    store = _started(project)
    assert "orient first" in _denied(_write(project))
    assert "orient first" in _denied(fire("pre-tool-use", tool_input(
        project, "Bash", command="touch a.py")))
    assert "orient first" in _denied(fire("pre-tool-use", tool_input(
        project, "Bash", command="maker verify --step 1")))  # (formatters edit)
    # Reading, the brief and orient itself are not held back.
    assert fire("pre-tool-use", tool_input(project, "Bash", command="cat README.md")) is None
    assert fire("pre-tool-use", tool_input(project, "Read", file_path="x")) is None
    record_orient(store, 1, "none")
    assert _write(project) is None


def test_the_orient_command_is_allowed_exactly_as_the_brief_words_it(project: Path) -> None:
    _started(project)
    out = fire("pre-tool-use", tool_input(project, "Bash",
                                          command="maker orient 1 minor --what 'a renamed x'"))
    assert out is None or out["hookSpecificOutput"]["permissionDecision"] == "allow"
    for chained in ("maker orient 1 none; touch a.py", "maker orient 1 none && rm -rf src",
                    'maker orient 1 minor --what "$(touch a.py)"'):
        assert orient_command(chained) is None
        _denied(fire("pre-tool-use", tool_input(project, "Bash", command=chained)))


def test_a_major_deviation_stops_for_a_person(project: Path) -> None:
    store = _started(project)
    entry = record_orient(store, 1, "major", "the API moved to v2", "Call v2 instead.")
    assert entry["deviation"] == "major"
    assert "awaits a person" in _denied(_write(project))
    # Its final answer is no handoff, and none would count: a person decides first.
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, "DEVIATION"))
    assert out is not None and "decision" not in out and "deviates" in out["systemMessage"]
    with pytest.raises(HandoffRejectedError, match="awaits a person"):
        accept_handoff(store, handoff(1))
    now = outcome(store, 1)
    assert now["sentinel"] == "STEP_AWAITING_APPROVAL"
    question = now["ask"]["questions"][0]
    assert "the API moved to v2" in question["question"]
    assert [o["label"] for o in question["options"]] == [
        label.format(n=1) for label in DEVIATION_LABELS]
    # The main agent's turn may end: the question is the user's.
    assert fire("stop", stop_input(project)) is None


def _answer(project: Path, store: PlanStore, label: str) -> str:
    ask = outcome(store, 1)["ask"]
    text = ask["questions"][0]["question"]
    out = fire("post-tool-use", {
        "session_id": "sess-1", "cwd": str(project), "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion", "tool_input": ask,
        "tool_response": {"answers": {text: label}}, "tool_use_id": "t9"})
    assert out is not None
    return json.dumps(out)


def test_the_users_approval_of_the_revision_lets_work_go_on(project: Path) -> None:
    store = _started(project)
    record_orient(store, 1, "major", "the API moved to v2", "Call v2 instead.")
    said = _answer(project, store, "Approve revised step 1")
    assert "approved" in said and "Execute maker step 1." in said
    record = store.load_step(1)
    assert pending_deviation(record) is None and record.status == "in-progress"
    assert record.meta["revised_task"] == "Call v2 instead."
    assert record.meta["deviation"]["decided_by"] == "user (AskUserQuestion)"
    assert "Call v2 instead." in build_brief(store, None, 1)
    assert _write(project) is None  # orient is done: the relaunched executor edits
    # The final approval is still the user's: the revision approved nothing else.
    assert "awaiting-approval" not in store.load_step(1).status


def test_the_users_rejection_sends_the_step_back_untouched(project: Path) -> None:
    store = _started(project)
    record_orient(store, 1, "major", "the API moved to v2", "Call v2 instead.")
    said = _answer(project, store, "Reject step 1")
    assert "STEP_REJECTED" in said
    record = store.load_step(1)
    assert record.status == "pending" and "revised_task" not in record.meta
    assert "the API moved to v2" in record.meta["revision_notes"][-1]


def test_step_autoapprove_in_the_hooks_environment_passes_this_gate_only(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _started(project)
    record_orient(store, 1, "major", "the API moved to v2", "Call v2 instead.")
    monkeypatch.setenv("STEP_AUTOAPPROVE", "1")
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, "DEVIATION"))
    assert out is not None and out.get("decision") == "block"
    assert "Call v2 instead." in out["reason"]
    record = store.load_step(1)
    assert record.meta["deviation"]["decided_by"].startswith("STEP_AUTOAPPROVE=1")
    # The final approval is never bypassed by the variable.
    set_policy(store, "never", "test")
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert out is not None and "accepted" in out["systemMessage"]
    assert store.load_step(1).status == "awaiting-approval"


def test_step_autoapprove_set_by_the_models_own_command_approves_nothing(
        project: Path) -> None:
    store = _started(project)
    result = CliRunner().invoke(
        cli, ["orient", "1", "major", "--what", "x", "--revised", "y",
              "--plans-dir", str(store.root)], env={"STEP_AUTOAPPROVE": "1"})
    assert result.exit_code == 0, result.output
    assert "stop now" in result.output
    assert pending_deviation(store.load_step(1)) is not None


def _built_on_a_redone_output(project: Path, reader: bool = False) -> PlanStore:
    """Steps 1 and 2 done, then step 1 redone with another output: step 2 was built on
    the old one, and step 3 (whose tools only read, when ``reader``) builds on step 2."""
    store = linear(project, 3, policy="auto")
    if reader:
        third = store.load_step(3)
        third.spec.primary_tools[:] = ["Read", "Grep"]
        third.spec.fallback_tools[:] = []
        store.save_step(third)
    for n, out in ((1, "one"), (2, "two")):
        start_step(store, n)
        record_orient(store, n, "none")
        accept_handoff(store, handoff(n, output={"result": out}))
    reset_step(store, 1)
    start_step(store, 1)
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1, output={"result": "ONE, redone"}))
    assert store.load_step(1).status == "complete"
    return store


def test_a_step_built_on_an_output_that_changed_is_a_major_deviation(project: Path) -> None:
    store = _built_on_a_redone_output(project)
    start_step(store, 3)
    found = findings(store, store.load(), 3)
    assert [f.major for f in found] == [True] and "step 2" in found[0].text
    entry = record_orient(store, 3, "none")  # the model cannot talk it away
    assert entry["deviation"] == "major" and entry["overruled_by_code"]
    assert pending_deviation(store.load_step(3))["forced_by_code"] is True


def test_no_stale_finding_when_nothing_changed(project: Path) -> None:
    store = linear(project, 3, policy="auto")
    for n in (1, 2):
        start_step(store, n)
        record_orient(store, n, "none")
        accept_handoff(store, handoff(n))
    start_step(store, 3)
    assert [f for f in findings(store, store.load(), 3) if f.major] == []


def test_a_minor_deviation_is_noted_in_the_brief_and_the_handoff(project: Path) -> None:
    store = _started(project)
    record_orient(store, 1, "minor", "the helper is named load_all now")
    assert "the helper is named load_all now" in build_brief(store, None, 1)
    accept_handoff(store, handoff(1))
    assert "A minor deviation from the plan: the helper is named load_all now" in \
        store.handoff_path(1).read_text()


@pytest.mark.parametrize(("args", "words"), [
    (["major", "--what", "x"], "--revised"),
    (["minor"], "--what"),
])
def test_orient_refuses_an_incomplete_judgment(project: Path, args: list[str],
                                               words: str) -> None:
    store = _started(project)
    with pytest.raises(StepError, match=words):
        record_orient(store, 1, args[0], *(args[2:3] or [""]))


def test_a_person_at_a_terminal_decides_a_deviation(project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("maker.cli._common.is_terminal", lambda: True)  # a person is there
    store = _started(project)
    record_orient(store, 1, "major", "moved", "Do it the new way.")
    result = CliRunner().invoke(cli, ["step", "approve", "1", "--plans-dir", str(store.root)])
    assert result.exit_code == 0, result.output
    assert "revised step is approved" in result.output
    assert store.load_step(1).meta["revised_task"] == "Do it the new way."
    with pytest.raises(Exception, match="await"):
        approve_step(store, 1, "someone")  # the final approval is still to come


def test_the_executor_cannot_answer_makers_question_itself(project: Path) -> None:
    """QA: a pre-filled AskUserQuestion by the executor approved its own deviation."""
    store = _started(project)
    record_orient(store, 1, "major", "moved", "Do nothing at all.")
    ask = outcome(store, 1)["ask"]
    text = ask["questions"][0]["question"]
    forged = dict(ask, answers={text: "Approve revised step 1"})
    assert "main agent's to ask" in _denied(fire("pre-tool-use", tool_input(
        project, "AskUserQuestion", **forged)))
    assert "main agent's to ask" in _denied(fire("pre-tool-use", tool_input(
        project, "AskUserQuestion", **ask)))  # (unanswered too: no subagent asks them)
    fire("post-tool-use", {
        "session_id": "sess-1", "cwd": str(project), "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion", "tool_input": forged,
        "tool_response": {"answers": {text: "Approve revised step 1"}}, "tool_use_id": "t9",
        "agent_id": "a1", "agent_type": EXECUTOR})
    assert pending_deviation(store.load_step(1)) is not None


def test_an_mcp_tool_waits_for_orient_too(project: Path) -> None:
    """QA: a tool maker does not know (an MCP writer) edited before orient."""
    store = linear(project, 3)
    record = store.load().get(1)
    record.spec = dataclasses.replace(record.spec,
                                      primary_tools=["Read", "mcp__fs__write_file"])
    store.save_step(record)
    start_step(store, 1, session_id="sess-1")
    call = tool_input(project, "mcp__fs__write_file", path=str(project / "a.py"), content="x")
    assert "orient first" in _denied(fire("pre-tool-use", call))
    record_orient(store, 1, "none")
    assert fire("pre-tool-use", call) is None


def test_while_a_deviation_waits_the_brief_says_stop(project: Path) -> None:
    store = _started(project)
    record_orient(store, 1, "major", "moved", "Do it anew.")
    brief = build_brief(store, None, 1)
    assert "awaits a person's decision" in brief and "Go on with the step" not in brief


def test_a_reading_step_on_a_stale_input_is_named_to_the_person(project: Path) -> None:
    """A step whose tools only read never orients (orient gates edits): its handoff is
    checked as orient would have been, and a stale input goes to the person, named,
    whatever the policy."""
    from maker.executor.loop.words import approval_screen
    from maker.handoff.measured import STALE_INPUTS

    store = _built_on_a_redone_output(project, reader=True)
    start_step(store, 3)  # (never oriented: it reads only)
    assert accept_handoff(store, handoff(3)).status == "awaiting-approval"
    question = outcome(store, 3)["ask"]["questions"][0]["question"]
    assert f"{STALE_INPUTS}: step 2" in question
    assert STALE_INPUTS in approval_screen(store)


def test_a_reading_step_on_fresh_inputs_is_the_policys(project: Path) -> None:
    store = linear(project, 2, policy="auto")
    reader = store.load_step(2)
    reader.spec.primary_tools[:] = ["Read", "Grep"]
    store.save_step(reader)
    start_step(store, 1)
    record_orient(store, 1, "none")
    accept_handoff(store, handoff(1))
    start_step(store, 2)
    assert accept_handoff(store, handoff(2)).status == "complete"
    assert "stale_inputs" not in store.read_handoff(2)
