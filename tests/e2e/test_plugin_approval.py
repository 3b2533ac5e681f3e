"""The user's approval of a step (MAKER_AUTOAPPROVE unset), with the real CLI.

/maker:step asks with AskUserQuestion. `claude -p` disables that tool, so these
runs go through claude-agent-sdk's streaming protocol, where the client answers it
(as an IDE or app does); a last test pins what `-p` does instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from maker.cli.main import cli
from maker.scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker.scripted.scenarios import (
    APPROVE,
    MAIN,
    executor_flow,
    executor_writes,
    handoff,
    main_asks_approval,
    main_launches_executor,
    main_runs_outcome,
    plugin_env,
    step_flow,
)
from maker.scripted.sdk_client import Question, run_sdk

from ._maker import PLUGIN_ROOT, Run, run_maker, step, write_plan

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"])
NOTES = "Say hello in French, and don't forget the accent: 'salut' isn't enough"


def test_the_user_sends_a_step_back_with_notes_then_approves_the_next_attempt(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project)
    step_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0, approval=True)

    def reads_the_notes_then_writes(request: RecordedRequest) -> Reply:
        brief = request.tool_results[0].text
        assert "## The user sent an earlier attempt back" in brief
        assert f"- {NOTES}" in brief  # the user's words, exactly
        return executor_writes("hello.txt", "salut\n")(request)

    step_flow(fake_api, [reads_the_notes_then_writes], GOOD_0, approval=True)
    answers = iter([NOTES, APPROVE])

    def user(question: Question) -> str:
        assert question.options == [APPROVE, "Request changes"]
        return next(answers)

    run = run_sdk(["/maker:step 0", "/maker:step 0"], api=fake_api, cwd=project,
                  home=claude_home, answer=user, plugin_dirs=[PLUGIN_ROOT],
                  env=plugin_env(autoapprove=False), timeout=30)

    fake_api.assert_done()
    assert [q.question for q in run.questions] == ["Approve step 0: Write hello.txt?"] * 2
    outcomes = [r.tool_results[0].text for r in fake_api.requests_for(MAIN)
                if r.tool_results and r.tool_results[0].text.startswith("step 0: Write")]
    assert len(outcomes) == 2 and all("status: awaiting-approval" in o for o in outcomes)
    first, second = run.results
    assert first is not None and first.endswith("back to pending; the next `maker step start "
                                                "0` brief carries the notes\n\nSTEP_REJECTED")
    assert second is not None and second.endswith("approved: complete\n\nSTEP_COMPLETE")
    record = step(project, 0)
    assert record.status == "complete" and record.meta["revision_notes"] == [NOTES]
    assert (project / "hello.txt").read_text() == "salut\n"
    assert len(list((project / "plans/handoffs/reset").glob("00-*"))) == 1  # kept aside


def test_in_print_mode_the_step_waits_for_maker_step_approve(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)

    def cannot_ask(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        assert result.is_error and "No such tool available: AskUserQuestion" in result.text
        return Reply.text("Step 0 waits for your approval: run `maker step approve 0`.")

    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), main_asks_approval(),
                    cannot_ask)
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_maker(run_claude, "/maker:step 0", autoapprove=False)

    fake_api.assert_done()
    assert run.result is not None and "maker step approve 0" in run.result
    record = step(project, 0)
    assert record.status == "in-progress" and record.meta["awaiting_approval"] is True
    assert not (project / "plans/.maker/active.json").exists()  # nothing blocks the stop

    approved = CliRunner().invoke(cli, ["step", "approve", "0", "--plans-dir",
                                        str(project / "plans")])

    assert approved.exit_code == 0, approved.output
    assert approved.output == "step 0 (Write hello.txt) approved: complete\n"
    assert step(project, 0).status == "complete"
