"""/maker:step with the real Claude Code CLI and the real plugin; only the model is scripted.

`maker step begin` starts the step from what the user typed; the step executor
reads its brief with `maker context N` and answers its handoff, which maker's
SubagentStop hook accepts through the gate or blocks with every problem; the Stop
hook keeps the main agent from ending while the step has no handoff; the
PreToolUse hook keeps the executor to the step's tools.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.plugin import (
    PLUGIN_ROOT,
    Run,
    feedback,
    finish_step_0,
    run_maker,
    step,
    tool_names,
    write_plan,
)
from harness.queries import hook_events, tool_uses
from harness.scenarios import (
    BROKEN_HANDOFF_PROBLEMS,
    EXECUTOR,
    MAIN,
    after_feedback,
    broken_handoff,
    executor_reads,
    executor_writes,
    greeting_plan,
    handoff,
    main_ends_turn_early,
    main_refuses_step,
    plugin_env,
    step_flow,
    tool,
)
from maker.executor.rules.step_rules import STOP_REMINDERS
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])
HANDOFF_0 = Path("plans/handoffs/00-write-hello-txt.md")


def test_a_step_runs_in_the_executor_and_completes_through_its_handoff(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    step_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_maker(run_claude, "/maker:step")  # no number: the next ready step

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert (project / "hello.txt").read_text() == "hello\n"
    assert (project / HANDOFF_0).is_file()
    assert step(project, 0).status == "complete"
    assert not (project / "plans/.maker/active.json").exists()
    # The main agent launched the executor in the foreground with maker's prompt.
    launch = next(t for t in tool_uses(run) if t.name == "Agent")
    assert launch.input["subagent_type"] == "maker:step-executor"
    assert launch.input["prompt"] == "Execute maker step 0."
    assert launch.input["run_in_background"] is False
    # The executor ran with its own system prompt, and its brief reached it.
    brief_request, write_request, answer_request = fake_api.requests_for(EXECUTOR)
    assert "maker-agent: step-executor" in brief_request.system_text
    # The brief came with its launch (maker's PreToolUse hook on the Agent call), and
    # never passed through the main session.
    assert brief_request.last_user_text.endswith("</maker-brief>")
    assert 'Execute maker step 0.\n\n<maker-brief step="0">\n# Step 0: Write hello.txt\n' \
        in brief_request.last_user_text
    assert not [r for r in fake_api.requests_for(MAIN) if "<maker-brief" in r.all_text]
    brief = write_request.tool_results[0].text
    assert brief.startswith("# Step 0: Write hello.txt\n")
    assert "Primary: Write, Read" in brief and "## Your final message: the handoff" in brief
    assert not answer_request.tool_results[0].is_error
    # The executor's calls belong to the Agent call; the gate accepted its answer.
    # (Its brief, and its orientation recorded before any edit, then the Write.)
    assert [(t.name, t.parent_tool_use_id) for t in tool_uses(run)] == [
        ("Agent", None), ("Bash", launch.id), ("Bash", launch.id), ("Write", launch.id),
        ("Bash", None)]
    assert tool_uses(run)[2].input["command"] == "maker orient 0 none"
    stops = [e["stdout"] for e in hook_events(run) if e["hook_event"] == "SubagentStop"]
    assert stops == ['{"systemMessage": "maker: handoff for step 0 accepted (complete)."}\n']
    outcome = fake_api.requests_for(MAIN)[2].tool_results[0].text
    assert "status: complete\nsummary: Wrote hello.txt; it says hello." in outcome


def test_an_invalid_handoff_is_blocked_with_the_gates_problems_then_fixed(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    fixed = after_feedback(GOOD_0, "maker rejected your handoff for step 0 (attempt 1 of 3)",
                           *BROKEN_HANDOFF_PROBLEMS)

    def fixes_with_nothing_recorded(request: RecordedRequest) -> Reply:
        assert not (project / HANDOFF_0).exists()
        assert step(project, 0).status == "in-progress"
        return fixed(request)

    step_flow(fake_api, [executor_writes("hello.txt", "hello\n")], broken_handoff(0),
              fixes_with_nothing_recorded)

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    (said,) = feedback(fake_api, EXECUTOR)
    assert said.endswith(
        "\n- summary: missing (fix: add `summary:` with what you did, in a sentence or two)"
        "\n- step 0: output: missing `files` (required by the step's output_schema "
        "{files: list}) (fix: add `files: ...` under `output:`; extra keys are allowed)")
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert step(project, 0).status == "complete"
    assert "Wrote hello.txt; it says hello." in (project / HANDOFF_0).read_text()


def test_the_stop_hook_keeps_the_main_agent_going_until_the_step_has_a_handoff(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    step_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0,
              main_first=[main_ends_turn_early()])

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    (said,) = feedback(fake_api, MAIN)
    assert said.startswith("Stop hook feedback:\nmaker: step 0 (Write hello.txt) is in "
                           "progress and has no accepted handoff.")
    assert said.endswith(f"(Reminder 1 of {STOP_REMINDERS}.)")
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert step(project, 0).status == "complete"


def test_repeated_bad_handoffs_end_with_the_step_failed_within_the_bound(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    bad = broken_handoff(0)
    step_flow(fake_api, [], bad, after_feedback(bad, "(attempt 1 of 3)"),
              after_feedback(bad, "(attempt 2 of 3)"))

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()  # three answers, then the executor was let go
    assert len(feedback(fake_api, EXECUTOR)) == 2
    record = step(project, 0)
    assert record.status == "failed"
    assert record.meta["reasons"][0].startswith("handoff rejected 3 times (the last answer "
                                                "is kept in ")
    kept = record.meta["reasons"][0].split("kept in ", 1)[1].rstrip(")")
    assert Path(kept).is_file()  # nothing the executor wrote is lost
    assert not (project / HANDOFF_0).exists()
    stops = [e["stdout"] for e in hook_events(run) if e["hook_event"] == "SubagentStop"]
    assert "maker: step 0 FAILED: its handoff was rejected 3 times" in stops[-1]
    outcome = fake_api.requests_for(MAIN)[2].tool_results[0].text
    assert "status: failed" in outcome and "sentinel: STEP_FAILED" in outcome
    assert run.result is not None and run.result.endswith("\nSTEP_FAILED")


def test_a_step_whose_dependencies_are_not_complete_asks_and_starts_nothing_in_print_mode(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    """Seed 004's gate_blocked (docs/architecture.md#the-seeds) in `claude -p`:
    maker asks (its `ask:` line); print mode has
    no AskUserQuestion, so the main agent says how to force it, and nothing starts. (The
    question answered in an interactive session: test_interactive_blocked.py.)"""
    write_plan(project)

    def says_how_to_force(request: RecordedRequest) -> Reply:
        seen = request.last_user_text
        assert "ASK: step 1 depends on steps that are not complete: step 0 (pending)." in seen
        assert '"Start step 1 anyway"' in seen and "/maker:step 1 --force" in seen
        return Reply.text("Step 1 depends on step 0, which is pending: run step 0 first, or "
                          "type `/maker:step 1 --force` to start it anyway.\n\nSTEP_BLOCKED")

    fake_api.script(MAIN, says_how_to_force)
    run = run_maker(run_claude, "/maker:step 1")

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_BLOCKED")
    assert fake_api.requests_for(EXECUTOR) == []
    assert [step(project, n).status for n in (0, 1)] == ["pending", "pending"]
    assert not (project / "plans/.maker/active.json").exists()


def test_a_tool_outside_the_steps_list_is_denied_and_does_not_run(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    store: PlanStore = write_plan(project)
    finish_step_0(store)  # step 1 may use only Read
    step_flow(fake_api, [
        executor_writes("sneaky.txt", "not allowed\n"),
        tool("WebFetch", url="http://127.0.0.1:9/", prompt="Fetch it"),
        tool("Bash", command="touch ran-bash.txt"),
        executor_reads("hello.txt"),
    ], handoff(1, {"ok": True}, summary="hello.txt says hello."))

    run = run_maker(run_claude, "/maker:step 1")

    fake_api.assert_done()
    after = [r.tool_results[0] for r in fake_api.requests_for(EXECUTOR)[2:]]
    assert len(after) == 4  # the results of Write, WebFetch, Bash and Read
    for result, name in zip(after[:3], ["Write", "WebFetch", "Bash"], strict=True):
        assert result.is_error
        assert result.text.startswith(
            f"PreToolUse:{name} hook error: maker: step 1 may use only Read, AskUserQuestion "
            f"(its primary and fallback tools); `{name}` is not among them.")
    assert not after[3].is_error and "hello" in after[3].text  # Read is the step's tool
    assert not (project / "sneaky.txt").exists()
    assert not (project / "ran-bash.txt").exists()
    assert tool_names(run).count("Read") == 1
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")


def test_the_executors_bash_cannot_move_the_plans_state(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    plan = greeting_plan()
    plan["plan"][0]["primary_tools"] = ["Write", "Read", "Bash"]
    write_plan(project, plan)
    step_flow(fake_api, [
        executor_writes("hello.txt", "hello\n"),
        tool("Bash", command='"maker" step approve 0'),
        tool("Bash", command='touch "$PWD/plans/PWNED"'),
    ], GOOD_0)

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    approve, touch = (r.tool_results[0] for r in fake_api.requests_for(EXECUTOR)[3:5])
    assert approve.is_error and approve.text.startswith(
        "PreToolUse:Bash hook error: maker: the step executor does not move the plan's state")
    assert touch.is_error and "maker cannot check this command" in touch.text
    assert not (project / "plans/PWNED").exists()
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")


@pytest.mark.parametrize("typed", ["two", "2abc"])
def test_a_step_request_that_names_no_step_number_starts_nothing(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, typed: str) -> None:
    """/maker:step two used to start the next ready step with "two" as its notes."""
    write_plan(project)
    fake_api.script(MAIN, main_refuses_step())

    run = run_maker(run_claude, f"/maker:step {typed}")

    fake_api.assert_done()
    seen = fake_api.requests_for(MAIN)[0].last_user_text
    assert f"REFUSED: `{typed}` is not a step number: use /maker:step" in seen
    assert run.result is not None and run.result.endswith("\nSTEP_BLOCKED")
    assert fake_api.requests_for(EXECUTOR) == []
    assert [step(project, n).status for n in (0, 1)] == ["pending", "pending"]
    assert not (project / "plans/.maker/active.json").exists()


def test_makers_plumbing_runs_the_plugins_own_maker_whatever_is_on_path(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, tmp_path: Path) -> None:
    """maker allows its plumbing without a prompt, so it must be maker's own that runs:
    a `maker` planted first on PATH (an activated project venv, say) never does."""
    planted = tmp_path / "planted-bin"
    planted.mkdir()
    ran = tmp_path / "planted-ran"
    (planted / "maker").write_text(f"#!/bin/sh\ntouch {ran}\necho PLANTED\n")
    (planted / "maker").chmod(0o755)
    write_plan(project)
    step_flow(fake_api, [executor_writes("hello.txt", "hello\n")], GOOD_0)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], permission_mode="default",
                     allowed_tools=["Write"],  # (the person allowed the step's own write)
                     env={**plugin_env(), "PATH": f"{planted}:{os.environ['PATH']}"})

    fake_api.assert_done()  # the executor got its real brief (executor_writes checks it)
    assert not ran.exists()
    assert (project / "hello.txt").read_text() == "hello\n"
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")


@pytest.mark.parametrize(("typed", "started"), [
    ("execute step 1", 1),   # seed 004's own phrasing
    ("the next step", 0),
    ("run step 1 --force", 1),
])
def test_the_seeds_phrasings_start_the_step_they_name(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, typed: str,
        started: int) -> None:
    """`/maker:step execute step 3` and "the next step" name a step."""
    store: PlanStore = write_plan(project)
    if started == 1 and "--force" not in typed:
        finish_step_0(store)

    fake_api.script(MAIN, Reply.text("(the step is left for later)"))
    run_maker(run_claude, f"/maker:step {typed}")  # (the Stop hook then reminds: unscripted)

    assert f"STARTED: step {started} " in fake_api.requests_for(MAIN)[0].last_user_text
    record = step(project, started)  # started (then failed: the main agent never ran it)
    assert record.status in ("in-progress", "failed") and record.meta.get("started_by")
    assert bool(record.meta.get("forced")) == ("--force" in typed)
    others = [step(project, n).status for n in (0, 1) if n != started]
    assert others == (["complete"] if started == 1 and "--force" not in typed
                      else ["pending"])
