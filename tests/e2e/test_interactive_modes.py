"""maker in the interactive client's other modes and moments: the real Claude Code CLI
in a pseudo-terminal, keys typed and the screen read as a person would; only the model
is scripted (tests/harness/background.py).

- ``default`` permission mode: the person answers every prompt the client shows. maker's
  own plumbing (``maker context N``, ``maker verify --step N``, ``maker status``,
  ``maker step outcome N``) costs no prompt; the step's own work does. A denied Write
  leaves the step blocked, with the reason, never half-done.
- ``acceptEdits``: edits go through; ``maker verify`` (it runs the project's commands)
  is asked, maker's read-only plumbing is not.
- fork mode off (``CLAUDE_CODE_FORK_SUBAGENT=0``): subagents in the foreground again;
  the verdict rides on PostToolUse of the Agent call.
- a subagent that ends with text in auto mode, then is made to hand back the same
  report: its deliverable is gated once.
- the person keeps working while an executor runs in the background.
- an executor stopped with TaskStop (no SubagentStop fires): the step is not stuck.

Each scenario awaits events (the script consumed, files written, text on the screen);
none sleeps for a fixed time. A scripted turn that must still be running blocks on a
``threading.Event`` (the fake API serves each request in its own thread).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.background import (
    IDLE,
    TIMEOUT,
    finished,
    main_follows_notification,
    notified_verdict,
    settled,
)
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.prompts import Prompt, answer_prompts
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    PLANNER,
    executor_reads_brief,
    executor_writes,
    greeting_plan,
    handback,
    handoff,
    main_launches_executor,
    main_launches_planner,
    main_refuses_step,
    main_reports_decision,
    main_reports_outcome,
    main_reports_status,
    main_runs,
    main_shows_status,
    main_waits,
    off_script,
    to_yaml,
    tool,
)
from maker.store.plan_store import PlanStore
from maker_scripted import RecordedRequest, Reply, ScriptItem
from maker_scripted.terminal import Terminal

pytestmark = pytest.mark.e2e

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])
REFUSED_WRITE = "The person refused the Write of hello.txt, so it was not created."
BLOCKED_0 = handoff(0, {"files": []}, status="blocked", summary="hello.txt was not written.",
                    blockers=[REFUSED_WRITE])
VERIFY_0 = tool("Bash", command="maker verify --step 0", description="Verify the step")


# -- waiting on the client -----------------------------------------------------------


def idle_with(terminal: Terminal, text: str) -> str:
    """Wait until the screen shows ``text`` and the main agent's turn is over (the
    status line no longer offers "esc to interrupt"); the screen."""
    def over() -> str | None:
        screen = terminal.text()
        return screen if text in screen and IDLE not in screen else None

    return str(terminal.wait(over, f"{text!r} on the screen and the turn over", TIMEOUT))


def no_stop_hook(screen: str) -> bool:
    """Whether the screen shows no Stop hook at work (its block, its feedback, its
    error), the client's spinner ("running Stop hook · 0s") aside."""
    return re.search(r"(?i)stop hook", screen.replace("running Stop hook", "")) is None


def stop_hook_feedback(api: RecordingAPI) -> list[str]:
    """Every Stop hook block the main agent was sent."""
    return [r.latest_text for r in api.requests_for(MAIN)
            if re.search(r"Stop hook (feedback|blocking error)", r.latest_text)]


def tool_errors(api: RecordingAPI, agent: str) -> list[str]:
    """The failed tool results ``agent`` was sent (a hook's deny among them)."""
    return [r.text for req in api.requests_for(agent) for r in req.tool_results
            if r.is_error]


# -- scripted turns only these scenarios use ------------------------------------------

_RETURNED = re.compile(r"maker's verdict: (.*?End your reply with the line (STEP_[A-Z_]+)\.)",
                       re.S)


