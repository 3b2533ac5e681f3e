"""maker's other flows as people run them: the real Claude Code CLI, interactive, in a
pseudo-terminal, with its defaults (auto permission mode; every subagent in the
background, delivering through SubagentHandback). Keys are typed and the screen is
read; only the model is scripted (tests/harness/background.py).

- a large step: maker's verdict asks for the independent review, the reviewer runs in
  the background too, and its verdict decides the step by the `auto` policy;
- review routing: a hand-back that leaves out a file maker measured is refused; a change
  across two declared boundaries is reviewed; RED findings send the step back to
  implementation and maker's verdict has the main agent launch the executor again;
- the person's `/maker:approve N` and `/maker:reject N <notes>`, typed;
- a step decided by a vote: several executors at once, each in the background;
- `/maker:reset N`;
- a step whose session crashed, taken over with `/maker:step N`.

Each scenario awaits events (the script consumed, files written, text on the screen);
none sleeps for a fixed time.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from pathlib import Path

import pytest

from harness.background import (
    IDLE,
    TIMEOUT,
    finished,
    main_follows_notification,
    notified_verdict,
    verdicts_in,
)
from harness.claude_fixtures import StartInteractive
from harness.plugin import branching_plan, finish_step_0, step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    broken_handoff,
    executor_reads_brief,
    executor_writes,
    handback,
    handoff,
    main_launches_executor,
    main_reports_decision,
    main_waits,
    tool,
)
from maker.executor.state.lifecycle import start_step
from maker.executor.state.schedule import next_steps
from maker.executor.votes.runs import launched_in_background, start_launch
from maker.store.plan_store import PlanStore
from maker_scripted import RecordedRequest, Reply
from maker_scripted.replies import ToolUseBlock
from maker_scripted.terminal import Terminal
from maker_scripted.turns import Turn, off_script, search, working_dir

pytestmark = pytest.mark.e2e

REVIEWER = "reviewer"
# -- a large step: the independent review ------------------------------------------------

FILES = ["hello.txt", *(f"f{i}.txt" for i in range(1, 6))]  # six: the reviewer's due
LARGE_0 = handoff(0, {"files": FILES}, summary="Wrote hello.txt and five more files.",
                  files=FILES)


def executor_also_writes(relative: str, content: str) -> Turn:
    """A second Write, after the first one's result."""

    def turn(request: RecordedRequest) -> Reply:
        return tool("Write", file_path=str(working_dir(request) / relative), content=content)

    return turn


def main_launches_reviewer(request: RecordedRequest) -> Reply:
    """The executor's notification turn: maker's verdict asks for the review."""
    agent, _, verdict = notified_verdict(request)
    assert agent == "maker:step-executor", verdict
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: "
                              "awaiting-approval."), verdict
    assert "A review is required (6 files changed): launch maker:reviewer" in verdict
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt="Review maker step 0: read `maker context 0` and the handoff. "
                       "Summary: Wrote hello.txt and five more files.")


def test_a_large_step_gets_the_review_in_the_background_which_decides_it(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    review, sentinel = "GREEN: the six files are as described.\nVERDICT: approve", \
        "STEP_COMPLETE"
    write_plan(project)  # policy auto: a large step is the reviewer's to decide
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_launches_reviewer,
                    main_waits(), main_follows_notification())
    # six files written: maker measures them (the claim alone would not count)
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    *(executor_also_writes(name, "x\n") for name in FILES[1:]),
                    handback(LARGE_0))
    fake_api.script(REVIEWER, handback(review))
    terminal = interactive()
    terminal.submit("/maker:step 0")

    screen = finished(terminal, fake_api, sentinel)
    fake_api.assert_done()
    mains = fake_api.requests_for(MAIN)
    # The reviewer's launch was told it runs; nothing decided then.
    assert "The reviewer was launched and runs in the background" in mains[3].latest_text
    # The reviewer's notification turn got maker's verdict: the policy decided the step.
    agent, _, verdict = notified_verdict(mains[4])
    assert agent == "maker:reviewer"
    assert verdict.startswith("the review of step 0 is recorded (verdict: approve), and "
                              "step 0 was approved by the reviewer under the `auto` policy")
    assert verdict.endswith(f"end your reply with the line {sentinel}.")
    assert sentinel in screen
    # The reviewer worked as maker's reviewer, with its read-only tools.
    (reviewed,) = fake_api.requests_for(REVIEWER)
    assert "maker-agent: reviewer" in reviewed.system_text
    assert "Write" not in reviewed.tool_names and "SubagentHandback" in reviewed.tool_names
    record = step(project, 0)
    assert record.status == "complete"
    assert record.meta["approved_by"] == "policy:auto (reviewer approved)"
    assert (project / "plans/.maker/reviews/step-00.json").is_file()


