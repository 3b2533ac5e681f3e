"""A step whose dependencies are unmet, as people run it (seed 004's
gate_blocked, docs/architecture.md#the-seeds): the real Claude Code CLI, interactive,
in a pseudo-terminal, with its
defaults. ``/maker:step 1`` while step 0 is pending asks the person; they start it anyway on
the screen, maker records the override and the step runs in the background."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.background import TIMEOUT, finished, main_follows_notification
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    handback,
    handoff,
    main_waits,
    tool,
)
from maker_scripted import RecordedRequest, Reply
from maker_scripted.turns import off_script

pytestmark = pytest.mark.e2e

CHECKED_1 = handoff(1, {"ok": False}, summary="hello.txt is not there yet.")


def main_asks_to_start(request: RecordedRequest) -> Reply:
    match = re.search(r"^ask: (\{.*\})$", request.all_text, re.M)
    if "ASK: step 1 depends on steps that are not complete" not in request.all_text \
            or not match:
        raise off_script(request, "expected maker's ASK and its `ask:` line")
    return tool("AskUserQuestion", **json.loads(match.group(1)))


def main_launches_once_started(request: RecordedRequest) -> Reply:
    said = request.latest_text
    if "maker: the user chose to start step 1" not in said or \
            "STARTED: step 1 (Check hello.txt)" not in said:
        raise off_script(request, "expected maker's word on the person's answer")
    return tool("Agent", subagent_type="maker:step-executor",
                description="Execute maker step 1", prompt="Execute maker step 1.")


def test_the_person_starts_a_blocked_step_anyway_from_the_question(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)  # step 1 reads step 0's output: it depends on step 0, pending
    fake_api.script(MAIN, main_asks_to_start, main_launches_once_started, main_waits(),
                    main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(orient=""), handback(CHECKED_1))
    terminal = interactive()
    terminal.submit("/maker:step 1")

    terminal.wait_for_text("Start step 1 anyway", TIMEOUT)  # maker's question, on screen
    assert step(project, 1).status == "pending"  # nothing starts before the person says
    terminal.choose()  # the first option: start it anyway

    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    record = step(project, 1)
    assert record.status == "complete"
    assert record.meta["forced"] is True and record.meta["forced_over"] == [
        "step 0 was pending"]
    assert step(project, 0).status == "pending"