def returned_verdict(request: RecordedRequest) -> tuple[str, str]:
    """``(verdict, sentinel)``: maker's verdict when a foreground Agent call returned
    (PostToolUse's additionalContext after the Agent tool's result)."""
    match = _RETURNED.search(request.latest_text)
    if not match:
        raise off_script(request, "expected maker's verdict after the Agent tool's result")
    return match.group(1), match.group(2)


def main_follows_returned_verdict() -> Callable[[RecordedRequest], Reply]:
    def turn(request: RecordedRequest) -> Reply:
        verdict, sentinel = returned_verdict(request)
        return Reply.text(f"maker says: {verdict}\n\n{sentinel}")

    return turn


def main_checks_outcome_after_notification(n: int) -> Callable[[RecordedRequest], Reply]:
    """The notification's turn: maker's verdict is there; ``maker step outcome N`` to see
    where the step ended up (a command the step command's allowed-tools does not cover
    in this later turn)."""

    def turn(request: RecordedRequest) -> Reply:
        notified_verdict(request)
        return tool("Bash", command=f"maker step outcome {n}",
                    description="Where the step ended up")

    return turn


def main_shows_plan_after_notification() -> Callable[[RecordedRequest], Reply]:
    """The planner's notification turn: the plan is written; run ``maker status``."""

    def turn(request: RecordedRequest) -> Reply:
        agent, _, verdict = notified_verdict(request)
        if agent != "maker:planner" or not verdict.startswith("plan written to "):
            raise off_script(request, f"expected the plan written, got {verdict!r}")
        return main_runs("maker status")(request)

    return turn


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event a blocked scripted turn waits on; set at the end whatever happens, so no
    fake API thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def blocks_until(release: threading.Event, started: threading.Event,
                 then: Callable[[RecordedRequest], Reply] | Reply) -> Callable[..., Reply]:
    """A turn that holds its request (the subagent keeps running) until ``release``."""

    def turn(request: RecordedRequest) -> Reply:
        started.set()
        release.wait(TIMEOUT * 2)
        return then(request) if callable(then) else then

    return turn


def verdict_record(claude_home: Path, agent_id: str) -> dict[str, Any]:
    """What maker's hooks recorded of a subagent (``maker.hooks.verdicts``): in the
    plugin's data dir, which the client gives the hooks in the test's own home."""
    (data,) = (claude_home / ".claude/plugins/data").iterdir()
    return dict(json.loads((data / "verdicts" / f"{agent_id}.json").read_text()))


def agent_id_launched(request: RecordedRequest) -> str:
    """The background agent's id, from maker's note on the launch (PostToolUse)."""
    match = re.search(r"was launched and runs in the background \(agent ([\w-]+)\)",
                      request.all_text)
    if not match:
        raise off_script(request, "expected maker's note on a background launch")
    return match.group(1)


# -- 1. default permission mode ---------------------------------------------------------


def step_0_answering_prompts(interactive: StartInteractive, api: RecordingAPI,
                             project: Path, mode: str, *more: ScriptItem) -> list[Prompt]:
    """/maker:step 0 in permission ``mode`` (policy auto, verification on), the person
    answering every prompt with Yes; the executor reads its brief, writes hello.txt, does
    ``more``, verifies and ends with its handoff as text. The prompts, in order."""
    write_plan(project)
    api.script(MAIN, main_launches_executor(), main_waits(),
               main_checks_outcome_after_notification(0), main_reports_outcome())
    api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
               *more, VERIFY_0, Reply.text(GOOD_0))
    terminal = interactive(args=["--permission-mode", mode],
                           env={"TEST_CMD": "test -f hello.txt"})
    terminal.submit("/maker:step 0")
    return answer_prompts(terminal, lambda: settled(terminal, api, "STEP_COMPLETE"))


