"""A person's bounds in ``plans/settings.yaml`` with the real client.

- ``/maker:step`` (``-p``, and an interactive session with the executor in the
  background): the executor runs ``maker verify --step N`` itself; the failing run past
  ``max_fix_attempts`` says STOP, the gate then refuses a ``complete`` handoff (within
  ``gate_attempts``), and the step ends ``failed``.
- ``maker run`` (the real SDK): the fix loop is bounded by ``max_fix_attempts`` from the
  file, and the next step's brief carries the previous step's ``summary`` (item 5); a
  hung session is cut at ``session_timeout`` (the file's, or ``--session-timeout``): the
  CLI ends, the ledger records it, a fresh session is drawn, and the run goes on.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness.background import finished, main_follows_notification, notified_verdict
from harness.claude_fixtures import StartInteractive
from harness.maker_run import (
    MAKER,
    greeting_run,
    oriented_then,
    orients,
    run_env,
    run_maker,
    write_hello,
)
from harness.plugin import PLUGIN_ROOT, Run, step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    handback,
    handoff,
    main_launches_executor,
    main_reports_outcome,
    main_runs_outcome,
    main_waits,
    plugin_env,
    tool,
)
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply

pytestmark = pytest.mark.e2e

CHECK = "test -f hello.txt"


def verify_0() -> Reply:
    """``maker verify --step 0`` (a new call each time: each has its own id)."""
    return tool("Bash", command="maker verify --step 0", description="Verify step 0")


CLAIMS_COMPLETE = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.",
                          files=["hello.txt"])
GIVES_UP = handoff(0, {"files": []}, status="failed", summary="Tried twice; the check fails.",
                   blockers=["`test -f hello.txt` still fails after the fix budget."])


def settings(project: Path, text: str) -> None:
    (project / "plans" / "settings.yaml").write_text(text)


def verifies_again_after(expected: str, *, then: Reply) -> object:
    """A turn that reads the last `maker verify` result, which must say ``expected``."""

    def turn(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert expected in said, said
        return then

    return turn


def first_failure_may_be_fixed(request: RecordedRequest) -> Reply:
    said = request.tool_results[-1].text
    assert "verification failed" in said and "STOP" not in said, said
    assert "this is failing run 1 in this run of step 0; after 1 more failing run the " \
           "fix budget (max_fix_attempts: 1, plans/settings.yaml) is spent" in said
    return verify_0()


def second_failure_stops(answer: Reply) -> object:
    def turn(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "STOP: verification failed 2 times in this run of step 0, and " \
               "max_fix_attempts is 1 (plans/settings.yaml)" in said, said
        return answer

    return turn


# -- /maker:step ----------------------------------------------------------------------


def test_the_plugins_fix_budget_stops_the_executor_and_the_gate_refuses_complete(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    settings(project, "max_fix_attempts: 1\ngate_attempts: 2\n")
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), main_reports_outcome())

    def gives_up_when_refused(request: RecordedRequest) -> Reply:
        feedback = request.last_user_text
        assert "maker rejected your handoff for step 0 (attempt 1 of 2)" in feedback
        assert "the fix budget is spent" in feedback, feedback
        return Reply.text(GIVES_UP)

    fake_api.script(EXECUTOR, executor_reads_brief(), verify_0(), first_failure_may_be_fixed,
                    second_failure_stops(Reply.text(CLAIMS_COMPLETE)), gives_up_when_refused)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env=plugin_env(extra={"TEST_CMD": CHECK}))

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_FAILED"), run.result
    brief = fake_api.requests_for(EXECUTOR)[1].tool_results[0].text
    assert "Your fix budget (max_fix_attempts: 1)" in brief
    record = step(project, 0)
    assert record.status == "failed"
    assert record.meta["reasons"] == ["`test -f hello.txt` still fails after the fix budget."]


def test_the_fix_budget_in_an_interactive_session(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)
    settings(project, "max_fix_attempts: 1\ngate_attempts: 2\n")
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())

    def gives_up_when_refused(request: RecordedRequest) -> Reply:
        refused = request.tool_results[-1]
        assert refused.is_error, refused.text
        assert "maker rejected your handoff for step 0 (attempt 1 of 2)" in refused.text
        assert "the fix budget is spent" in refused.text
        return handback(GIVES_UP)

    fake_api.script(EXECUTOR, executor_reads_brief(), verify_0(), first_failure_may_be_fixed,
                    second_failure_stops(handback(CLAIMS_COMPLETE)), gives_up_when_refused)
    terminal = interactive(env={"TEST_CMD": CHECK})
    terminal.submit("/maker:step 0")

    screen = finished(terminal, fake_api, "STEP_FAILED")
    fake_api.assert_done()
    assert step(project, 0).status == "failed"
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: failed."), \
        verdict
    assert "STEP_FAILED" in screen


# -- maker run ------------------------------------------------------------------------


def test_maker_run_fixes_as_often_as_the_settings_file_says(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")
    settings(project, "max_fix_attempts: 1\n")

    step_1 = handoff(1, {"ok": True}, summary="Checked it.")

    def breaks_the_check(request: RecordedRequest) -> Reply:
        # Item 5: step 1's brief carries what step 0 did.
        assert "What it did (its `summary`): Wrote hello.txt." in request.last_user_text
        (project / "broken.txt").write_text("x\n")  # (step 1 may only read: the test does)
        return Reply.text(step_1)

    fake_api.script(
        "step-executor",
        Reply.text(CLAIMS_COMPLETE),    # step 0: the check fails (failing run 1) ...
        orients(0),                     # ... its one fix (orient, then the edit) ...
        oriented_then(write_hello),
        Reply.text(CLAIMS_COMPLETE),    # ... passes
        breaks_the_check,               # step 1: failing run 1 ...
        Reply.text(step_1),             # ... and 2: past max_fix_attempts 1
    )
    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": f"{CHECK} && test ! -f broken.txt"})

    assert run.returncode == 1, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert [step(project, n).status for n in (0, 1)] == ["complete", "failed"]
    assert "after 1 fix attempts (max_fix_attempts)" in step(project, 1).meta["reasons"][0]
    calls = Ledger(PlanStore(project / "plans")).calls()
    assert [(c.kind, c.step) for c in calls] == [("executor", 0), ("fix", 0),
                                                  ("executor", 1), ("fix", 1)]


def cli_processes(home: Path) -> list[int]:
    """The processes started with ``HOME=home``: the CLIs of this test's runs."""
    needle = f"HOME={home}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(pid))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
