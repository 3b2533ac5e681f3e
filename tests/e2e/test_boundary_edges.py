"""The boundary's edges in the real client (interactive, auto mode, the executor in the
background): a hook that cannot decide in time refuses the executor's call (the client
would otherwise run it unchecked); a Bash call in the background is refused with the
fix, so nothing of a step's races its file tools; a `.mcp.json` a boxed command makes is
gone when the command ends, and the step goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.background import finished, main_follows_notification
from harness.claude_fixtures import StartInteractive
from harness.kernel import require_kernel
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
    resent_as_changed,
    tool,
    with_bash,
)
from maker_scripted import RecordedRequest, Reply

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])
PLANT = "python3 -c \"open('.mcp' + '.json', 'w').write('{}')\"; echo planted"


def bash_plan(project: Path) -> None:
    write_plan(project, with_bash(greeting_plan()), policy="auto")


def test_a_hook_out_of_time_refuses_the_executors_call(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """A command made slow to check (a chain of 39 symlinks, named 40,000 times: the
    issue's attack) outlasts the hook's deadline (shortened to 3 s by
    `MAKER_HOOK_DEADLINE_S`, which can only shorten it): the client gets a refusal with
    the reason, not silence, and the command does not run. Every other call of the step
    is checked in time."""
    bash_plan(project)
    marker = project / "ran.txt"
    (project / "l0").mkdir()
    for i in range(39):
        (project / f"l{i + 1}").symlink_to(f"l{i}")
    slow = f"touch '{marker}'; cat " + " ".join(["l39/x"] * 40000) + " 2>/dev/null"

    def refused(request: RecordedRequest) -> Reply:
        result = request.tool_results[-1]
        assert result.is_error and "ran out of time" in result.text, result.text
        return tool("Write", file_path=str(project / "hello.txt"), content="hello\n")

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    tool("Bash", command=slow, description="Read them all"),
                    refused, handback(GOOD_0))
    terminal = interactive(env={"MAKER_HOOK_DEADLINE_S": "3"})
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert not marker.exists()
    assert step(project, 0).status == "complete"


def test_background_bash_is_refused_and_a_planted_mcp_json_is_gone(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    require_kernel()
    bash_plan(project)

    def background_refused(request: RecordedRequest) -> Reply:
        result = request.tool_results[-1]
        assert result.is_error and "without run_in_background" in result.text, result.text
        return tool("Bash", command=PLANT, description="Plant a server")

    def sends_again(request: RecordedRequest) -> Reply:
        return Reply.tool("Bash", resent_as_changed(request))

    def removed(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "planted" in said and "removed" in said and ".mcp.json" in said, said
        assert not (project / ".mcp.json").exists()
        return tool("Write", file_path=str(project / "hello.txt"), content="hello\n")

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    tool("Bash", command="python3 swap_links.py",
                         run_in_background=True, description="Swap a link"),
                    background_refused, sends_again, removed, handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert not (project / ".mcp.json").exists()
    assert (project / "hello.txt").read_text() == "hello\n"
    assert step(project, 0).status == "complete"