def test_default_mode_asks_for_the_steps_work_and_never_for_makers_plumbing(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    # No SubagentHandback in default mode: the executor ends with the handoff as text.
    prompts = step_0_answering_prompts(
        interactive, fake_api, project, "default",
        tool("Bash", command="maker status", description="Where the plan is"))
    fake_api.assert_done()
    assert "SubagentHandback" not in fake_api.requests_for(EXECUTOR)[0].tool_names
    # One prompt per step: its own work (the Write of hello.txt), asked of the person
    # naming who asks. maker's plumbing (the executor's `maker context 0`, `maker status`
    # and `maker verify --step 0`; main's `maker step outcome 0` in the notification's
    # turn, which the command's allowed-tools does not cover) asks nothing. Without
    # maker's allowance it was 4 prompts a step (measured with 2.1.330: maker context 0,
    # the Write, maker verify --step 0, main's maker step outcome 0; the client asked
    # nothing for `maker status` on its own).
    asked = [(p.what, p.agent, p.subject) for p in prompts]
    assert asked == [("Create file", "maker:step-executor", "hello.txt")], asked
    assert prompts[0].question == "Do you want to create hello.txt?"
    assert not tool_errors(fake_api, EXECUTOR) and not tool_errors(fake_api, MAIN)
    record = step(project, 0)
    assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
    assert (project / "hello.txt").read_text() == "hello\n"
    assert "test -f hello.txt" in (project / "plans/handoffs/00-write-hello-txt.md").read_text()
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: complete.")
    assert not stop_hook_feedback(fake_api)


SNEAKY = "echo made > made.txt; python3 -c \"open('pla' + 'ns/PWNED', 'w')\""


def test_default_mode_asks_for_a_boxed_command_as_the_executor_wrote_it(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """The step's own command runs in maker's OS boundary; the person is asked for it as
    the executor wrote it, under one line that names maker's box, never a page of mount
    options; allowed, it runs, and plans/ stays out of its reach."""
    from harness.kernel import require_kernel

    require_kernel()
    plan = greeting_plan()
    plan["plan"][0]["primary_tools"] = ["Write", "Read", "Bash"]
    write_plan(project, plan)
    fake_api.script(MAIN, main_launches_executor(), main_waits(),
                    main_checks_outcome_after_notification(0), main_reports_outcome())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    tool("Bash", command=SNEAKY, description="Make a note"),
                    VERIFY_0, Reply.text(handoff(0, {"files": ["hello.txt"]},
                                                 summary="Wrote hello.txt and a note.",
                                                 files=["hello.txt", "made.txt"])))
    terminal = interactive(args=["--permission-mode", "default"],
                           env={"TEST_CMD": "test -f hello.txt"})
    terminal.submit("/maker:step 0")
    prompts = answer_prompts(terminal, lambda: settled(terminal, fake_api, "STEP_COMPLETE"))
    fake_api.assert_done()
    boxed = [p for p in prompts if p.what == "Bash command"]
    assert len(boxed) == 1 and boxed[0].agent == "maker:step-executor", prompts
    assert "/bin/sh /" in boxed[0].subject and "/box-" in boxed[0].subject  # (maker's box)
    assert "echo made > made.txt" in boxed[0].screen  # (the command as written, below)
    assert (project / "made.txt").read_text() == "made\n"
    assert not (project / "plans/PWNED").exists()
    assert step(project, 0).status == "complete"


def test_accept_edits_mode_asks_only_for_verification_which_runs_the_projects_commands(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """acceptEdits: the person lets edits through and is asked for commands. The step's
    Write goes through; `maker verify` runs the project's checks (which the step may
    have written), so it is asked; maker's read-only plumbing is not."""
    prompts = step_0_answering_prompts(interactive, fake_api, project, "acceptEdits")
    fake_api.assert_done()
    asked = [(p.what, p.agent, p.subject) for p in prompts]
    assert asked == [("Bash command", "maker:step-executor", "maker verify --step 0")], asked
    record = step(project, 0)
    assert record.status == "complete" and (project / "hello.txt").read_text() == "hello\n"
    assert "test -f hello.txt" in (project / "plans/handoffs/00-write-hello-txt.md").read_text()
    assert not stop_hook_feedback(fake_api)


def test_default_mode_a_denied_write_leaves_the_step_blocked_with_the_reason(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)

    def hands_off_blocked(request: RecordedRequest) -> Reply:
        denied = request.tool_results[-1]
        assert denied.is_error and "Permission for this tool use was denied" in denied.text
        return Reply.text(BLOCKED_0)

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    hands_off_blocked)
    terminal = interactive(args=["--permission-mode", "default"])
    terminal.submit("/maker:step 0")

    prompts = answer_prompts(terminal, lambda: settled(terminal, fake_api, "STEP_BLOCKED"),
                             deny=lambda p: p.what == "Create file")
    fake_api.assert_done()
    asked = [(p.what, p.agent, p.subject) for p in prompts]
    assert asked == [("Create file", "maker:step-executor", "hello.txt")], asked
    # The step says what happened: blocked, the person's refusal its reason. Nothing of
    # the step's work was done, and it is not left in progress (or half complete).
    record = step(project, 0)
    assert record.status == "blocked" and REFUSED_WRITE in record.meta["reasons"]
    assert not (project / "hello.txt").exists()
    assert not (project / "plans/.maker/active.json").exists()
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: blocked.")
    assert REFUSED_WRITE in verdict and verdict.endswith("End your reply with the line "
                                                         "STEP_BLOCKED.")


# -- 2. fork mode off: subagents in the foreground ---------------------------------------


def test_fork_mode_off_the_verdict_rides_on_the_agent_calls_return(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_follows_returned_verdict())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    VERIFY_0, handback(GOOD_0))
    terminal = interactive(env={"CLAUDE_CODE_FORK_SUBAGENT": "0",
                                "TEST_CMD": "test -f hello.txt"})
    terminal.submit("/maker:step 0")

    screen = finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
    # The executor ran inside the Agent call (no launch in the background, no turn to
    # wait) and delivered through SubagentHandback (tool_response.handback "send"); the
    # call's PostToolUse carried maker's verdict to main.
    main = fake_api.requests_for(MAIN)
    assert len(main) == 2
    (returned,) = main[1].tool_results
    assert "Async agent launched" not in returned.text
    assert "(its SubagentHandback call)" in returned.text
    assert "PostToolUse:Agent hook additional context: maker's verdict: step 0 " \
           "(Write hello.txt): handoff accepted; status: complete." in main[1].latest_text
    # The hand-back queued behind the result (UserPromptSubmit) does not repeat it.
    assert main[1].latest_text.count("handoff accepted") == 1
    assert "Backgrounded agent" not in screen and no_stop_hook(screen)
    assert not stop_hook_feedback(fake_api)


