"""Every agent under a wall-clock bound, with the real client.

- The plugin (``subagent_timeout`` in plans/settings.yaml):
  - an interactive session, a step executor that hangs (it waits on the model and makes
    no call): at its bound maker records the step failed and wakes the main agent, which
    stops it with TaskStop; its later notification changes nothing;
  - the same for the reviewer: it is stopped, and no review is recorded;
  - ``claude -p``, a step executor that keeps working past its bound: its next call ends
    it (``continue: false``), and the main agent gets the verdict when the Agent call
    returns.
- ``maker run`` (the real SDK): a hung reviewer's session is cut at ``session_timeout``,
  drawn again, and the run goes on (the executor's own: ``test_settings_bounds.py``);
- ``/maker:run`` typed in an interactive session (its steps in maker's engine): a hung
  executor's and a hung reviewer's sessions are cut at ``session_timeout``, each recorded
  in the ledger with the reason, drawn again, and the run goes on to its end.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from harness.background import finished, notified_verdict
from harness.claude_fixtures import StartInteractive
from harness.maker_run import oriented_then, orients, run_maker, writes
from harness.plugin import PLUGIN_ROOT, Run, step, write_plan
from harness.queries import RecordingAPI
from harness.run_loop import RunMain
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    greeting_plan,
    handback,
    handoff,
    main_follows_verdict,
    main_launches_executor,
    main_waits,
    plugin_env,
    tool,
    with_bash,
)
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply

pytestmark = pytest.mark.e2e

REVIEWER = "reviewer"
_WAKE = re.compile(r"the (maker:[\w-]+) subagent \(agent ([\w-]+)\) ran past its time bound "
                   r"and still runs\. Stop it now: call TaskStop with task_id \"\2\"\. "
                   r"maker's verdict: (.*)", re.S)
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")


def bound(project: Path, seconds: float) -> None:
    (project / "plans" / "settings.yaml").write_text(f"subagent_timeout: {seconds:g}\n")


class Woken:
    """The main agent woken by maker's bound: it stops the subagent the wake names with
    TaskStop, then tells the user maker's verdict; the stopped agent's own notification
    (status killed) then gets maker's word that nothing more is to do."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.verdict = ""
        self.stopped = ""

    def stops(self, request: RecordedRequest) -> Reply:
        m = _WAKE.search(request.latest_text)
        assert m and m.group(1) == self.agent, request.latest_text[-2000:]
        assert "<summary>maker: a subagent ran past its time bound</summary>" in \
            request.latest_text
        self.verdict, self.stopped = m.group(3).strip(), m.group(2)
        return tool("TaskStop", task_id=self.stopped)

    def tells(self, request: RecordedRequest) -> Reply:
        assert f"Successfully stopped task: {self.stopped}" in request.latest_text
        end = _END_WITH.search(self.verdict)
        return Reply.text(f"maker says: {self.verdict}" + (f"\n\n{end.group(1)}" if end
                                                           else "\n\nREVIEW_STOPPED"))

    def notified(self, request: RecordedRequest) -> Reply:
        text = request.latest_text
        assert f"<task-id>{self.stopped}</task-id>" in text and "<status>killed</status>" in text
        assert f"(agent {self.stopped}) was given already; nothing more to do" in text
        return Reply.text("Noted.")


def test_a_hung_executor_is_stopped_at_its_bound_and_its_step_fails(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)
    bound(project, 8)
    release = threading.Event()

    def hangs(request: RecordedRequest) -> Reply:
        release.wait(120)  # the model never answers while the test looks
        return Reply.text("too late")

    woken = Woken("maker:step-executor")
    fake_api.script(MAIN, main_launches_executor(), main_waits(), woken.stops, woken.tells,
                    woken.notified)
    fake_api.script(EXECUTOR, executor_reads_brief(), hangs)
    terminal = interactive()
    try:
        terminal.submit("/maker:step 0")
        screen = finished(terminal, fake_api, "Noted.", timeout=120)
    finally:
        release.set()
    assert "maker: a subagent ran past its time bound" in screen
    assert woken.verdict.startswith("step 0 (Write hello.txt) FAILED: its step executor ran "
                                    "past subagent_timeout (8 s, plans/settings.yaml) and was "
                                    "ended; maker recorded the step failed.")
    record = step(project, 0)
    assert record.status == "failed"
    assert record.meta["reasons"] == ["its step executor ran past subagent_timeout (8 s, "
                                      "plans/settings.yaml) and was ended"]
    assert len(fake_api.requests_for(EXECUTOR)) == 2  # (nothing after the hung request)


FILES = ["hello.txt", *(f"f{i}.txt" for i in range(1, 6))]  # six: the reviewer's due


def main_launches_reviewer(request: RecordedRequest) -> Reply:
    agent, _, verdict = notified_verdict(request)
    assert agent == "maker:step-executor" and "launch maker:reviewer" in verdict, verdict
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt="Review maker step 0: read `maker context 0` and the handoff.")


