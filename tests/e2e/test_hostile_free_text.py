"""Hostile free text after /maker:plan and /maker:step: it reaches the model exactly as
typed, and nothing of it runs.

The UserPromptSubmit hook saves the raw prompt; the command's only shell line names
the session, and `maker request` / `maker step begin` print the saved text between
markers. These runs use Claude Code's default permission mode, where a `!` line the
permission check refuses aborts the whole command (the model is never called).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import Run, finish_step_0, run_maker, step, write_plan
from harness.queries import tool_uses
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    PLANNER,
    greeting_plan,
    handoff,
    plan_flow,
    step_flow,
    to_yaml,
)
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI

pytestmark = pytest.mark.e2e

PLAN_TEXT = ("""add "remember me"; it's `rm -rf x` $(touch PWNED) & echo hi! $HOME \\n"""
             "\nsecond line")
STEP_NOTES = "notes with $(touch PWNED) and 'quotes'; `touch PWNED2` \"too\"!"


def _nothing_ran(root: Path) -> None:
    assert not [p for p in root.rglob("PWNED*")]
    assert (root / "project" / "x").is_file()  # `rm -rf x` did not run either


def test_plan_text_reaches_the_model_and_the_planner_verbatim_and_nothing_runs(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, tmp_path: Path) -> None:
    (project / "x").write_text("keep me\n")
    # The planner paraphrases the task: the plan stores the user's words all the same.
    plan_flow(fake_api, to_yaml(greeting_plan("Paraphrased by the planner")))

    run = run_maker(run_claude, f"/maker:plan {PLAN_TEXT}", permission_mode=None)

    fake_api.assert_done()  # the command did not abort: the model was called
    _nothing_ran(tmp_path)
    first = fake_api.requests_for(MAIN)[0].last_user_text
    assert f"<user-text>\n{PLAN_TEXT}\n</user-text>" in first
    launch = next(t for t in tool_uses(run) if t.name == "Agent")
    assert launch.input["prompt"] == f"Plan this task: {PLAN_TEXT}"
    assert f"Plan this task: {PLAN_TEXT}" in fake_api.requests_for(PLANNER)[0].last_user_text
    assert PlanStore(project / "plans").load().task == PLAN_TEXT
    assert run.result is not None and f"Plan: {PLAN_TEXT.splitlines()[0]}\n" in run.result


def test_step_notes_reach_the_executor_verbatim_and_nothing_runs(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, tmp_path: Path) -> None:
    (project / "x").write_text("keep me\n")
    finish_step_0(write_plan(project))
    step_flow(fake_api, [], handoff(1, {"ok": True}, summary="hello.txt says hello."))

    run = run_maker(run_claude, f"/maker:step 1 {STEP_NOTES}")

    fake_api.assert_done()
    _nothing_ran(tmp_path)
    first = fake_api.requests_for(MAIN)[0].last_user_text
    assert "STARTED: step 1 (Check hello.txt) started." in first
    assert f"<user-notes>\n{STEP_NOTES}\n</user-notes>" in first
    launch = next(t for t in tool_uses(run) if t.name == "Agent")
    assert launch.input["prompt"] == f"Execute maker step 1.\n\nNotes from the user:\n{STEP_NOTES}"
    # The notes reach the executor verbatim, its brief after them (with its launch).
    assert f'Notes from the user:\n{STEP_NOTES}\n\n<maker-brief step="1">' in \
        fake_api.requests_for(EXECUTOR)[0].last_user_text
    assert step(project, 1).status == "complete"
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