# -- 3. text first, then the hand-back auto mode insists on -----------------------------


def test_an_executor_that_ends_with_text_then_hands_back_is_accepted_once(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        claude_home: Path) -> None:
    write_plan(project)

    def hands_back_when_told(request: RecordedRequest) -> Reply:
        assert request.last_user_text.startswith("[handback-send-enforce]")
        assert step(project, 0).status == "complete"  # the text was gated already
        return handback(GOOD_0)

    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    Reply.text(GOOD_0), hands_back_when_told)
    terminal = interactive()
    terminal.submit("/maker:step 0")

    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert step(project, 0).status == "complete"
    # Gated once: one handoff, nothing refused, kept aside or counted; the hand-back of
    # the same report changed nothing (no "no step was in progress").
    plans = project / "plans"
    assert [p.name for p in (plans / "handoffs").iterdir()] == ["00-write-hello-txt.md"]
    assert not (plans / ".maker/refused").exists()
    assert not list((plans / ".maker/attempts").glob("*"))
    assert not tool_errors(fake_api, EXECUTOR)
    main = fake_api.requests_for(MAIN)
    agent, agent_id, verdict = notified_verdict(main[2])
    assert agent == "maker:step-executor"
    assert verdict == ("step 0 (Write hello.txt): handoff accepted; status: complete. "
                       "Summary: Wrote hello.txt; it says hello.\nTell the user what the "
                       "step did (the summary). End your reply with the line STEP_COMPLETE.")
    assert verdict_record(claude_home, agent_id)["outcome"] == "accepted"
    told = "\n".join(r.latest_text for r in main[1:])  # all maker said after the launch
    assert "no step was in progress" not in told and "STEP_BLOCKED" not in told


