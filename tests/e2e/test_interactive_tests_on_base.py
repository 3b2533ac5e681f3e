"""Tests that can fail, as people run them: the real Claude Code CLI, interactive, in a
pseudo-terminal, with its defaults (auto mode, the executor in the background, delivering
through SubagentHandback). Only the model is scripted; the code, its tests and the runs of
them on the code before the step are real.

The executor fixes ``add`` and adds one test, which passes on the code before the fix too,
verifies, and hands back: refused, with the fix. It adds a test that fails there, verifies
again, and hands back: accepted. The main agent's verdict names the test that proves
nothing, and the step waits for the person whatever the policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.background import finished, main_follows_notification, notified_verdict
from harness.calc_project import CATCHES, FILES, FIXED, TEST_CMD, VACUOUS, buggy
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    handback,
    handoff,
    main_launches_executor,
    main_waits,
    tool,
)
from maker_scripted import RecordedRequest, Reply, ToolUseBlock
from maker_scripted.turns import off_script, working_dir

pytestmark = pytest.mark.e2e

ONLY_VACUOUS = ["src/calc.py", "tests/test_exists.py"]
REFUSED = "tests/test_exists.py passes on the code before this step too"


def writes_the_fix_and_a_test_that_cannot_fail(request: RecordedRequest) -> Reply:
    if not any("# Step 0" in r.text for r in request.tool_results):
        raise off_script(request, "expected the brief from `maker context 0`")
    root = working_dir(request)
    return Reply.of(ToolUseBlock("Write", {"file_path": str(root / FILES[0]), "content": FIXED}),
                    ToolUseBlock("Write", {"file_path": str(root / FILES[2]),
                                           "content": VACUOUS}))


def verifies(request: RecordedRequest) -> Reply:
    return tool("Bash", command="maker verify --step 0", description="Verify step 0")


def adds_a_test_that_can_fail_when_told(request: RecordedRequest) -> Reply:
    refused = request.tool_results[-1]
    if not refused.is_error or REFUSED not in refused.text:
        raise off_script(request, "expected the gate's refusal of a test that cannot fail")
    assert "add a test that fails on the code before your change" in refused.text
    return tool("Write", file_path=str(working_dir(request) / FILES[1]), content=CATCHES)


def test_a_code_change_whose_tests_cannot_fail_goes_back_then_to_the_person(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    buggy(project)
    write_plan(project)  # (policy auto: the step would be the policy's)
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), writes_the_fix_and_a_test_that_cannot_fail,
                    verifies, handback(handoff(0, {"files": ONLY_VACUOUS}, files=ONLY_VACUOUS)),
                    adds_a_test_that_can_fail_when_told, verifies,
                    handback(handoff(0, {"files": FILES}, files=FILES)))
    terminal = interactive(env={"TEST_CMD": TEST_CMD})
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "maker says:")
    fake_api.assert_done()

    assert step(project, 0).status == "awaiting-approval"
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert "status: awaiting-approval" in verdict, verdict
    assert "TESTS PASS ON THE BASE: tests/test_exists.py" in verdict, verdict