# -- review routing: the measured files, boundaries, RED findings back to implementation -----

_REVIEW_PROMPT = re.compile(r'launch maker:reviewer with the Agent tool and the prompt "(.*?)"; '
                            r"maker records", re.S)
RED = "RED: greeting.txt is empty; it must say hello too.\nVERDICT: changes-needed"
CLAIMED = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"])
BOTH = handoff(0, {"files": ["hello.txt", "greeting.txt"]}, files=["hello.txt", "greeting.txt"],
               summary="Wrote hello.txt and greeting.txt.")


def main_launches_the_review_it_is_told(request: RecordedRequest) -> Reply:
    """The executor's notification turn: maker's verdict asks for the review, says why,
    and gives the reviewer's prompt."""
    agent, _, verdict = notified_verdict(request)
    assert agent == "maker:step-executor", verdict
    assert "status: awaiting-approval" in verdict, verdict
    assert "A review is required (the change crosses architectural boundaries: " \
           "`hello.txt`, `greeting.txt`)" in verdict, verdict
    prompt = _REVIEW_PROMPT.search(verdict)
    assert prompt is not None, verdict
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt=prompt.group(1))


def main_launches_the_second_review(request: RecordedRequest) -> Reply:
    """After the fix: reviewed again, for both reasons (a fix after RED findings is always
    reviewed again, whatever its size)."""
    _, _, verdict = notified_verdict(request)
    assert "A review is required (the change crosses architectural boundaries: " \
           "`hello.txt`, `greeting.txt`; the reviewer sent it back before: its fix is " \
           "reviewed again)" in verdict, verdict
    prompt = _REVIEW_PROMPT.search(verdict)
    assert prompt is not None, verdict
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt=prompt.group(1))


def main_relaunches_the_executor(request: RecordedRequest) -> Reply:
    """The reviewer's notification turn: RED findings sent the step back, and maker's
    verdict says to launch the executor again."""
    agent, _, verdict = notified_verdict(request)
    assert agent == "maker:reviewer", verdict
    assert "RED findings: step 0 was sent back to implementation with the reviewer's " \
           "findings (review round 1 of 1" in verdict, verdict
    assert 'Next: launch the maker:step-executor subagent' in verdict, verdict
    return tool("Agent", subagent_type="maker:step-executor",
                description="Execute maker step 0", prompt="Execute maker step 0.")


def executor_corrects_the_files(request: RecordedRequest) -> Reply:
    """maker refused the handback: it left out a file maker measured."""
    refusal = request.tool_results[-1].text
    assert "files_changed: leaves out 1 file(s) this step changed" in refusal, refusal
    assert "greeting.txt" in refusal, refusal
    return handback(BOTH)


def executor_fixes_the_finding(request: RecordedRequest) -> Reply:
    """The second executor's brief carries the reviewer's findings."""
    brief = next(r.text for r in request.tool_results if "# Step " in r.text)
    assert "## An earlier attempt was sent back" in brief, brief
    assert "The independent reviewer's findings:" in brief and "greeting.txt is empty" in brief
    return tool("Write", file_path=str(working_dir(request) / "greeting.txt"),
                content="hello\n")


