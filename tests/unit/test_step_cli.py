"""``maker step|status|next|context|handoff`` through click's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.step_plans import (
    branching,
    complete,
    handoff,
    linear,
)
from maker.cli.main import cli
from maker.executor.state.lifecycle import set_status, start_step
from maker.store.plan_store import PlanStore

pytestmark = pytest.mark.usefixtures("project")


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def _fresh(project: Path) -> PlanStore:
    return linear(project, 3)


def _one_running(project: Path) -> PlanStore:
    store = linear(project, 3)
    start_step(store, 1)
    return store


def _one_failed(project: Path) -> PlanStore:
    store = linear(project, 3)
    start_step(store, 1)
    run("step", "fail", "1", "--reason", "the build is broken")
    return store


def _branch_taken(project: Path) -> PlanStore:
    store = branching(project)
    complete(store, 1)
    complete(store, 2, {"next_step": 4, "reason": "tests exist"})
    return store


Setup = Callable[[Path], PlanStore]

# (setup, args, exit code, what stdout holds, what stderr holds)
TABLE: list[tuple[str, Setup, list[str], int, list[str], list[str]]] = [
    ("start next", _fresh, ["step", "start"], 0, ["# Step 1", "Step number 1"], []),
    ("start exact", _fresh, ["step", "start", "1"], 0, ["Step number 1"], []),
    ("start unmet", _fresh, ["step", "start", "3"], 1, [],
     ["step 3 depends on steps that are not complete: step 2 (pending)", "--force"]),
    ("start forced", _fresh, ["step", "start", "3", "--force"], 0, ["Step number 3"],
     ["started with --force"]),
    ("start other running", _one_running, ["step", "start", "2", "--force"], 1, [],
     ["step 1 (Step number 1) is already in progress"]),
    ("start same again", _one_running, ["step", "start", "1"], 0, ["Step number 1"],
     ["already in progress; its brief again"]),
    ("start unknown", _fresh, ["step", "start", "9"], 1, [], ["no step 9"]),
    ("start not a number", _fresh, ["step", "start", "two"], 2, [], ["not a valid integer"]),
    ("start failed", _one_failed, ["step", "start", "1"], 1, [],
     ["cannot go from failed to in-progress", "maker step reset 1"]),
    ("reset", _one_failed, ["step", "reset", "1"], 0, ["step 1: failed -> pending"], []),
    ("reset no number", _fresh, ["step", "reset"], 2, [], ["Missing argument"]),
    ("fail running", _one_running, ["step", "fail", "1", "--reason", "a", "--reason", "b"], 0,
     ["step 1: failed (a; b)"], []),
    ("fail pending", _fresh, ["step", "fail", "2", "--reason", "x"], 1, [],
     ["from pending to failed"]),
    ("fail without reason", _one_running, ["step", "fail", "1"], 2, [], ["--reason"]),
    ("status", _fresh, ["status"], 0,
     ["Plan: Build the thing", "step  title", "1     Step number 1  pending", "Next: step 1"],
     []),
    ("status failed", _one_failed, ["status"], 0,
     ["Failed: step 1 (Step number 1): the build is broken", "No step is ready"], []),
    ("status skipped", _branch_taken, ["status"], 0,
     ["Write the missing tests  skipped", "Next: step 4 (Refactor)"], []),
    ("next", _fresh, ["next"], 0, ["step 1: Step number 1"], []),
    ("next follows the branch", _branch_taken, ["next"], 0, ["step 4: Refactor"], []),
    ("next while running", _one_running, ["next"], 0, ["step 1 (Step number 1) is in progress"],
     []),
    ("context", _fresh, ["context", "2"], 0, ["Step number 2"], []),
    ("context default", _one_running, ["context"], 0, ["Step number 1"], []),
    ("context unknown", _fresh, ["context", "7"], 1, [], ["no step 7"]),
]


@pytest.mark.parametrize(("name", "setup", "args", "code", "out", "err"), TABLE,
                         ids=[row[0] for row in TABLE])
def test_table(project: Path, name: str, setup: Setup, args: list[str],
               code: int, out: list[str], err: list[str]) -> None:
    setup(project)
    result = run(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    for text in out:
        assert text in result.stdout, result.stdout
    for text in err:
        assert text in result.stderr, result.stderr
    assert "Traceback" not in result.output


def test_context_does_not_start_the_step(project: Path) -> None:
    store = linear(project, 2)
    assert run("context", "1").exit_code == 0
    assert store.load().get(1).status == "pending"
    assert store.read_active() is None


def test_start_records_the_session(project: Path, monkeypatch: pytest.MonkeyPatch
                                   ) -> None:
    store = linear(project, 2)
    monkeypatch.setenv("MAKER_SESSION_ID", "sess-9")
    assert run("step", "start").exit_code == 0
    assert store.load().get(1).meta["started_by"] == "sess-9"


def test_no_plan(project: Path) -> None:
    for args in (["status"], ["next"], ["step", "start"], ["context", "1"]):
        result = run(*args)
        assert result.exit_code == 1, args
        assert "no plan in" in result.stderr and "Traceback" not in result.output


def test_plans_dir_option(tmp_path: Path) -> None:
    store = linear(tmp_path / "elsewhere", 1)
    result = run("status", "--plans-dir", str(store.root))
    assert result.exit_code == 0 and "Step number 1" in result.stdout


# -- handoff check / accept --------------------------------------------------------------


def test_handoff_flow_through_a_branch(project: Path) -> None:
    branching(project)
    assert run("step", "start").exit_code == 0
    result = run("handoff", "accept", "-", input=handoff(1))
    assert result.exit_code == 0, result.stderr
    assert "step 1: complete" in result.stdout and "Next: step 2" in result.stdout
    assert run("step", "start").exit_code == 0
    path = project / "h2.yaml"
    path.write_text(handoff(2, output={"next_step": 4, "reason": "tests exist"}),
                    encoding="utf-8")
    check = run("handoff", "check", str(path))
    assert check.exit_code == 0 and "handoff for step 2 is valid (complete)" in check.stdout
    result = run("handoff", "accept", str(path), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["status"] == "complete" and data["next"] == [{"step": 4, "title": "Refactor"}]
    nxt = json.loads(run("next", "--json").stdout)
    assert nxt["next"] == [{"step": 4, "title": "Refactor"}] and not nxt["done"]
    status = json.loads(run("status", "--json").stdout)
    assert {s["step"]: s["status"] for s in status["steps"]} == {
        1: "complete", 2: "complete", 3: "skipped", 4: "pending", 5: "pending"}


def test_rejected_handoff_lists_every_problem_on_stderr(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1)
    bad = "step: 2\nstatus: done\noutput: [1]\n"
    for command in ("check", "accept"):
        result = run("handoff", command, "-", input=bad)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert "4 handoff problems" in result.stderr
        for field in ("- step:", "- status:", "- output:", "- summary:"):
            assert field in result.stderr
        assert "Traceback" not in result.output
    assert store.load().get(1).status == "in-progress"


def test_check_json(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1)
    result = run("handoff", "check", "-", "--json", input="just prose, sorry")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["valid"] is False and data["problems"][0]["field"] == "handoff"
    ok = json.loads(run("handoff", "check", "-", "--json", input=handoff(1)).stdout)
    assert ok == {"valid": True, "step": 1, "problems": []}


@pytest.mark.parametrize(("args", "code", "err"), [
    (["handoff", "check", "missing.yaml"], 2, "cannot read missing.yaml"),
    (["handoff", "accept"], 2, "Missing argument"),
    (["handoff", "check", "-"], 1, "no handoff YAML found"),
])
def test_handoff_usage(project: Path, args: list[str], code: int,
                       err: str) -> None:
    store = linear(project, 1)
    start_step(store, 1)
    result = run(*args, input="")
    assert result.exit_code == code and err in result.stderr
    assert "Traceback" not in result.output


def test_json_outputs(project: Path) -> None:
    linear(project, 2)
    started = json.loads(run("step", "start", "--json").stdout)
    assert started["step"] == 1 and started["brief"] and started["restarted"] is False
    failed = json.loads(run("step", "fail", "1", "--reason", "x", "--json").stdout)
    assert failed == {"step": 1, "status": "failed", "reasons": ["x"]}
    reset = json.loads(run("step", "reset", "1", "--json").stdout)
    assert reset["previous_status"] == "failed" and reset["archived_handoff"] is None
    status = json.loads(run("status", "--json").stdout)
    assert status["next"] == [{"step": 1, "title": "Step number 1"}]


# -- the default step -----------------------------------------------------------------------


def _awaiting_and_running(project: Path) -> PlanStore:
    """Step 1 done and awaiting approval while step 2 is in progress (a forced start)."""
    store = linear(project, 3, policy="never")
    start_step(store, 1)
    run("handoff", "accept", "-", input=handoff(1))
    set_status(store, 2, "in-progress")
    return store


@pytest.mark.parametrize(("setup", "step"), [
    (_fresh, 1), (_one_running, 1), (_branch_taken, 4), (_awaiting_and_running, 2),
], ids=["fresh", "running", "branch", "awaiting-and-running"])
def test_context_and_start_mean_the_same_step_when_none_is_named(
        project: Path, setup: Setup, step: int) -> None:
    """`maker context` and `maker step start` with no number: the step in progress, else
    the first ready one (one rule, in ``maker.executor.state.lifecycle.default_step``)."""
    setup(project)
    context = run("context")
    assert context.exit_code == 0, context.output
    assert context.output.startswith(f"# Step {step}:")
    started = run("step", "start")
    assert started.exit_code == 0, started.output
    assert f"# Step {step}:" in started.output


def test_with_nothing_ready_context_and_start_say_the_same(project: Path) -> None:
    store = linear(project, 1)
    complete(store, 1)
    context, started = run("context"), run("step", "start")
    assert context.exit_code == started.exit_code == 1
    assert context.stderr == started.stderr and "step" in context.stderr
