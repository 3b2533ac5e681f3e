"""Seed 004's protocol (docs/architecture.md#the-seeds) in `maker run` (orient and the
deviation gate; the
edge-case sweep), end to end: the real
claude-agent-sdk and bundled Claude Code CLI against the scripted Messages API. The
session records a major deviation before any edit; `maker run` stops for a person (exit 4)
and spends nothing more until one decides; with STEP_AUTOAPPROVE=1 in the run's own
environment (a person's setting) the revised step is approved and the session goes on,
and the final approval is still the policy's a person set."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.maker_run import (
    EXECUTOR,
    MAKER,
    oriented_then,
    run_env,
    run_maker,
    write_hello,
    writes_hello,
)
from harness.plugin import step, write_plan
from maker.executor.protocol.orient import decide_deviation
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e

MAJOR = ("maker orient 0 major --what 'the project greets in French now' "
         "--revised 'Write salut to hello.txt'")


def orients_major(request: RecordedRequest) -> Reply:
    assert "## Orient first" in request.last_user_text  # the brief says how
    return Reply.tool("Bash", {"command": MAJOR, "description": "Record my orientation"})


def tries_to_write(request: RecordedRequest) -> Reply:
    assert "deviates from the plan (major), recorded" in request.tool_results[-1].text
    return write_hello(request)


def stops(request: RecordedRequest) -> Reply:
    (refused,) = request.tool_results
    assert refused.is_error and "awaits a person's decision" in refused.text
    return Reply.text("DEVIATION")


def test_a_major_deviation_stops_the_run_for_a_person(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    store = write_plan(project)
    fake_api.script(EXECUTOR, orients_major, tries_to_write, stops)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 4, run.stdout[-1500:] + run.stderr[-1500:]
    assert "step 0 (Write hello.txt) deviates from the plan: the project greets in " \
           "French now" in run.stdout + run.stderr
    assert "maker step approve 0" in run.stdout + run.stderr
    fake_api.assert_done()
    assert not (project / "hello.txt").exists()
    assert step(project, 0).meta["deviation"]["status"] == "pending"
    calls = len(fake_api.requests_for(EXECUTOR))

    # Until a person decides, `maker run` stops again at once and spends nothing.
    again = run_maker(fake_api, project, claude_home, "--approve", "auto")
    assert again.returncode == 4 and len(fake_api.requests_for(EXECUTOR)) == calls

    # A person approves the revised step; `maker run` goes on with it.
    decide_deviation(PlanStore(project / "plans"), 0, True, "person (terminal)")

    def revised(request: RecordedRequest) -> Reply:
        assert "Write salut to hello.txt" in request.last_user_text
        assert "orientation is recorded" in request.last_user_text
        return Reply.tool("Write", {"file_path": str(project / "hello.txt"),
                                    "content": "salut\n"})

    fake_api.script(EXECUTOR, revised,
                    Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
                    Reply.text(handoff(1, {"ok": True})))
    done = run_maker(fake_api, project, claude_home, "--approve", "auto")
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    fake_api.assert_done()
    assert (project / "hello.txt").read_text() == "salut\n"
    assert step(project, 0).meta["deviation"]["decided_by"] == "person (terminal)"
    assert store.load().get(0).status == "complete"


def test_step_autoapprove_passes_the_deviation_gate_only(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")

    def goes_on(request: RecordedRequest) -> Reply:
        assert "STEP_AUTOAPPROVE=1 (set by a person for this run) approved the revised " \
               "step 0" in request.last_user_text
        return Reply.tool("Write", {"file_path": str(project / "hello.txt"),
                                    "content": "salut\n"})

    fake_api.script(EXECUTOR, orients_major, Reply.text("DEVIATION"), goes_on,
                    Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])))
    run = run_maker(fake_api, project, claude_home, "--approve", "never",
                    extra={"STEP_AUTOAPPROVE": "1"})

    # The revision was approved by the variable; the step itself waits for a person.
    assert run.returncode == 4, run.stdout[-1500:] + run.stderr[-1500:]
    assert "awaits approval" in run.stdout + run.stderr
    fake_api.assert_done()
    record = step(project, 0)
    assert record.status == "awaiting-approval"
    assert record.meta["deviation"]["decided_by"] == "STEP_AUTOAPPROVE=1 (a person's setting)"
    assert (project / "hello.txt").read_text() == "salut\n"


def test_the_sweep_reaches_the_later_steps_brief_and_proposals_wait(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """The sweep in `maker run`: a handoff that never swept goes back with the fix; the
    edge case step 0 found is in step 1's own section and brief; its proposal changes
    nothing and waits for a person."""
    import yaml

    from maker.executor.protocol.sweep import open_proposals

    swept = yaml.safe_dump({**yaml.safe_load(handoff(0, {"files": ["hello.txt"]},
                                                     files=["hello.txt"])),
                            "edge_cases": [{"step": 1, "note": "a missing final newline"}],
                            "proposals": ["Also write salut.txt"],
                            "sweep": {"considered": ["a missing final newline"],
                                      "found": ["a missing final newline"]}},
                           sort_keys=False)
    unswept = handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"], sweep=None)

    def sweeps_when_told(request: RecordedRequest) -> Reply:
        assert "sweep: is missing" in request.last_user_text, request.last_user_text[-800:]
        return Reply.text(swept)

    def step_1_sees_it(request: RecordedRequest) -> Reply:
        assert "## Edge cases (earlier steps' sweeps found these: handle them)" in \
            request.last_user_text
        assert "(from step 0) a missing final newline" in request.last_user_text
        return Reply.text(handoff(1, {"ok": True}))

    write_plan(project)
    fake_api.script(EXECUTOR, writes_hello, oriented_then(write_hello), Reply.text(unswept),
                    sweeps_when_told, step_1_sees_it)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    shown = subprocess.run([*MAKER, "status"], cwd=project, capture_output=True, text=True,
                           check=True).stdout
    assert "sweep: 1 case(s) considered; found: a missing final newline; annotated step 1" \
        in " ".join(shown.split()), shown
    assert PlanStore(project / "plans").read_handoff(0)["sweep"]["found"] == [
        "a missing final newline"]
    fake_api.assert_done()
    store = PlanStore(project / "plans")
    assert [p["text"] for p in open_proposals(store)] == ["Also write salut.txt"]
    assert not (project / "salut.txt").exists()


def test_a_plan_in_docs_plans_verifies_and_works_at_the_project_root(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """Seed 004's own example (MAKER_PLANS_DIR=docs/plans): the project
    root is found apart from the plans folder, so the project's failing tests are run and
    a `complete` answer does not count; the sessions work at the root, not in docs/."""
    from maker_scripted.scenarios import GREETING_TASK, greeting_plan, to_yaml

    (project / "Makefile").write_text("test:\n\texit 1\n")
    done = Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"]))
    fake_api.script("planner", Reply.text(to_yaml(greeting_plan())))
    fake_api.script(EXECUTOR, done, done, done)  # each "fix" answers complete again
    import subprocess

    from maker.verify.detect import ENV_VARS

    env = run_env(fake_api, claude_home, {"MAKER_PLANS_DIR": "docs/plans"})
    for var in ENV_VARS.values():  # (no check set or switched off: maker detects them)
        env.pop(var, None)
    run = subprocess.run([*MAKER, "run", GREETING_TASK, "--approve", "auto"], cwd=project,
                         env=env, capture_output=True, text=True, timeout=180, check=False)

    assert run.returncode == 1, run.stdout[-1500:] + run.stderr[-1500:]
    assert "`make test` exited with" in run.stdout + run.stderr
    fake_api.assert_done()
    store = PlanStore(project / "docs" / "plans")
    assert store.load().get(0).status == "failed"
    assert (project / "docs/plans/.maker/project").read_text().strip() == "../.."
    assert not (project / "docs" / "hello.txt").exists()  # (nothing worked in docs/)


def test_a_budget_stop_while_planning_keeps_the_plan_it_paid_for(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """With the real SDK, the budget runs out on the planner's call, whose
    answer is a valid plan: the plan is kept, and `maker run` continues it."""
    from maker_scripted.scenarios import GREETING_TASK, greeting_plan, to_yaml

    fake_api.script("planner", Reply.text(to_yaml(greeting_plan())))
    stopped = run_maker(fake_api, project, claude_home, GREETING_TASK, "--approve", "auto",
                        "--max-budget-usd", "0.0001")
    assert stopped.returncode == 3, stopped.stdout[-1500:] + stopped.stderr[-1500:]
    store = PlanStore(project / "plans")
    assert [r.status for r in store.load().steps] == ["pending", "pending"]
    assert fake_api.requests_for(EXECUTOR) == []

    fake_api.script(EXECUTOR, writes_hello, oriented_then(write_hello),
                    Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
                    Reply.text(handoff(1, {"ok": True})))
    done = run_maker(fake_api, project, claude_home, "--approve", "auto")
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    fake_api.assert_done()
    assert [r.status for r in store.load().steps] == ["complete", "complete"]
