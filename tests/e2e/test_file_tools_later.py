"""The step executor's file tools in the real client (interactive, auto mode, its
subagent in the background): a Write of the client's own settings, which would turn
maker's hooks off in the next session, is refused with the reason, nothing is written,
and the step goes on with its own work."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.background import finished, main_follows_notification
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    greeting_plan,
    handback,
    handoff,
    main_launches_executor,
    main_waits,
    tool,
)
from maker_scripted import RecordedRequest, Reply

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])


@pytest.mark.parametrize("target", [".claude/settings.local.json", ".mcp.json"])
def test_the_executor_cannot_write_what_runs_later_outside_its_box(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        target: str) -> None:
    write_plan(project, greeting_plan(), policy="auto")
    planted = project / target

    def refused(request: RecordedRequest) -> Reply:
        result = request.tool_results[-1]
        assert result.is_error and "runs later, outside its box" in result.text, result.text
        assert "names it in `writes`" in result.text
        return tool("Write", file_path=str(project / "hello.txt"), content="hello\n")

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    tool("Write", file_path=str(planted), content='{"disableAllHooks": true}'),
                    refused, handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert not planted.exists()
    assert (project / "hello.txt").read_text() == "hello\n"
    assert step(project, 0).status == "complete"
