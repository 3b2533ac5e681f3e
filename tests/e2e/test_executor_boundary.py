"""Claims against measurements, and the executor's Bash in the OS boundary, end to end:
the interactive client (auto mode, subagents in the background) and ``maker run``.

A phantom handoff (a file claimed that was never written) is refused with the fix, and
the corrected one is accepted; a Python one-liner that builds the name ``plans/`` (which
the command guard cannot read) gets a read-only error and the step goes on; a project
test that writes ``plans/``, run by ``maker verify``, is recorded as a failure and
changes nothing.

In auto mode the client refuses a call whose input a hook changed ("auto mode could not
check it") and asks the model to send it again as changed; the executor does, and maker
runs the boxed call it recognises as sent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.background import finished, main_follows_notification
from harness.claude_fixtures import StartInteractive
from harness.kernel import require_kernel
from harness.maker_run import run_env
from harness.plugin import PLUGIN_ROOT, Run, step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    executor_writes,
    greeting_plan,
    handback,
    handoff,
    main_launches_executor,
    main_waits,
    plugin_env,
    resent_as_changed,
    step_flow,
    tool,
    with_bash,
)
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.turns import Turn

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])
SNEAK = "python3 -c \"open('pla' + 'ns/PWNED', 'w').write('x')\""
PHANTOM = "names 1 file(s) maker measured no change to since the step began: hello.txt"


def bash_plan(project: Path) -> None:
    """The greeting plan, its first step allowed Bash."""
    write_plan(project, with_bash(greeting_plan()), policy="auto")


@pytest.fixture(autouse=True)
def kernel() -> None:
    require_kernel()


def sends_again(request: RecordedRequest) -> Reply:
    """auto mode refused the call a hook changed: send it again, exactly as changed."""
    changed = resent_as_changed(request)
    assert changed["command"].startswith("/bin/sh ") and SNEAK in changed["command"]
    return Reply.tool("Bash", changed)


def sees_read_only(project: Path) -> Turn:
    def turn(request: RecordedRequest) -> Reply:
        result = request.tool_results[-1]
        assert result.is_error and "Read-only file system" in result.text, result.text
        return tool("Write", file_path=str(project / "hello.txt"), content="hello\n")
    return turn


def test_interactive_phantom_refused_and_a_write_into_plans_is_read_only(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    bash_plan(project)
    phantom = [0]

    def after_phantom(request: RecordedRequest) -> Reply:
        refused = request.tool_results[-1]
        assert refused.is_error and PHANTOM in refused.text, refused.text
        assert "remove each from `files_changed`, or make the change it names" in refused.text
        assert step(project, 0).status == "in-progress"
        phantom[0] += 1
        return tool("Bash", command=SNEAK, description="Write a note")

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), handback(GOOD_0), after_phantom,
                    sends_again, sees_read_only(project), handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")

    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert phantom == [1]
    assert not (project / "plans/PWNED").exists()
    assert (project / "hello.txt").read_text() == "hello\n"
    record = step(project, 0)
    assert record.status == "complete"
    assert PlanStore(project / "plans").read_handoff(0)["files_measured"] == ["hello.txt"]


def test_maker_run_phantom_refused_and_a_write_into_plans_is_read_only(
        project: Path, claude_home: Path) -> None:
    bash_plan(project)
    with FakeMessagesAPI() as api:
        def after_phantom(request: RecordedRequest) -> Reply:
            assert PHANTOM in request.last_user_text, request.last_user_text[-800:]
            return tool("Bash", command=SNEAK, description="Write a note")

        def writes(request: RecordedRequest) -> Reply:
            result = request.tool_results[-1]
            assert "Read-only file system" in result.text, result.text
            return tool("Bash", command="printf 'hello\\n' > hello.txt",
                        description="Write hello.txt")

        api.script("step-executor",
                   tool("Bash", command="maker orient 0 none", description="Orient"),
                   Reply.text(GOOD_0), after_phantom, writes, Reply.text(GOOD_0),
                   Reply.text(handoff(1, {"ok": True}, summary="hello.txt says hello.")))
        done = subprocess.run([sys.executable, "-c", "from maker.cli.main import main; main()",
                               "run", "--approve", "auto"], cwd=project,
                              env=run_env(api, claude_home, {}), capture_output=True,
                              text=True, timeout=240, check=False)
        api.assert_done()
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (project / "plans/PWNED").exists()
    assert (project / "hello.txt").read_text() == "hello\n"
    assert step(project, 0).status == step(project, 1).status == "complete"


def test_a_project_test_that_writes_plans_is_a_failed_check_and_changes_nothing(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    bash_plan(project)
    step_flow(fake_api, [executor_writes("hello.txt", "hello\n"),
                         tool("Bash", command="maker verify --step 0", description="Verify")],
              GOOD_0)
    test_cmd = "python3 -c \"open('pla' + 'ns/PWNED', 'w')\""
    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env={**plugin_env(), "TEST_CMD": test_cmd})
    said = [t.text for r in fake_api.requests_for(EXECUTOR) for t in r.tool_results
            if "verification failed" in t.text]
    assert said, "maker verify's result reached the executor"
    assert "Read-only file system" in said[0], said[0]
    assert not (project / "plans/PWNED").exists()
    evidence = json.loads((project / "plans/.maker/evidence/step-00.json").read_text())
    assert evidence["status"] == "failed"
    assert run.result is not None and "STEP_COMPLETE" not in run.result