def test_an_under_report_is_refused_and_red_findings_send_the_step_back_in_the_background(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """A step whose change crosses two declared boundaries (a 2-file step): the executor
    claims one file, maker measured two, and the hand-back is refused with the missing
    path; the reviewer's RED findings send the step back to implementation, the main
    agent launches the executor again (told by maker's verdict), its brief carries the
    findings; reviewed again, the step is approved by the `auto` policy's reviewer."""
    store = write_plan(project)
    (store.root / "settings.yaml").write_text("boundaries: [hello.txt, greeting.txt]\n")
    fake_api.script(MAIN, main_launches_executor(), main_waits(),
                    main_launches_the_review_it_is_told, main_waits(),
                    main_relaunches_the_executor, main_waits(),
                    main_launches_the_second_review, main_waits(),
                    main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    executor_also_writes("greeting.txt", ""), handback(CLAIMED),
                    executor_corrects_the_files,
                    executor_reads_brief(), executor_fixes_the_finding, handback(BOTH))
    shown: list[Terminal] = []

    def red_once_main_waits(request: RecordedRequest) -> Reply:
        """The RED verdict once the main agent's turn that launched the reviewer is over
        (else maker's Stop hook, seeing the step back in progress, asks for the executor
        before the reviewer's notification does: both are right, one order is scripted)."""
        terminal = shown[0]
        terminal.wait(lambda: "reviewer runs in the background" in terminal.text()
                      and IDLE not in terminal.text(), "the main agent idle, waiting",
                      TIMEOUT)
        return handback(RED)

    fake_api.script(REVIEWER, red_once_main_waits,
                    handback("GREEN: fixed.\nVERDICT: approve"))
    terminal = interactive()
    terminal.submit("/maker:step 0")

    shown.append(terminal)

    screen = finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    first, second = fake_api.requests_for(REVIEWER)
    assert "Why a review is required: the change crosses architectural boundaries: " \
           "`hello.txt`, `greeting.txt` (2 file(s) changed, measured by maker)" in \
           first.all_text  # told why
    assert "Why a review is required: the change crosses architectural boundaries: " \
           "`hello.txt`, `greeting.txt`; the reviewer sent it back before: its fix is " \
           "reviewed again (2 file(s) changed, measured by maker)" in second.all_text
    record = step(project, 0)
    assert record.status == "complete", screen
    assert record.meta["approved_by"] == "policy:auto (reviewer approved)"
    assert record.meta["review_rounds"] == 1
    assert store.read_handoff(0)["files_measured"] == ["greeting.txt", "hello.txt"]
    assert (project / "greeting.txt").read_text() == "hello\n"


# -- the person's /maker:approve and /maker:reject ---------------------------------------

GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                 files=["hello.txt"])
NOTES = "Say hello in French: \"salut\", not `rm -rf` $(anything) 'here'"


def main_tells_how_to_decide(request: RecordedRequest) -> Reply:
    """The notification's turn when the step awaits approval: the person decides by
    typing (the question is not asked here)."""
    _, _, verdict = notified_verdict(request)
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: "
                              "awaiting-approval."), verdict
    return Reply.text("Step 0 is done and waits for your approval: type `/maker:approve 0`, "
                      "or `/maker:reject 0 <what to change>`.\n\nSTEP_AWAITING_APPROVAL")


def step_0_awaiting_approval(interactive: StartInteractive, api: RecordingAPI,
                             project: Path) -> Terminal:
    """/maker:step 0 under the `never` policy, run in the background to its accepted
    handoff; returned once the main agent has said it awaits approval, and is idle."""
    write_plan(project, policy="never")
    api.script(MAIN, main_launches_executor(), main_waits(), main_tells_how_to_decide)
    api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
               handback(GOOD_0))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    finished(terminal, api, "STEP_AWAITING_APPROVAL")
    assert step(project, 0).status == "awaiting-approval"
    return terminal


