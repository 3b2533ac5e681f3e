"""`maker run` end to end: the real CLI command, the real claude-agent-sdk and the real
bundled Claude Code CLI, against the scripted Messages API on 127.0.0.1.

The plan is stored by code (as /maker:plan would); `maker run` continues it: each step in
its own SDK session with the step's tool limits, through the gate, under the approval
policy the person gave the run, every call in the ledger, events as JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.maker_run import (
    EXECUTOR,
    MAKER,
    greeting_run,
    oriented_then,
    orients,
    request_cwd,
    run_env,
    run_maker,
    write_hello,
    writes_hello,
)
from harness.plugin import branching_plan, step, write_plan
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e


def test_maker_run_continues_a_stored_plan_to_the_end(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    from maker_scripted.scenarios import greeting_plan

    plan = greeting_plan()
    plan["plan"][1]["model"] = "claude-haiku-4-5"  # this step's own model
    write_plan(project, plan, policy="never")
    greeting_run(fake_api)

    run = run_maker(fake_api, project, claude_home, "--approve", "auto", "--events", "-",
                    "--model", "claude-sonnet-4-5")

    assert run.returncode == 0, run.stderr[-2000:]
    fake_api.assert_done()
    assert (project / "hello.txt").read_text() == "hello\n"
    for n in (0, 1):
        record = step(project, n)
        assert record.status == "complete"
        assert record.meta["approved_by"] == "policy:auto"
    events = [json.loads(line)["event"] for line in run.stdout.splitlines() if line.strip()]
    assert events[0] == "StepStarted" and events[-1] == "TaskCompleted"
    assert events.count("StepCompleted") == 2
    calls = Ledger(PlanStore(project / "plans")).calls()
    assert [c.kind for c in calls] == ["executor", "executor"]
    assert all(c.cost_usd > 0 for c in calls)
    # The run's --model for step 0, step 1's own model: what the API was asked for.
    asked = [r.model for r in fake_api.requests_for(EXECUTOR)]
    assert set(asked[:2]) == {"claude-sonnet-4-5"} and asked[-1] == "claude-haiku-4-5"
    assert [c.model for c in calls] == ["claude-sonnet-4-5", "claude-haiku-4-5"]


def test_a_tool_outside_the_step_is_denied_and_a_budget_stop_is_continued(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    store = write_plan(project, policy="never")

    def step1_tries_to_write(request: RecordedRequest) -> Reply:
        assert "# Step 1: Check hello.txt" in request.last_user_text
        # Write is not even offered (disallowed_tools): the CLI answers a call to it.
        assert "Write" not in request.tool_names and "Read" in request.tool_names
        return Reply.tool("Write", {"file_path": str(project / "sneaky.txt"),
                                    "content": "x"})

    def step1_tries_bash(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        assert result.is_error and "No such tool available: Write" in result.text
        # Bash stays offered (`maker verify`); the hook refuses anything else, saying why.
        return Reply.tool("Bash", {"command": f"touch {project / 'sneaky.txt'}"})

    def step1_hands_off(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        assert result.is_error and "may use only Read" in result.text  # maker's reason
        return Reply.text(handoff(1, {"ok": True}))

    fake_api.script(
        EXECUTOR,
        # The budget stops the session after its first call: its orient never runs, so
        # the continued run's fresh session orients (its brief asks it to) and writes.
        writes_hello,
        writes_hello,
        oriented_then(write_hello),
        Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
    )
    # A budget smaller than one call: the first step's call spends it; the run stops.
    stopped = run_maker(fake_api, project, claude_home, "--approve", "auto",
                        "--max-budget-usd", "0.0001")
    assert stopped.returncode == 3, stopped.stderr[-2000:]
    assert "stopped by the budget" in stopped.stdout
    assert step(project, 1).status == "pending"

    fake_api.script(EXECUTOR, step1_tries_to_write, step1_tries_bash, step1_hands_off)
    finished = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert finished.returncode == 0, finished.stderr[-2000:]
    fake_api.assert_done()
    assert not (project / "sneaky.txt").exists()
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    assert Ledger(store).total() > 0


def test_a_plan_made_by_maker_plan_in_claude_code_is_run_by_maker_run(
        fake_api: FakeMessagesAPI, run_claude: Any, project: Path,
        claude_home: Path) -> None:
    from harness.plugin import run_maker as run_plugin
    from maker_scripted.scenarios import GREETING_TASK, greeting_plan, plan_flow, to_yaml

    plan_flow(fake_api, to_yaml(greeting_plan()))
    planned = run_plugin(run_claude, f"/maker:plan {GREETING_TASK}")
    assert planned.result is not None and (project / "plans/PLAN.md").is_file()
    fake_api.assert_done()

    greeting_run(fake_api)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    assert (project / "hello.txt").read_text() == "hello\n"


def run_caught_mid_step(api: FakeMessagesAPI, project: Path,
                        home: Path) -> subprocess.Popen[str]:
    """`maker run` started in its own process group, returned once its executor's
    session is waiting on the model (which "thinks" for 20 s)."""
    import threading
    import time

    asked = threading.Event()

    def hangs(request: RecordedRequest) -> Reply:
        asked.set()
        time.sleep(20)
        return Reply.text("too late")

    api.script(EXECUTOR, hangs)
    proc = subprocess.Popen([*MAKER, "run", "--approve", "auto"], cwd=project,
                            env=run_env(api, home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    if not asked.wait(60):
        os.killpg(proc.pid, 9)
        proc.wait(30)
        raise AssertionError("the executor's session never reached the model")
    return proc


def test_a_run_killed_mid_step_is_finished_by_the_next_run(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    import signal

    write_plan(project, policy="never")
    proc = run_caught_mid_step(fake_api, project, claude_home)
    os.killpg(proc.pid, signal.SIGKILL)  # maker run and its CLI, as a crash would
    proc.communicate(timeout=30)
    assert step(project, 0).status == "in-progress"

    greeting_run(fake_api)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_stops_cleanly_and_the_next_run_finishes(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path, sig: str) -> None:
    import signal

    store = write_plan(project, policy="never")
    proc = run_caught_mid_step(fake_api, project, claude_home)
    try:
        if sig == "SIGINT":  # Ctrl-C in a terminal: the whole foreground group
            os.killpg(proc.pid, signal.SIGINT)
        else:  # a CI runner cancelling the job: maker run alone
            os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == 130, out[-1500:] + err[-1500:]
    assert "interrupted: step 0 is left in progress; `maker run` continues" in out + err
    assert "Traceback" not in err
    assert step(project, 0).status == "in-progress"
    (call,) = Ledger(store).calls()
    assert call.kind == "executor" and call.step == 0 and "interrupted" in (call.error or "")

    greeting_run(fake_api)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]


FILES = ["hello.txt", "a.txt", "b.txt", "c.txt", "d.txt"]  # five: the reviewer's due


def test_maker_run_plans_the_task_then_a_large_step_gets_the_reviewer(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    from maker_scripted import ToolUseBlock
    from maker_scripted.scenarios import GREETING_TASK, greeting_plan, to_yaml

    def writes_five(request: RecordedRequest) -> Reply:
        root = Path(request_cwd(request))
        return Reply.of(*(ToolUseBlock("Write", {"file_path": str(root / name),
                                                 "content": "hello\n"}) for name in FILES))

    def reviews(request: RecordedRequest) -> Reply:
        assert "Review step 0 of a maker plan: Write hello.txt" in request.last_user_text
        assert "d.txt" in request.last_user_text  # the accepted handoff it judges
        return Reply.text("GREEN: the five files say hello.\nVERDICT: approve")

    fake_api.script("planner", Reply.text(to_yaml(greeting_plan())))
    fake_api.script(EXECUTOR, orients(0), oriented_then(writes_five),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)),
                    Reply.text(handoff(1, {"ok": True})))
    fake_api.script("reviewer", reviews)

    run = run_maker(fake_api, project, claude_home, GREETING_TASK, "--approve", "auto",
                    "--events", "-")

    assert run.returncode == 0, run.stderr[-2000:]
    fake_api.assert_done()
    events = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert [e["event"] for e in events][:2] == ["TaskSubmitted", "PlanCreated"]
    assert events[0]["instruction"] == GREETING_TASK
    assert events[-1]["event"] == "TaskCompleted"
    assert step(project, 0).meta["approved_by"] == "policy:auto (reviewer approved)"
    assert step(project, 1).meta["approved_by"] == "policy:auto"  # small: no review
    calls = Ledger(PlanStore(project / "plans")).calls()
    assert [(c.kind, c.step) for c in calls] == [("planner", None), ("executor", 0),
                                                 ("reviewer", 0), ("executor", 1)]


def test_ask_user_question_in_a_headless_run_is_answered_no_user(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")

    def asks(request: RecordedRequest) -> Reply:
        return Reply.tool("AskUserQuestion", {"questions": [{
            "question": "Which greeting?", "header": "Greeting", "multiSelect": False,
            "options": [{"label": "hello", "description": "plain"},
                        {"label": "hi", "description": "short"}]}]})

    def hands_off_blocked(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        assert "no user is present; decide, or hand off blocked" in result.text
        return Reply.text(handoff(0, {"files": []}, status="blocked",
                                  blockers=["Which greeting: hello or hi?"]))

    fake_api.script(EXECUTOR, asks, hands_off_blocked)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 1, run.stderr[-2000:]
    fake_api.assert_done()
    assert step(project, 0).status == "blocked"
    assert "Which greeting: hello or hi?" in run.stdout + run.stderr


def test_a_branch_a_flagged_answer_and_a_refused_handoff_in_one_run(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    # votes: 1: the branch is answered once (a conditional step votes by default), so
    # the one answer goes through the red flags and the gate's refusal.
    write_plan(project, branching_plan(votes=1), policy="never")

    def refused_then_corrected(request: RecordedRequest) -> Reply:
        said = request.last_user_text
        assert "summary" in said and "missing" in said  # the gate's problems came back
        return Reply.text(handoff(0, {"next_step": 2, "reason": "docs are missing"}))

    fake_api.script(
        EXECUTOR,
        Reply.text("I think we should write docs, probably."),   # flagged: no handoff
        Reply.text("step: 0\nstatus: complete\noutput: {next_step: 2, reason: docs}\n"),
        refused_then_corrected,                                   # no summary: refused
        Reply.text(handoff(2, {"docs": ["README.md"]})),
    )

    run = run_maker(fake_api, project, claude_home, "--approve", "auto", "--events", "-")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    events = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert [e["event"] for e in events].count("StepFlagged") == 1
    assert [step(project, n).status for n in (0, 2)] == ["complete", "complete"]
    assert step(project, 1).status == "pending"  # the branch not taken
    kinds = [c.kind for c in Ledger(PlanStore(project / "plans")).calls()]
    assert kinds.count("flagged") == 1 and len(kinds) == 4


def test_maker_run_vote_3_decides_a_branch_past_disagreement_and_a_flagged_answer(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, branching_plan(), policy="never")

    def chose(n: int, reason: str) -> Reply:
        return Reply.text(handoff(0, {"next_step": n, "reason": reason}))

    fake_api.script(
        EXECUTOR,
        # Three isolated sessions at once: they disagree, and one answers no handoff.
        chose(2, "docs are missing"), chose(1, "tests are missing"),
        Reply.text("Probably docs, I would say."),
        # Three more (the lead needed): all for docs. 4 to 1: docs lead by 3.
        chose(2, "no README"), chose(2, "docs/ is empty"), chose(2, "docs, clearly"),
        # Step 2 reads only: it votes too, three unanimous samples.
        *[Reply.text(handoff(2, {"docs": ["README.md"]}))] * 3,
    )

    run = run_maker(fake_api, project, claude_home, "--vote", "3", "--approve", "auto",
                    "--events", "-")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert "CanUseToolShadowedWarning" not in run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert [e["event"] for e in events].count("StepFlagged") == 1
    assert [step(project, n).status for n in (0, 1, 2)] == ["complete", "pending", "complete"]
    store = PlanStore(project / "plans")
    vote = store.read_handoff(0)["vote"]
    assert (vote["k"], vote["samples"], vote["flagged"], vote["margin"]) == (3, 6, 1, 3)
    assert [t["votes"] for t in vote["tally"]] == [4, 1] and vote["cost_usd"] > 0
    assert store.read_handoff(2)["vote"]["samples"] == 3
    calls = Ledger(store).calls()
    assert [c.kind for c in calls].count("vote") == 6 + 1 + 3 + 1  # samples + records
    assert [c.detail["margin"] for c in calls if c.detail] == [3, 3]


def test_maker_calibrate_samples_a_step_and_asks_the_law(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    from maker.voting import k_min

    write_plan(project, branching_plan(), policy="never")
    fake_api.script(EXECUTOR, *[Reply.text(handoff(0, {"next_step": n, "reason": "seen"}))
                                for n in (2, 2, 1, 2)])
    run = subprocess.run([*MAKER, "calibrate", "0", "--samples", "4", "--steps", "50"],
                         cwd=project, env=run_env(fake_api, claude_home),
                         capture_output=True, text=True, timeout=180, check=False)

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert "4 samples, 0 flagged, 4 voted" in run.stdout
    assert "agreement: 3/4 = 0.75" in run.stdout
    assert f"k = {k_min(50, 0.75, 0.95)}" in run.stdout
    assert step(project, 0).status == "pending"  # calibrating starts nothing
    calls = Ledger(PlanStore(project / "plans")).calls()
    assert [c.kind for c in calls] == ["calibrate"] * 4 and all(c.cost_usd > 0 for c in calls)


def test_a_failing_verification_is_fixed_in_the_fix_loop(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")

    def fixes(request: RecordedRequest) -> Reply:
        assert "test -f hello.txt" in request.last_user_text  # the failure came back
        # ... to the same session, resumed: it still holds the brief and its answer.
        assert "# Step 0: Write hello.txt" in json.dumps(request.messages[0])
        assert "# Step 0:" not in request.last_user_text
        return orients(0)(request)

    fake_api.script(
        EXECUTOR,
        Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),  # not done
        fixes,
        oriented_then(write_hello),
        Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
        Reply.text(handoff(1, {"ok": True})),
    )
    env_extra = {"TEST_CMD": "test -f hello.txt"}
    run = run_maker(fake_api, project, claude_home, "--approve", "auto", extra=env_extra)

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    calls = Ledger(PlanStore(project / "plans")).calls()
    assert [c.kind for c in calls] == ["executor", "fix", "executor"]
    assert calls[0].session_id and calls[1].session_id == calls[0].session_id

