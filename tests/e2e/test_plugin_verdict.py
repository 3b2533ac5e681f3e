"""maker's verdict reaches the main agent, and a step belongs to the turn running it:
the real Claude Code CLI and the real plugin; only the model is scripted.

A SubagentStop hook's words reach only the subagent; maker's PostToolUse hook on the
Agent tool adds its verdict to the main agent's next request. These tests assert on
what the main agent was sent.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from harness.background import main_follows_notification
from harness.plugin import Run, run_maker, step, write_plan
from harness.queries import hook_events
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    PLANNER,
    after_feedback,
    broken_handoff,
    broken_plan,
    executor_flow,
    executor_writes,
    greeting_plan,
    handoff,
    main_follows_verdict,
    main_launches_executor,
    main_launches_planner,
    main_waits,
    maker_verdict,
    plan_flow,
    to_yaml,
)
from maker.executor.state.lifecycle import start_step
from maker.executor.votes.runs import add_turn, start_launch
from maker.planner.linter import lint_text
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.replies import ToolUseBlock

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"])


def test_three_rejected_plans_give_the_main_agent_makers_problems(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    bad = to_yaml(broken_plan())
    _, problems = lint_text(bad)
    fake_api.script(MAIN, main_launches_planner(), main_follows_verdict())
    fake_api.script(PLANNER, bad, after_feedback(bad, "attempt 1 of 3"),
                    after_feedback(bad, "attempt 2 of 3"))

    run = run_maker(run_claude, "/maker:plan Add a hello.txt greeting")

    fake_api.assert_done()
    verdict = maker_verdict(fake_api.requests_for(MAIN)[1])
    assert verdict.startswith("NO plan was written: maker rejected the planner's answer 3 "
                              "times. maker's problems with its last answer:\n")
    assert "\n".join(f"- {p}" for p in problems) in verdict  # the linter, verbatim
    assert run.result is not None and str(problems[0]) in run.result
    assert not (project / "plans").exists()


def test_a_step_failed_by_the_gate_gives_the_main_agent_step_failed(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    bad = broken_handoff(0)
    fake_api.script(MAIN, main_launches_executor(), main_follows_verdict())
    executor_flow(fake_api, [], bad, after_feedback(bad, "(attempt 1 of 3)"),
                  after_feedback(bad, "(attempt 2 of 3)"))

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    verdict = maker_verdict(fake_api.requests_for(MAIN)[1])
    assert verdict.startswith("step 0 (Write hello.txt) FAILED: maker rejected its handoff "
                              "3 times. Reasons:\n- summary: missing")
    assert verdict.endswith("End your reply with the line STEP_FAILED.")
    assert run.result is not None and run.result.endswith("\nSTEP_FAILED")
    assert step(project, 0).status == "failed"


def test_a_plan_refused_while_a_step_runs_says_so_and_why(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    store = write_plan(project)
    start_step(store, 0, session_id="another-session")
    fake_api.script(MAIN, main_launches_planner(), main_follows_verdict())
    fake_api.script(PLANNER, to_yaml(greeting_plan("Something else entirely")))

    run = run_maker(run_claude, "/maker:plan Something else entirely")

    fake_api.assert_done()
    verdict = maker_verdict(fake_api.requests_for(MAIN)[1])
    assert verdict.startswith("the planner's plan is valid but was NOT written: step 0 of "
                              "the current plan is in progress; a new plan would strand it.")
    assert "do not show it as the new plan" in verdict
    assert run.result is not None and "NOT written" in run.result
    assert store.archived() == [] and store.load().task != "Something else entirely"


def test_a_plan_that_archives_the_old_one_says_where(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    store = write_plan(project)
    plan_flow(fake_api, to_yaml(greeting_plan("A second task")))

    run = run_maker(run_claude, "/maker:plan A second task")

    fake_api.assert_done()
    (archived,) = store.archived()
    verdict = maker_verdict(fake_api.requests_for(MAIN)[1])
    assert verdict.startswith(f"plan written to {store.root} (2 steps). The previous plan "
                              f"was archived, not lost: it is in {archived}/.")
    assert (archived / "PLAN.md").is_file()
    assert run.result is not None and store.load().task == "A second task"


# -- a step belongs to the turn that runs it -------------------------------------------


def test_a_later_unrelated_turn_of_the_owner_session_is_not_blocked(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    session = str(uuid.uuid4())
    store = write_plan(project)
    start_step(store, 0, session_id=session)  # an earlier /maker:step 0, then a crash
    add_turn(store, 0, session, "the-earlier-prompt")
    fake_api.script(MAIN, Reply.text("2 + 2 = 4."))

    run = run_maker(run_claude, "What is 2 + 2?", extra_args=["--session-id", session])

    fake_api.assert_done()  # one answer, never sent back by a Stop hook
    assert run.result == "2 + 2 = 4."
    assert step(project, 0).status == "in-progress"  # not recorded FAILED


def test_a_background_executor_in_print_mode_gets_its_verdict_from_the_notification(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    """`run_in_background: true` in `-p`: the launch is told as running (never a verdict),
    the turn ends unblocked, and the notification's turn gets maker's verdict."""
    write_plan(project)

    def launches_in_background(request: RecordedRequest) -> Reply:
        return Reply.tool("Agent", {"subagent_type": "maker:step-executor",
                                    "description": "Execute maker step 0",
                                    "prompt": "Execute maker step 0.",
                                    "run_in_background": True})

    fake_api.script(MAIN, launches_in_background, main_waits(), main_follows_notification())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    launched = fake_api.requests_for(MAIN)[1].latest_text
    assert "runs in the background" in launched and "maker's verdict:" not in launched
    stops = [e["stdout"] for e in hook_events(run) if e["hook_event"] == "Stop"]
    assert stops and not any("block" in out for out in stops)
    assert len(fake_api.requests_for(EXECUTOR)) == 3  # one executor ran, once
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert step(project, 0).status == "complete"


def test_a_second_executor_launched_at_once_is_refused(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)

    def launches_two(request: RecordedRequest) -> Reply:
        call = {"subagent_type": "maker:step-executor", "description": "Execute maker step 0",
                "prompt": "Execute maker step 0.", "run_in_background": False}
        return Reply.of(ToolUseBlock("Agent", call), ToolUseBlock("Agent", dict(call)))

    fake_api.script(MAIN, launches_two, main_follows_verdict())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    results = fake_api.requests_for(MAIN)[1].tool_results
    refused = [r for r in results if r.is_error]
    assert len(results) == 2 and len(refused) == 1
    assert "an executor for step 0 is already running" in refused[0].text
    assert len(fake_api.requests_for(EXECUTOR)) == 3
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert PlanStore(project / "plans").load().get(0).status == "complete"


def test_a_crashed_sessions_step_is_taken_over_by_the_users_command(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    store = write_plan(project)
    start_step(store, 0, session_id="crashed-session")  # killed mid-executor:
    start_launch(store, "toolu_old", "crashed-session", "old-prompt")  # never returned
    (project / "hello.txt").write_text("half done\n")  # the interrupted attempt's edit
    fake_api.script(MAIN, main_launches_executor(), main_follows_verdict())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    began = fake_api.requests_for(MAIN)[0].last_user_text
    assert ("STARTED: step 0 (Write hello.txt) taken over (the user asked for step 0 here; "
            "session crashed-session had it).") in began
    brief = fake_api.requests_for(EXECUTOR)[1].tool_results[0].text
    assert "## An earlier attempt was interrupted" in brief
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert step(project, 0).status == "complete"
