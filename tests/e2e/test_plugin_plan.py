"""/maker:plan with the real Claude Code CLI and the real plugin; only the model is scripted.

The planner's final message is the plan; maker's SubagentStop hook lints it and
writes plans/ or blocks the planner with the linter's problems. The model never
writes a plan file itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import Run, feedback, run_maker, tool_names
from harness.queries import hook_events
from harness.scenarios import (
    BROKEN_PLAN_PROBLEM,
    GREETING_TASK,
    MAIN,
    PLANNER,
    after_feedback,
    broken_plan,
    greeting_plan,
    plan_flow,
    to_yaml,
)
from maker.planner.linter import lint_text
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply

pytestmark = pytest.mark.e2e

STEP_FILES = ["00-write-hello-txt.md", "01-check-hello-txt.md"]


def test_the_plan_is_written_by_the_subagent_stop_hook_and_shown_by_status(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    plan_flow(fake_api, to_yaml(greeting_plan()))

    run = run_maker(run_claude, f"/maker:plan {GREETING_TASK}")

    fake_api.assert_done()
    assert run.returncode == 0 and not run.is_error, run.stderr
    plans = project / "plans"
    assert (plans / "PLAN.md").is_file()
    assert sorted(p.name for p in (plans / "steps").iterdir()) == STEP_FILES
    assert PlanStore(plans).load().task == GREETING_TASK
    # Written by code: the planner made no tool call, the main agent only launched it
    # and ran `maker status`; the SubagentStop hook says it wrote the plan.
    assert tool_names(run) == ["Agent", "Bash"]
    hooks = [e for e in hook_events(run) if e["hook_event"] == "SubagentStop"]
    assert len(hooks) == 1 and "maker: plan written to" in hooks[0]["stdout"]
    (planner,) = fake_api.requests_for(PLANNER)
    assert "maker-agent: planner" in planner.system_text
    assert set(planner.tool_names) == {"Read", "Grep", "Glob"}  # agents/planner.md `tools:`
    # The main agent's next request shows `maker status` listing what was written.
    status = fake_api.requests_for(MAIN)[2].tool_results[0].text
    assert status.startswith(f"Plan: {GREETING_TASK}\n")
    assert "0     Write hello.txt  pending  -" in status
    assert "1     Check hello.txt  pending  0" in status
    assert "Next: step 0 (Write hello.txt)" in status
    assert run.result is not None and status in run.result


def test_a_rejected_plan_is_corrected_after_the_linters_feedback(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    bad = to_yaml(broken_plan())
    _, problems = lint_text(bad)
    assert problems and str(problems[0]).startswith(BROKEN_PLAN_PROBLEM)
    corrected = after_feedback(to_yaml(greeting_plan()), "attempt 1 of 3",
                               *(str(p) for p in problems))

    def corrects_with_nothing_written(request: RecordedRequest) -> Reply:
        # The rejected plan was not written (plans/.maker holds only the attempt count).
        assert not (project / "plans" / "PLAN.md").exists()
        assert not (project / "plans" / "steps").exists()
        return corrected(request)

    plan_flow(fake_api, bad, corrects_with_nothing_written)

    run = run_maker(run_claude, f"/maker:plan {GREETING_TASK}")

    fake_api.assert_done()
    (said,) = feedback(fake_api, PLANNER)
    assert said.startswith("Stop hook feedback:\nmaker rejected the plan (attempt 1 of 3); "
                           "nothing was written.")
    assert said.endswith("\n".join(f"- {p}" for p in problems))  # the linter, verbatim
    assert sorted(p.name for p in (project / "plans" / "steps").iterdir()) == STEP_FILES
    assert run.result is not None and "1     Check hello.txt  pending  0" in run.result

