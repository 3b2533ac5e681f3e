"""The user's approval of a step, with the real CLI: only the user decides.

/maker:step asks with AskUserQuestion, and maker's PostToolUse hook records the user's
answer. `claude -p` disables that tool, so these runs go through claude-agent-sdk's
streaming protocol, where the client answers it (as an IDE or app does); in `-p` the
step waits and the user types `/maker:approve N` or `/maker:reject N <notes>`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.plugin import PLUGIN_ROOT, Run, run_maker, step, write_plan
from harness.scenarios import (
    APPROVE,
    MAIN,
    executor_flow,
    executor_writes,
    handoff,
    main_asks_approval,
    main_ends_after_approval,
    main_launches_executor,
    maker_verdict,
    plugin_env,
    tool,
)
from harness.sdk_client import Question, run_sdk
from maker.cli.main import cli
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"])
NOTES = "Say hello in French, and don't forget the accent: 'salut' isn't enough"


def main_relaunches_after_the_notes(request: RecordedRequest) -> Reply:
    """The user sent the step back with notes: maker started it again and says to launch."""
    if "maker: the user sent step 0 back with the notes" not in request.latest_text:
        raise AssertionError("expected maker's note that step 0 runs again")
    return tool("Agent", subagent_type="maker:step-executor", run_in_background=False,
                description="Execute maker step 0", prompt="Execute maker step 0.")


def test_the_user_sends_a_step_back_with_notes_and_approves_the_next_attempt(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """Seed 004's revision loop (docs/architecture.md#the-seeds), in one /maker:step: the
    notes go back through implement,
    verify and handoff, and the user approves the second attempt."""
    write_plan(project, policy="never")

    def reads_the_notes_then_writes(request: RecordedRequest) -> Reply:
        brief = request.tool_results[0].text
        assert "## An earlier attempt was sent back" in brief
        assert f"- {NOTES}" in brief  # the user's words, exactly
        return executor_writes("hello.txt", "salut\n")(request)

    fake_api.script(MAIN, main_launches_executor(), main_asks_approval(),
                    main_relaunches_after_the_notes, main_asks_approval(),
                    main_ends_after_approval())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)
    executor_flow(fake_api, [reads_the_notes_then_writes], GOOD_0)
    answers = iter([NOTES, APPROVE])

    def user(question: Question) -> str:
        assert question.options == [APPROVE, "Reject step 0"]
        return next(answers)

    run = run_sdk(["/maker:step 0"], api=fake_api, cwd=project, home=claude_home,
                  answer=user, plugin_dirs=[PLUGIN_ROOT], env=plugin_env(), timeout=30)

    fake_api.assert_done()
    assert [q.question for q in run.questions] == \
        ["maker: approve step 0 (Write hello.txt)?"] * 2
    (result,) = run.results
    assert result is not None and result.startswith("maker: the user approved step 0")
    assert result.endswith("STEP_COMPLETE")
    record = step(project, 0)
    assert record.status == "complete" and record.meta["revision_notes"] == [NOTES]
    assert record.meta["approved_by"] == "user (AskUserQuestion)"
    assert (project / "hello.txt").read_text() == "salut\n"
    ran = [block["input"].get("command", "") for r in fake_api.requests_for(MAIN)
           for m in r.messages if m.get("role") == "assistant"
           for block in (m["content"] if isinstance(m["content"], list) else [])
           if block.get("type") == "tool_use" and block.get("name") == "Bash"]
    # It asked from maker's verdicts and ran nothing: no approval, no `maker step outcome`.
    assert ran == []


def _print_mode_step_awaiting_approval(fake_api: FakeMessagesAPI, run_claude: Run,
                                       project: Path) -> None:
    """/maker:step 0 in `claude -p`: accepted, and left awaiting the user's approval."""
    write_plan(project, policy="never")

    def cannot_ask(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        assert result.is_error and "No such tool available: AskUserQuestion" in result.text
        hint = re.search(r"\(print mode\), end by telling the user how to decide: (.*)\.$",
                         request.all_text, re.M)  # maker's verdict, its `Next:`
        assert hint is not None, request.all_text[-800:]
        return Reply.text(f"Step 0 waits for your approval: {hint.group(1)}\n\n"
                          "STEP_AWAITING_APPROVAL")

    fake_api.script(MAIN, main_launches_executor(), main_asks_approval(), cannot_ask)
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)
    run = run_maker(run_claude, "/maker:step 0")
    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("STEP_AWAITING_APPROVAL")
    assert "the user types `/maker:approve 0`, or `/maker:reject 0 <what to change>`" \
        in run.result
    assert step(project, 0).status == "awaiting-approval"
    assert not (project / "plans/.maker/active.json").exists()  # nothing blocks the stop


def _reports_maker(request: RecordedRequest) -> Reply:
    """The main agent after /maker:approve or /maker:reject: what maker's hook said."""
    said = re.search(r"maker: the user (?:approved|rejected) step \d+[^\n]*", request.all_text)
    assert said is not None, "maker's hook did not tell the main agent"
    return Reply.text(said.group(0))


def test_in_print_mode_the_user_approves_by_typing_the_command(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    _print_mode_step_awaiting_approval(fake_api, run_claude, project)
    fake_api.script(MAIN, _reports_maker)

    run = run_maker(run_claude, "/maker:approve 0")

    fake_api.assert_done()
    assert run.result is not None and run.result.startswith("maker: the user approved step 0")
    record = step(project, 0)
    assert record.status == "complete"
    assert record.meta["approved_by"] == "user (typed /maker:approve)"


def test_in_print_mode_the_user_rejects_by_typing_the_command_with_notes(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    _print_mode_step_awaiting_approval(fake_api, run_claude, project)
    notes = "Use \"salut\"; don't `rm -rf` $(anything) 'here'"

    def relaunches(request: RecordedRequest) -> Reply:
        said = re.search(r"maker: the user sent step 0 back with the notes ([^\n]*)",
                         request.all_text)
        assert said is not None and repr(notes) in said.group(0), request.all_text[-800:]
        return tool("Agent", subagent_type="maker:step-executor", run_in_background=False,
                    description="Execute maker step 0", prompt="Execute maker step 0.")

    def waits_again(request: RecordedRequest) -> Reply:
        """maker's verdict has a question, which print mode offers no tool to ask."""
        verdict = maker_verdict(request)
        assert "status: awaiting-approval" in verdict and "\nask: {" in verdict
        assert "AskUserQuestion" not in request.tool_names
        return Reply.text("Step 0 ran again with your notes and waits for your approval."
                          "\n\nSTEP_AWAITING_APPROVAL")

    fake_api.script(MAIN, relaunches, waits_again)
    executor_flow(fake_api, [executor_writes("hello.txt", "salut\n")], GOOD_0)
    run = run_maker(run_claude, f"/maker:reject 0 {notes}")

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("STEP_AWAITING_APPROVAL")
    record = step(project, 0)
    assert record.status == "awaiting-approval" and record.meta["revision_notes"] == [notes]
    assert (project / "hello.txt").read_text() == "salut\n"


def test_a_person_at_a_terminal_approves_with_the_cli(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _print_mode_step_awaiting_approval(fake_api, run_claude, project)
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.setattr("maker.cli._common.is_terminal", lambda: True)  # a person's terminal
    approved = CliRunner().invoke(cli, ["step", "approve", "0", "--plans-dir",
                                        str(project / "plans")])

    assert approved.exit_code == 0, approved.output
    assert approved.output == "step 0 (Write hello.txt) approved: complete\n"
    record = step(project, 0)
    assert (record.status, record.meta["approved_by"]) == ("complete", "person (terminal)")