def test_a_hung_reviewer_is_stopped_at_its_bound_and_nothing_is_recorded(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)  # auto: a six-file step is the reviewer's to decide
    bound(project, 10)
    release = threading.Event()

    def hangs(request: RecordedRequest) -> Reply:
        release.wait(120)
        return Reply.text("VERDICT: approve")

    woken = Woken("maker:reviewer")
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_launches_reviewer,
                    main_waits(), woken.stops, woken.tells, woken.notified)
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    *(tool("Write", file_path=str(project / name), content="x\n")
                      for name in FILES),
                    handback(handoff(0, {"files": FILES}, files=FILES)))
    fake_api.script(REVIEWER, hangs)
    terminal = interactive()
    try:
        terminal.submit("/maker:step 0")
        finished(terminal, fake_api, "Noted.", timeout=150)
    finally:
        release.set()
    assert woken.verdict.startswith("the reviewer of step 0 was ended: its reviewer ran past "
                                    "subagent_timeout (10 s, plans/settings.yaml) and was "
                                    "ended. No review was recorded."), woken.verdict
    record = step(project, 0)
    assert record.status == "awaiting-approval"  # (a person, or a new review, decides)
    assert not (project / "plans/.maker/reviews/step-00.json").exists()


def test_an_executor_working_past_its_bound_is_ended_at_its_next_call(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project, with_bash(greeting_plan()))
    bound(project, 4)
    sleeps = [tool("Bash", command="sleep 2.5", description="Work a while")] * 4
    fake_api.script(MAIN, main_launches_executor(), main_follows_verdict())
    fake_api.script(EXECUTOR, executor_reads_brief(), *sleeps)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    assert run.result is not None and run.result.endswith("\nSTEP_FAILED"), run.result
    assert "step 0 (Write hello.txt) FAILED: its step executor ran past subagent_timeout " \
           "(4 s, plans/settings.yaml) and was ended" in run.result
    ran = fake_api.requests_for(EXECUTOR)
    assert 2 < len(ran) < 6, len(ran)  # (some calls ran; the one past the bound did not)
    assert fake_api.remaining().get(EXECUTOR)  # (it was never asked again)
    assert step(project, 0).status == "failed"


def test_maker_run_draws_a_cut_review_again_and_the_run_goes_on(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")
    (project / "plans" / "settings.yaml").write_text("session_timeout: 4\n")
    release = threading.Event()

    def hangs(request: RecordedRequest) -> Reply:
        release.wait(60)
        return Reply.text("too late")

    fake_api.script(EXECUTOR, orients(0), oriented_then(writes(*FILES)),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)),
                    Reply.text(handoff(1, {"ok": True})))
    fake_api.script(REVIEWER, hangs, Reply.text("GREEN: fine.\nVERDICT: approve"))
    try:
        run = run_maker(fake_api, project, claude_home, "--approve", "auto")
    finally:
        release.set()
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    reviews = [c for c in Ledger(PlanStore(project / "plans")).calls() if c.kind == "reviewer"]
    assert len(reviews) >= 2
    assert "session_timeout" in (reviews[0].error or "") and not reviews[1].error


def test_a_run_typed_in_the_client_cuts_a_hung_executor_and_reviewer_and_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, policy="auto")  # auto: a six-file step is the reviewer's to decide
    (project / "plans" / "settings.yaml").write_text("session_timeout: 5\n")
    release = threading.Event()
    hung: list[str] = []

    def hangs(request: RecordedRequest) -> Reply:
        hung.append(request.agent)
        release.wait(120)  # the model never answers while the run goes on
        return Reply.text("too late")

    main = RunMain(fake_api, lambda k: None)
    fake_api.script(MAIN, main)
    fake_api.script(EXECUTOR, hangs, orients(0), oriented_then(writes(*FILES)),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)),
                    Reply.text(handoff(1, {"ok": True})))
    fake_api.script(REVIEWER, hangs, Reply.text("GREEN: fine.\nVERDICT: approve"))
    terminal = interactive()
    try:
        terminal.submit("/maker:run")
        terminal.wait(lambda: main.ended is not None, "the run's end", 240)
    finally:
        release.set()
    assert main.ended == "RUN_DONE", (main.turns, terminal.text()[-2000:])
    assert hung == [EXECUTOR, REVIEWER]
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    calls = Ledger(PlanStore(project / "plans")).calls()
    cut = [c for c in calls if c.error]
    assert [(c.kind, c.step) for c in cut] == [("executor", 0), ("reviewer", 0)], calls
    assert all("ran past session_timeout (5 s" in (c.error or "") for c in cut), cut
    assert all(c.duration_ms >= 5000 for c in cut)
    left = fake_api.remaining()
    assert not left.get(EXECUTOR) and not left.get(REVIEWER), left
