"""Orient and the deviation gate as people run them: the real Claude Code
CLI, interactive, in a pseudo-terminal, with its defaults (auto permission mode; every
subagent in the background, delivering through SubagentHandback). Only the model is
scripted.

The executor reads its brief, finds that the step as written no longer fits and records a
major deviation with ``maker orient``; maker's guard refuses its edit; it stops. The main
agent, told by maker's verdict, asks the person with maker's question; the person approves
the revised step on the screen; the executor runs again on the revised step, and the step
waits for the person's final approval (the deviation approved nothing else).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.background import TIMEOUT, finished, notified_verdict
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    executor_writes,
    handback,
    handoff,
    main_launches_executor,
    main_waits,
    tool,
)
from maker_scripted import RecordedRequest, Reply
from maker_scripted.turns import off_script

pytestmark = pytest.mark.e2e

WHAT = "hello.txt must greet in French now, the project switched languages"
REVISED = "Write salut to hello.txt"
SALUT_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says salut.",
                  files=["hello.txt"])


def executor_orients_major(request: RecordedRequest) -> Reply:
    if not any("## Orient first" in r.text for r in request.tool_results):
        raise off_script(request, "expected the brief's orient section")
    return tool("Bash", command=f"maker orient 0 major --what '{WHAT}' --revised '{REVISED}'",
                description="Record my orientation")


def executor_tries_to_edit(request: RecordedRequest) -> Reply:
    if "deviates from the plan (major), recorded" not in request.tool_results[-1].text:
        raise off_script(request, "expected maker's word on the deviation")
    return tool("Write", file_path=str(Path(_cwd(request)) / "hello.txt"), content="hello\n")


def _cwd(request: RecordedRequest) -> str:
    match = re.search(r"Primary working directory: (\S+)", request.all_text)
    if not match:
        raise off_script(request, "expected the working directory")
    return match.group(1)


def main_asks_the_deviation(request: RecordedRequest) -> Reply:
    _, _, verdict = notified_verdict(request)
    if "a major deviation" not in verdict:
        raise off_script(request, "expected maker's verdict on a deviation")
    match = re.search(r"^ask: (\{.*\})$", verdict, re.M)
    if not match:
        raise off_script(request, "expected maker's `ask:` line")
    return tool("AskUserQuestion", **json.loads(match.group(1)))


def main_relaunches_after_the_decision(request: RecordedRequest) -> Reply:
    if "maker: the revised step 0 was approved by user (AskUserQuestion)" \
            not in request.latest_text:
        raise off_script(request, "expected maker's word on the person's answer")
    return main_launches_executor()(request)


def main_tells_how_to_decide(request: RecordedRequest) -> Reply:
    _, _, verdict = notified_verdict(request)
    if "status: awaiting-approval" not in verdict:
        raise off_script(request, "expected the step awaiting approval")
    return Reply.text("Step 0 is done and waits for your approval.\n\nSTEP_AWAITING_APPROVAL")


def test_a_major_deviation_goes_to_the_person_who_approves_the_revised_step(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, policy="never")
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_asks_the_deviation,
                    main_relaunches_after_the_decision, main_waits(), main_tells_how_to_decide)
    fake_api.script(EXECUTOR,
                    executor_reads_brief(orient=""), executor_orients_major,
                    executor_tries_to_edit, handback("DEVIATION"),
                    # the second executor: the revised step, its orientation already done
                    executor_reads_brief(orient=""), executor_writes("hello.txt", "salut\n"),
                    handback(SALUT_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")

    terminal.wait_for_text("Approve revised step 0", TIMEOUT)  # maker's question, on screen
    record = step(project, 0)
    assert record.status == "in-progress" and record.meta["deviation"]["status"] == "pending"
    assert not (project / "hello.txt").exists()  # nothing was edited: the guard refused
    refused = [r.text for req in fake_api.requests_for(EXECUTOR) for r in req.tool_results
               if r.is_error]
    assert any("awaits a person's decision" in t for t in refused), refused
    terminal.choose()  # the first option: approve the revised step

    finished(terminal, fake_api, "STEP_AWAITING_APPROVAL")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "awaiting-approval"  # the final approval is still the person's
    assert record.meta["deviation"]["decided_by"] == "user (AskUserQuestion)"
    assert record.meta["revised_task"] == REVISED
    assert (project / "hello.txt").read_text() == "salut\n"
    second_brief = [r.text for req in fake_api.requests_for(EXECUTOR) for r in req.tool_results
                    if r.text.startswith("# Step 0")][-1]
    assert REVISED in second_brief and "orientation is recorded" in second_brief