def test_a_planner_that_ends_with_text_then_hands_back_writes_the_plan_once(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        claude_home: Path) -> None:
    plan = to_yaml(greeting_plan())

    def hands_back_when_told(request: RecordedRequest) -> Reply:
        assert request.last_user_text.startswith("[handback-send-enforce]")
        assert (project / "plans").is_dir()  # the text was gated (and written) already
        return handback(plan)

    fake_api.script(MAIN, main_launches_planner(), main_waits(),
                    main_shows_plan_after_notification(), main_reports_status())
    fake_api.script(PLANNER, Reply.text(plan), hands_back_when_told)
    terminal = interactive()
    terminal.submit("/maker:plan add a hello.txt greeting")

    screen = finished(terminal, fake_api, "Run /maker:step to start the first step.")
    fake_api.assert_done()
    assert not tool_errors(fake_api, PLANNER)
    # Written once: the second delivery archived nothing (a second write would have
    # moved the first plan to plans/archive/ or been refused).
    assert not (project / "plans/archive").exists()
    assert step(project, 0).title == "Write hello.txt"
    _, agent_id, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert verdict.startswith("plan written to ") and "archived" not in verdict
    assert verdict_record(claude_home, agent_id)["outcome"] == "written"
    assert "0     Write hello.txt  pending" in screen


# -- 4. the person keeps working while the executor runs --------------------------------


def two_step_plan() -> dict[str, Any]:
    """The greeting plan, its step 1 writing bye.txt (after step 0)."""
    plan = greeting_plan()
    plan["plan"][1].update(title="Write bye.txt", task_description="Create bye.txt saying bye.",
                           primary_tools=["Write"], input_variables=[],
                           primary_tool_instructions="Write bye.txt with Write.",
                           output_schema="{files: list}")
    return plan


def awaits_approval_by_hand(store: PlanStore, n: int) -> None:
    """Step ``n`` put in awaiting-approval by hand: maker itself never lets a step await
    approval while another runs (it starts no step while one awaits), so this state is
    set up to show that a person's decision on one step goes through while another
    step's executor runs."""
    with store.lock():
        record = store.load_step(n)
        record.status = "awaiting-approval"
        store.save_step(record)