@pytest.mark.parametrize("where", ["file", "option"])
def test_a_hung_session_is_cut_at_session_timeout_drawn_again_and_the_run_goes_on(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path, where: str) -> None:
    write_plan(project, policy="never")
    release = threading.Event()
    asked = threading.Event()
    running: list[int] = []

    def hangs(request: RecordedRequest) -> Reply:
        running.extend(cli_processes(claude_home))  # (the check below sees the CLI)
        asked.set()
        release.wait(60)  # the model "thinks" until the test is over
        return Reply.text("too late")

    fake_api.script("step-executor", hangs)
    greeting_run(fake_api)  # (the fresh session drawn after the cut does the work)
    if where == "file":
        settings(project, "session_timeout: 4\n")
        args: tuple[str, ...] = ()
    else:  # the option wins over the file, for this run
        settings(project, "session_timeout: 600\n")
        args = ("--session-timeout", "4")
    began = time.monotonic()
    try:
        run = run_maker(fake_api, project, claude_home, "--approve", "auto", *args)
        took = time.monotonic() - began
        assert asked.is_set()
        assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
        assert 4 <= took < 60, took
        said = run.stdout + run.stderr
        assert "flagged (step 0's executor session ran past session_timeout (4 s" in said, \
            said[-2000:]
        assert "Traceback" not in run.stderr
        # Nothing of the cut session is left running: its CLI ended with it.
        assert running and not set(running) & set(cli_processes(claude_home))
    finally:
        release.set()
    first, *rest = Ledger(PlanStore(project / "plans")).calls()
    assert first.kind == "executor" and first.step == 0
    assert "step 0's executor session ran past session_timeout (4 s: plans/settings.yaml, or " \
           "--session-timeout) and was stopped" in (first.error or "")
    assert first.duration_ms >= 4000
    assert rest and not any(c.error for c in rest)
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]


def test_a_broken_settings_file_stops_maker_run_before_any_call(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")
    settings(project, "session_timeout: soon\n")
    run = subprocess.run([*MAKER, "run", "--approve", "auto"], cwd=project,
                         env=run_env(fake_api, claude_home), capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "settings.yaml" in run.stderr and "session_timeout" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert fake_api.requests == []