def test_the_person_approves_a_step_by_typing_the_command(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    terminal = step_0_awaiting_approval(interactive, fake_api, project)

    fake_api.script(MAIN, main_reports_decision())
    terminal.submit("/maker:approve 0")

    screen = finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "complete"
    assert record.meta["approved_by"] == "user (typed /maker:approve)"
    told = fake_api.requests_for(MAIN)[-1].latest_text
    assert "maker: the user approved step 0 (Write hello.txt); it is complete." in told
    assert "Approved step 0 (Write hello.txt); it is complete." in screen


def main_relaunches_after_rejection(request: RecordedRequest) -> Reply:
    """/maker:reject with notes: maker started the step again, and says to launch."""
    if "maker: the user sent step 0 back with the notes" not in request.all_text or \
            "STARTED: step 0 (Write hello.txt) started again (revision)" not in \
            request.all_text:
        raise off_script(request, "expected maker's note that step 0 runs again")
    return tool("Agent", subagent_type="maker:step-executor",
                description="Execute maker step 0", prompt="Execute maker step 0.")


def test_the_person_sends_a_step_back_with_notes_and_it_runs_again(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """Seed 004's revision loop (docs/architecture.md#the-seeds): the person's rejection
    with notes goes back through
    implement, verify and handoff in the same flow; nobody starts the step by hand."""
    terminal = step_0_awaiting_approval(interactive, fake_api, project)

    # The step runs again, and the person's notes reach the new executor's brief.
    def reads_the_notes_then_writes(request: RecordedRequest) -> Reply:
        brief = next(r.text for r in request.tool_results if "# Step " in r.text)
        assert "## An earlier attempt was sent back" in brief
        assert f"- {NOTES}" in brief
        return executor_writes("hello.txt", "salut\n")(request)

    fake_api.script(MAIN, main_relaunches_after_rejection, main_waits(),
                    main_tells_how_to_decide)
    fake_api.script(EXECUTOR, executor_reads_brief(), reads_the_notes_then_writes,
                    handback(GOOD_0))
    terminal.submit(f"/maker:reject 0 {NOTES}")

    finished(terminal, fake_api, "STEP_AWAITING_APPROVAL")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "awaiting-approval"
    assert record.meta["revision_notes"] == [NOTES]  # the person's words, verbatim
    assert record.meta["rejected_by"] == "user (typed /maker:reject)"
    assert list((project / "plans/handoffs/reset").glob("00-*"))  # the first one, kept
    assert (project / "hello.txt").read_text() == "salut\n"
    told = fake_api.requests_for(MAIN)[-3].all_text
    assert f"sent step 0 back with the notes {NOTES!r}; it runs again now" in told


def test_a_rejection_without_notes_stops_the_step(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    terminal = step_0_awaiting_approval(interactive, fake_api, project)

    fake_api.script(MAIN, main_reports_decision())
    terminal.submit("/maker:reject 0")

    screen = finished(terminal, fake_api, "STEP_REJECTED")
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "pending"
    assert record.meta["rejected_by"] == "user (typed /maker:reject)"
    assert "Rejected step 0; it is back to pending" in screen


# -- a step decided by a vote --------------------------------------------------------------

_LAUNCH = re.compile(r"launch (\d+) maker:step-executor subagents? at once")
_LAUNCHED = re.compile(r"maker: The step executor for step 0 was launched and runs in the "
                       r"background \(agent ([\w-]+)\)")
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")


def launches(n: int) -> Reply:
    """n executors for step 0 at once: n Agent calls in one message."""
    return Reply.of(*[ToolUseBlock("Agent", {
        "subagent_type": "maker:step-executor", "description": "Execute maker step 0",
        "prompt": "Execute maker step 0."}) for _ in range(n)])


def chose(n: int, reason: str) -> str:
    return handoff(0, {"next_step": n, "reason": reason}, summary=f"Step {n} is next.")


class VotingMain:
    """The main agent on a voting step in the background. It launches as many executors
    at once as maker says; after launching, it ends its turn to wait; in a turn that
    notifications start (one, or a batch; or queued behind a launch), it follows the
    newest of maker's verdicts: launch what it says to, wait, or end with the line it
    names. It queues its own next turn while an executor it launched has had no
    verdict."""

    def __init__(self, api: RecordingAPI) -> None:
        self.api = api
        self.launched: list[str] = []
        self.reported: list[tuple[str, str]] = []  # (agent id, maker's verdict)
        self.batches: list[int] = []  # executors launched per message

    def __call__(self, request: RecordedRequest) -> Reply:
        text = request.latest_text
        just_launched = _LAUNCHED.findall(text)
        self.launched += just_launched
        said = [(agent_id, verdict) for agent, agent_id, verdict in verdicts_in(request)
                if agent == "maker:step-executor"]
        self.reported += said
        reply = self._turn(text, bool(just_launched), said[-1][1] if said else "")
        if reply.tool_calls:
            self.batches.append(len(reply.tool_calls))
        if reply.tool_calls or set(self.launched) - {a for a, _ in self.reported}:
            self.api.script(MAIN, self)
        return reply

    @staticmethod
    def _turn(text: str, just_launched: bool, newest: str) -> Reply:
        if "STARTED: step 0" in text and not just_launched:
            match = _LAUNCH.search(text)
            assert match, text[-800:]
            return launches(int(match.group(1)))
        if just_launched or not newest:
            return Reply.text("The executors run in the background; maker reports.")
        more = _LAUNCH.search(newest.split("Next: ", 1)[-1])
        if "still in progress" in newest and more:
            return launches(int(more.group(1)))
        end = _END_WITH.search(newest)
        if end:
            return Reply.text(f"maker says: {newest}\n\n{end.group(1)}")
        return Reply.text("maker waits for the other executors.")


def voting_executors(answers: list[str]) -> list[Turn]:
    """Each executor reads its brief, then hands back the next of ``answers``: they run
    at once, so their requests interleave; each is answered by what it asks."""
    queue, lock = deque(answers), threading.Lock()

    def turn(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            assert "Execute maker step 0." in request.last_user_text
            return tool("Bash", command="maker context 0", description="Read my brief")
        assert "# Step 0: Decide" in request.tool_results[-1].text
        with lock:
            return handback(queue.popleft())

    return [turn] * (2 * len(answers))


def test_a_step_decided_by_a_vote_of_executors_in_the_background(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, branching_plan(votes=2))
    main = VotingMain(fake_api)
    fake_api.script(MAIN, main)
    fake_api.script(EXECUTOR, *voting_executors([
        # Two at once: they disagree (1 to 1); two more, both for docs: 3 to 1.
        chose(2, "docs are missing"), chose(1, "tests are missing"),
        chose(2, "no README"), chose(2, "docs/ is empty")]))
    terminal = interactive()
    terminal.submit("/maker:step 0")

    screen = finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    assert main.batches == [2, 2]
    assert sorted(a for a, _ in main.reported) == sorted(main.launched)
    assert len(set(main.launched)) == 4
    decided = [v for _, v in main.reported if ", decided by a vote (the answer " in v]
    assert decided and all("handoff accepted; status: complete" in v for v in decided)
    assert all("led by 2; votes: 3 for" in v and "4 executors, 0 flagged" in v
               for v in decided)
    assert "STEP_COMPLETE" in screen
    store = PlanStore(project / "plans")
    vote = store.read_handoff(0)["vote"]
    assert (vote["k"], vote["samples"], vote["flagged"], vote["margin"]) == (2, 4, 0, 2)
    assert [t["votes"] for t in vote["tally"]] == [3, 1]
    assert step(project, 0).status == "complete"
    assert [r.number for r in next_steps(store.load(), store)] == [2]


# -- /maker:reset ---------------------------------------------------------------------------

_RESET = re.compile(r"^(RESET|REFUSED): (.*)$", re.M)


def main_reports_reset(request: RecordedRequest) -> Reply:
    """/maker:reset's only turn: what its `maker step reset-request` line printed."""
    match = search(request, _RESET, "maker's RESET or REFUSED line")
    said = f"maker: {match.group(2)}"
    if match.group(1) == "RESET":
        said += " /maker:step 0 runs it again."
    return Reply.text(said)


def refused_handback(attempt: int) -> Turn:
    """A broken handoff again, after reading the gate's refusal of the last one."""

    def turn(request: RecordedRequest) -> Reply:
        refused = request.tool_results[-1]
        assert refused.is_error and f"(attempt {attempt} of 3)" in refused.text
        return handback(broken_handoff(0))

    return turn


def test_a_step_that_failed_in_the_background_is_reset_by_the_person(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), handback(broken_handoff(0)),
                    refused_handback(1), refused_handback(2))
    terminal = interactive()
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "STEP_FAILED")
    _, _, verdict = notified_verdict(fake_api.requests_for(MAIN)[2])
    assert verdict.startswith("step 0 (Write hello.txt) FAILED: maker rejected its handoff "
                              "3 times.")
    assert step(project, 0).status == "failed"

    fake_api.script(MAIN, main_reports_reset)
    terminal.submit("/maker:reset 0")

    screen = finished(terminal, fake_api, "/maker:step 0 runs it again.")
    fake_api.assert_done()
    assert "maker: step 0 was failed, now pending." in screen
    record = step(project, 0)
    assert record.status == "pending" and record.meta["resets"] == 1
    assert "reasons" not in record.meta
    assert not (project / "plans/.maker/active.json").exists()
    refused = list((project / "plans/.maker/refused").glob("step-00-*"))
    assert len(refused) == 3  # every refused answer is kept


def test_a_finished_step_is_reset_by_the_person_and_its_handoff_kept(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    store = write_plan(project)
    finish_step_0(store)
    assert step(project, 0).status == "complete"
    fake_api.script(MAIN, main_reports_reset)
    terminal = interactive()

    terminal.submit("/maker:reset 0")

    screen = finished(terminal, fake_api, "/maker:step 0 runs it again.")
    fake_api.assert_done()
    said = fake_api.requests_for(MAIN)[0].last_user_text
    kept = re.search(r"RESET: step 0 was complete, now pending; its handoff was kept at "
                     r"(\S+)\.$", said, re.M)
    assert kept, said
    assert Path(kept.group(1)).is_file()
    assert not store.handoff_path(0).exists()
    assert "maker: step 0 was complete, now pending; its handoff was kept at" in screen
    assert step(project, 0).status == "pending"


# -- a step whose session crashed, taken over --------------------------------------------------


def test_a_step_whose_session_crashed_is_taken_over_with_maker_step(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    store = write_plan(project)
    start_step(store, 0, session_id="dead-session")
    # The crashed session had launched an executor in the background; it never returned.
    assert start_launch(store, "toolu_dead", "dead-session", "dead-prompt") is None
    assert launched_in_background(store, "toolu_dead", "agent-dead") == 0
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    handback(GOOD_0))
    terminal = interactive()

    terminal.submit("/maker:step 0")

    screen = finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()
    mains = fake_api.requests_for(MAIN)
    started = search(mains[0], re.compile(r"^STARTED: .*$", re.M), "the STARTED line")
    assert started.group(0) == ("STARTED: step 0 (Write hello.txt) taken over (the user "
                                "asked for step 0 here; session dead-session had it).")
    # Its launch was not refused for the dead session's executor; it ran in the background.
    launch = mains[1].tool_results[-1]
    assert not launch.is_error, launch.text
    assert "The step executor for step 0 was launched and runs in the background" \
        in mains[1].latest_text
    _, _, verdict = notified_verdict(mains[2])
    assert verdict.startswith("step 0 (Write hello.txt): handoff accepted; status: complete.")
    assert "Stop hook reported a problem" not in screen  # no turn was held
    assert not list((project / "plans/.maker/attempts").glob("stop-*"))
    record = step(project, 0)
    assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
    assert (project / "hello.txt").read_text() == "hello\n"
    assert not (project / "plans/.maker/active.json").exists()