def test_the_person_keeps_working_while_the_executor_runs_in_the_background(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        release: threading.Event) -> None:
    store = write_plan(project, two_step_plan())
    working = threading.Event()
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_shows_status(),
                    main_refuses_step(), main_reports_decision(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    blocks_until(release, working, executor_writes("hello.txt", "hello\n")),
                    handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    idle_with(terminal, "you can keep working")
    terminal.wait(working.is_set, "the executor at work", TIMEOUT)

    terminal.submit("/maker:status")
    screen = idle_with(terminal, "Next: /maker:step for the next ready step.")
    assert re.search(r"Running: step 0 \(Write hello.txt\) is running: its executor was "
                     r"launched in the background", screen), screen
    assert "0     Write hello.txt  in-progress" in screen

    terminal.submit("/maker:step 0")
    screen = idle_with(terminal, "STEP_BLOCKED")
    assert "maker did not start the step: step 0 (Write hello.txt) is running" in screen
    assert re.search(r"^REFUSED: step 0 \(Write hello.txt\) is running",
                     fake_api.requests_for(MAIN)[3].latest_text, re.M)

    awaits_approval_by_hand(store, 1)
    terminal.submit("/maker:approve 1")
    screen = idle_with(terminal, "STEP_COMPLETE")
    assert "Approved step 1 (Write bye.txt); it is complete." in screen
    assert step(project, 1).status == "complete"
    assert step(project, 1).meta["approved_by"] == "user (typed /maker:approve)"
    # All the while, the step's executor ran on, and no turn was held or counted.
    assert step(project, 0).status == "in-progress"
    assert not list((project / "plans/.maker/attempts").glob("stop-*"))
    assert not stop_hook_feedback(fake_api) and no_stop_hook(screen)

    release.set()
    screen = finished(terminal, fake_api, "maker says: step 0")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[5])
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: complete.")
    assert not stop_hook_feedback(fake_api) and no_stop_hook(screen)
    assert not list((project / "plans/.maker/attempts").glob("stop-*"))


# -- 5. an executor stopped with TaskStop ---------------------------------------------


def test_an_executor_stopped_with_taskstop_leaves_the_step_ready_for_another(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        claude_home: Path, release: threading.Event) -> None:
    write_plan(project)
    working = threading.Event()
    stopped: list[str] = []

    def stops_the_executor(request: RecordedRequest) -> Reply:
        # TaskStop is a deferred tool: loaded by ToolSearch (the turn before) first.
        if "Tool loaded." not in request.latest_text:
            raise off_script(request, "expected TaskStop loaded")
        stopped.append(agent_id_launched(request))
        return tool("TaskStop", task_id=stopped[0])

    def relaunches_after_the_kill(request: RecordedRequest) -> Reply:
        agent, agent_id, verdict = notified_verdict(request)
        if agent_id != stopped[0] or "The client reports it killed" not in verdict:
            raise off_script(request, f"expected the stopped executor's verdict: {verdict!r}")
        return main_launches_executor()(request)  # as its Next: says

    fake_api.script(MAIN, main_launches_executor(), main_waits(),
                    tool("ToolSearch", query="select:TaskStop", max_results=1),
                    stops_the_executor, Reply.text("Stopped the step's executor."),
                    relaunches_after_the_kill, main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(),
                    blocks_until(release, working, Reply.text("(stopped: never read)")),
                    # the second executor, launched after the first was stopped
                    executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    idle_with(terminal, "you can keep working")
    terminal.wait(working.is_set, "the executor at work", TIMEOUT)

    terminal.submit("stop the step's executor")
    finished(terminal, fake_api, "maker says: step 0")
    release.set()
    fake_api.assert_done()
    main = fake_api.requests_for(MAIN)
    (schema,) = [t["input_schema"] for t in main[3].body["tools"] if t["name"] == "TaskStop"]
    assert "task_id" in schema["properties"]  # loaded by ToolSearch; called as scripted
    (killed,) = main[4].tool_results
    assert f"Successfully stopped task: {stopped[0]}" in killed.text
    # No SubagentStop fired for the stopped executor: maker never saw an answer of it.
    assert verdict_record(claude_home, stopped[0])["outcome"] == "running"
    # Its notification (status killed) got maker's verdict, which says so; the new
    # launch was not refused; the second executor completed the step.
    assert "<status>killed</status>" in main[5].latest_text
    _, _, verdict = notified_verdict(main[5])
    assert verdict.startswith("step 0 (Write hello.txt): the executor returned without an "
                              "accepted handoff, so the step is still in progress. The "
                              "client reports it killed: it handed nothing off")
    assert "Next: launch the maker:step-executor subagent" in verdict
    assert not tool_errors(fake_api, MAIN)
    assert "was launched and runs in the background" in main[6].latest_text
    record = step(project, 0)
    assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
    assert not stop_hook_feedback(fake_api)
