"""The hook entry points, driven with the JSON Claude Code sends (the fields
``tests/e2e/test_claude_code_facts.py`` pins).

Most tests call the shared entry in-process (``run_hook``); the fast paths and the
fail-open guarantees are also checked through ``scripts/hook`` itself, as the client
runs it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.hooks import EXECUTOR, fire, stop_input, subagent_input, tool_input
from harness.step_plans import handoff, linear, make_step, write
from maker.executor.protocol.orient import record_orient
from maker.executor.rules.step_rules import GATE_ATTEMPTS, STOP_REMINDERS
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.planner.planner import DEFAULT_MAX_ATTEMPTS as PLANNER_ATTEMPTS
from maker.store.plan_store import PlanStore
from maker.store.requests import load_request

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "scripts" / "hook"


@pytest.fixture()
def project(plugin_project: Path) -> Path:
    return plugin_project


@pytest.fixture()
def running(project: Path) -> PlanStore:
    """A three-step chain with step 1 complete-able and in progress."""
    store = linear(project, 3)
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")  # (past orient: its executor may edit)
    return store


def one_step_running(project: Path, tools: list[str], n: int = 1,
                     oriented: bool = True) -> PlanStore:
    """A one-step plan whose step may use ``tools``, started by session sess-1 and
    (``oriented``) past orient, so that its executor may edit."""
    store = write(project, [make_step(n, -1)])
    record = store.load().get(n)
    record.spec = dataclasses.replace(record.spec, primary_tools=tools)
    store.save_step(record)
    start_step(store, n, session_id="sess-1")
    if oriented:
        record_orient(store, n, "none")
    return store


# -- SubagentStop: the step executor ------------------------------------------------


def test_valid_handoff_is_accepted(project: Path, running: PlanStore) -> None:
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert out is not None and "decision" not in out
    assert "accepted" in out["systemMessage"]
    assert running.load().get(1).status == "complete"
    assert running.handoff_path(1).exists()
    assert running.read_active() is None


def test_fenced_handoff_with_prose_is_accepted(project: Path, running: PlanStore) -> None:
    text = f"Here is my handoff:\n\n```yaml\n{handoff(1)}```\nThanks!"
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, text))
    assert out is not None and "decision" not in out
    assert running.load().get(1).status == "complete"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (handoff(1, output=["a", "b"]), "output"),                      # list output
        (handoff(1, output={"other": 1}), "result"),                    # missing schema key
        ("I finished the step, everything works.", "YAML"),             # prose, no YAML
        (handoff(2), "step 2"),                                         # wrong step
        (handoff(1, status="done"), "status"),                          # not a status
    ],
    ids=["list-output", "missing-schema-key", "prose", "wrong-step", "bad-status"],
)
def test_bad_handoff_blocks_with_every_problem(project: Path, running: PlanStore, message: str,
                                               expected: str) -> None:
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, message))
    assert out is not None and out["decision"] == "block"
    assert expected in out["reason"]
    assert f"attempt 1 of {GATE_ATTEMPTS}" in out["reason"]
    assert running.load().get(1).status == "in-progress"
    assert not running.handoff_path(1).exists()


def test_bounded_blocking_ends_in_failed(project: Path, running: PlanStore) -> None:
    bad = subagent_input(project, EXECUTOR, "no yaml here, sorry")
    for attempt in range(1, GATE_ATTEMPTS):
        out = fire("subagent-stop", dict(bad, stop_hook_active=attempt > 1))
        assert out is not None and out["decision"] == "block"
    out = fire("subagent-stop", dict(bad, stop_hook_active=True))
    assert out is not None and "decision" not in out
    assert "FAILED" in out["systemMessage"]
    record = running.load().get(1)
    assert record.status == "failed"
    assert any("rejected" in r for r in record.meta["reasons"])
    assert running.read_active() is None
    assert GATE_ATTEMPTS < 8 and STOP_REMINDERS < 8  # well under Claude Code's own cap


def test_other_agents_are_left_alone(project: Path, running: PlanStore) -> None:
    for agent in ("general-purpose", "Explore", "other-plugin:step-executor-ish", ""):
        assert fire("subagent-stop", subagent_input(project, agent, "prose")) is None
    assert running.load().get(1).status == "in-progress"


def test_executor_without_a_running_step_is_not_blocked(project: Path) -> None:
    linear(project, 2)
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert out is not None and "decision" not in out
    assert "no step is in progress" in out["systemMessage"]


def test_final_text_is_read_from_the_transcript_when_absent(project: Path,
                                                           running: PlanStore) -> None:
    transcript = project / "agent.jsonl"
    lines = [{"message": {"role": "user", "content": "go"}},
             {"message": {"role": "assistant",
                          "content": [{"type": "text", "text": handoff(1)}]}}]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    data = subagent_input(project, EXECUTOR, "")
    del data["last_assistant_message"]
    out = fire("subagent-stop", data)
    assert out is not None and "accepted" in out["systemMessage"]


# -- SubagentStop: the planner ---------------------------------------------------------


def plan_yaml(*, dangling: bool = False) -> str:
    steps = [make_step(0, 1), make_step(1, -1, inputs=["step_0_output.result"])]
    data = {"task": "Echoed task", "reasoning": "Two small steps.",
            "plan": [dict(vars(s), depends_on=None) for s in steps]}
    for s in data["plan"]:
        s.pop("depends_on")
    if dangling:
        data["plan"][1]["input_variables"] = ["step_7_output.result"]
    return yaml.safe_dump(data, sort_keys=False)


def test_planner_answer_is_written_with_the_users_exact_task(project: Path) -> None:
    words = 'add "remember me"; it\'s `x` $(y) & z'
    assert fire("user-prompt-submit", {"session_id": "sess-1", "cwd": str(project),
                                       "hook_event_name": "UserPromptSubmit",
                                       "prompt": f"/maker:plan {words}"}) is None
    assert load_request("sess-1", "plan") == words
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml()))
    assert out is not None and "plan written" in out["systemMessage"]
    plan = PlanStore(project / "plans").load()
    assert plan.task == words
    assert [r.number for r in plan.steps] == [0, 1]


def test_planner_answer_is_blocked_with_the_linters_problems(project: Path) -> None:
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml(dangling=True),
                                               agent_id="planner-1"))
    assert out is not None and out["decision"] == "block"
    assert "step_7_output" in out["reason"] and "nothing was written" in out["reason"]
    assert not (project / "plans").exists()  # later hooks stay on their idle fast path
    for _ in range(PLANNER_ATTEMPTS - 2):
        fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml(dangling=True),
                                             agent_id="planner-1"))
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml(dangling=True),
                                               agent_id="planner-1"))
    assert out is not None and "decision" not in out and "no plan was written" in out[
        "systemMessage"]


def test_a_new_plan_archives_the_unfinished_one(project: Path, running: PlanStore) -> None:
    # Not while a step runs: that would strand it.
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml()))
    assert out is not None and "decision" not in out
    assert "valid but was not written: step 1 of the current plan is in progress" in out[
        "systemMessage"]
    assert running.archived() == [] and running.load().task == "Build the thing"
    from maker.executor.state.lifecycle import reset_step

    reset_step(running, 1)
    # Another /maker:plan: another planner.
    out = fire("subagent-stop", subagent_input(project, "maker:planner", plan_yaml()))
    assert out is not None and "plan written" in out["systemMessage"]
    archived = running.archived()
    assert len(archived) == 1 and (archived[0] / "steps").is_dir()


# -- Stop -----------------------------------------------------------------------------


def test_stop_is_blocked_while_a_step_has_no_handoff(project: Path, running: PlanStore) -> None:
    out = fire("stop", stop_input(project))
    assert out is not None and out["decision"] == "block"
    assert "step 1" in out["reason"] and "maker:step-executor" in out["reason"]


def test_stop_blocking_is_bounded_and_records_failed(project: Path, running: PlanStore) -> None:
    """In one chain of blocks the Stop hook blocks ``STOP_REMINDERS`` times, the last with
    the verdict; the next stop is let through."""
    decisions = []
    for i in range(STOP_REMINDERS + 2):
        out = fire("stop", stop_input(project, stop_hook_active=i > 0))
        decisions.append(out.get("decision") if out else None)
        if out is None:
            break
    assert decisions == ["block"] * STOP_REMINDERS + [None]
    assert running.load().get(1).status == "failed"
    assert fire("stop", stop_input(project)) is None  # nothing in progress any more


def test_stop_allows_after_an_accepted_handoff(project: Path, running: PlanStore) -> None:
    fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert fire("stop", stop_input(project)) is None


def test_stop_leaves_another_sessions_step_alone(project: Path, running: PlanStore) -> None:
    assert fire("stop", stop_input(project, session_id="someone-else")) is None
    assert running.load().get(1).status == "in-progress"


def test_stop_leaves_a_step_started_from_a_shell_alone(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1)  # `maker step start 1` in a terminal: no Claude Code session
    assert fire("stop", stop_input(project)) is None
    assert store.load().get(1).status == "in-progress"


# -- PreToolUse -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_in", "decision"),
    [
        ("Read", {"file_path": "x"}, None),
        ("AskUserQuestion", {}, None),
        ("ToolSearch", {"query": "select:WebFetch"}, None),
        ("Write", {"file_path": "x", "content": "y"}, "deny"),
        ("WebFetch", {"url": "http://example.invalid"}, "deny"),
        # maker's own plumbing for the step in progress: allowed outright (no prompt)
        ("Bash", {"command": "maker context 1"}, "allow"),
        # (verify: outright only in default mode, see test_background.py; else asked)
        ("Bash", {"command": "maker verify --step 1"}, None),
        ("Bash", {"command": "maker status"}, "allow"),
        # ... but not another step's, nor anything chained on: asked as the mode says
        ("Bash", {"command": "maker context 0"}, None),
        ("Bash", {"command": "maker verify --step 1 && rm -rf /"}, "deny"),
        ("Bash", {"command": "rm -rf build"}, "deny"),
    ],
)
def test_executor_tools_are_limited_to_the_steps(project: Path, running: PlanStore, tool: str,
                                                 tool_in: dict[str, Any],
                                                 decision: str | None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.hooks.plumbing import maker_bin

    own = maker_bin()  # (the plugin's bin/ on PATH, as the client puts it there)
    monkeypatch.setenv("PATH", f"{own.parent if own else ''}:{os.environ['PATH']}")
    out = fire("pre-tool-use", tool_input(project, tool, **tool_in))
    if decision is None:
        assert out is None
        return
    assert out is not None
    said = out["hookSpecificOutput"]
    assert said["permissionDecision"] == decision
    if decision == "deny":
        assert f"`{tool}`" in said["permissionDecisionReason"]
        assert "Read" in said["permissionDecisionReason"]


def test_verification_outside_default_mode_runs_makers_own_program(
        project: Path, running: PlanStore, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked as the mode says, as typed while a bare `maker` is the plugin's own; pinned
    to it (and still asked) when another `maker` comes first on PATH (a step's planting
    in a project's activated .venv/bin, say)."""
    from maker.hooks.plumbing import maker_bin

    own = maker_bin()
    assert own is not None
    monkeypatch.setenv("PATH", f"{own.parent}:/usr/bin:/bin")
    assert fire("pre-tool-use", tool_input(project, "Bash",
                                           command="maker verify --step 1")) is None
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "maker").write_text("#!/bin/sh\necho planted\n")
    (planted / "maker").chmod(0o755)
    for path in (f"{planted}:{own.parent}:/usr/bin:/bin",
                 f".:{own.parent}:/usr/bin", f"{own.parent}::/usr/bin", f"{own.parent}:"):
        # (a relative or empty entry is the shell's cwd, which a step can `cd` to)
        monkeypatch.setenv("PATH", path)
        out = fire("pre-tool-use", tool_input(project, "Bash", command="maker verify --step 1"))
        assert out is not None, path
        said = out["hookSpecificOutput"]
        assert "permissionDecision" not in said
        assert said["updatedInput"]["command"] == f"/bin/bash {own} verify --step 1"


def test_main_agent_tools_are_not_limited(project: Path, running: PlanStore) -> None:
    data = tool_input(project, "Write")
    del data["agent_type"], data["agent_id"]
    assert fire("pre-tool-use", data) is None


# -- SessionStart, malformed input ------------------------------------------------------


def test_session_start_gives_the_plan_state(project: Path, running: PlanStore) -> None:
    out = fire("session-start", {"session_id": "sess-9", "cwd": str(project),
                                 "hook_event_name": "SessionStart", "source": "resume"})
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "step 1" in text.lower()


@pytest.mark.parametrize("with_plan", [True, False])
def test_session_start_exports_the_session_for_the_bash_tool(tmp_path: Path,
                                                              with_plan: bool) -> None:
    if with_plan:
        linear(tmp_path, 1)
    env_file = tmp_path / "env.sh"
    result = run_script("session-start", {"session_id": "sess-9", "cwd": str(tmp_path),
                                          "hook_event_name": "SessionStart"}, tmp_path,
                        CLAUDE_ENV_FILE=str(env_file))
    assert result.returncode == 0
    assert env_file.read_text() == "export MAKER_SESSION_ID=sess-9\n"


def test_a_tool_input_that_mentions_the_planner_is_still_checked(project: Path,
                                                                running: PlanStore) -> None:
    data = tool_input(project, "Write", file_path="x.md", content="launch maker:planner")
    result = run_script("pre-tool-use", data, project)
    decision = json.loads(result.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"


@pytest.mark.parametrize("raw", ["", "{not json", "[1, 2]", '"text"', '{"cwd": 5}'])
@pytest.mark.parametrize("event", sorted(HANDLERS))
def test_malformed_input_never_blocks(project: Path, running: PlanStore, event: str,
                                      raw: str) -> None:
    out = fire(event, raw)
    assert out is None or "decision" not in out
    if out is not None and "hookSpecificOutput" in out:
        assert out["hookSpecificOutput"].get("permissionDecision") != "deny"


def test_a_broken_plan_file_fails_open_with_a_message(project: Path,
                                                      running: PlanStore) -> None:
    path = running.step_path(1)
    path.write_text("---\nstep: [unclosed\n---\n")
    out = fire("stop", stop_input(project))
    assert out is not None and "decision" not in out
    assert "maker" in out["systemMessage"]


# -- through scripts/hook, as the client runs it ------------------------------------------


def run_script(event: str, data: dict[str, Any] | str, cwd: Path,
               **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, MAKER_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=str(cwd))
    full.update(env)
    raw = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(["sh", "-c", f'"{HOOK}" {event}'], input=raw, text=True, cwd=cwd,
                          env=full, capture_output=True, timeout=60, check=False)


@pytest.mark.parametrize("event", ["stop", "pre-tool-use", "subagent-stop", "session-start",
                                   "user-prompt-submit"])
def test_idle_project_exits_at_once_without_python(tmp_path: Path, event: str) -> None:
    # MAKER_PYTHON points at a program that cannot run: the fast path must not need it.
    result = run_script(event, stop_input(tmp_path, agent_type="Explore", prompt="hello"),
                        tmp_path, MAKER_PYTHON="/nonexistent/python")
    assert result.returncode == 0
    assert result.stdout == ""


def test_a_step_executors_call_where_no_plan_is_found_is_refused(tmp_path: Path) -> None:
    """A project renamed under a running step (its parent in a writable place) leaves the
    hook finding no plan: its executor's limits cannot be known, so its calls are
    refused, never let through unchecked."""
    call = stop_input(tmp_path, hook_event_name="PreToolUse", agent_id="a1",
                      agent_type="maker:step-executor", tool_name="Write",
                      tool_input={"file_path": str(tmp_path / "x.txt"), "content": "x"})
    result = run_script("pre-tool-use", call, tmp_path)
    assert result.returncode == 0
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "no plan is found" in \
        out["permissionDecisionReason"]


def test_script_blocks_a_stop_for_real(project: Path, running: PlanStore) -> None:
    result = run_script("stop", stop_input(project), project)
    assert result.returncode == 0
    assert json.loads(result.stdout)["decision"] == "block"


def test_script_fails_open_when_python_cannot_start(project: Path, running: PlanStore) -> None:
    result = run_script("stop", stop_input(project), project, MAKER_PYTHON="/nonexistent/python")
    assert result.returncode == 0
    assert "could not run" in json.loads(result.stdout)["systemMessage"]


def test_script_passes_malformed_input_through_harmlessly(project: Path,
                                                         running: PlanStore) -> None:
    result = run_script("stop", "{{{{", project)
    assert result.returncode == 0
    assert "malformed" in json.loads(result.stdout)["systemMessage"]


def test_unknown_event_is_a_message_not_a_crash(tmp_path: Path) -> None:
    result = run_script("bogus", "{}", tmp_path)
    assert result.returncode == 0 and "unknown hook event" in result.stdout


def test_write_is_what_a_branching_plan_needs(project: Path) -> None:
    store = write(project, [make_step(0, -2, conditional=True, votes=1), make_step(1, -1),
                            make_step(2, -1)])
    start_step(store, 0)
    out = fire("subagent-stop", subagent_input(
        project, EXECUTOR, handoff(0, output={"next_step": 2, "reason": "r"})))
    assert out is not None and "accepted" in out["systemMessage"]
    from maker.executor.state.schedule import next_steps

    assert [r.number for r in next_steps(store.load(), store)] == [2]


def test_plan_md_shows_the_branch_not_taken_as_skipped(project: Path) -> None:
    store = write(project, [make_step(0, -2, conditional=True, votes=1), make_step(1, -1),
                            make_step(2, -1)])
    start_step(store, 0)
    fire("subagent-stop", subagent_input(
        project, EXECUTOR, handoff(0, output={"next_step": 2, "reason": "r"})))
    text = store.overview_path.read_text(encoding="utf-8")
    assert "| 1 | [Step number 1](steps/01-step-number-1.md) | action | skipped |" in text
    assert "| 2 | [Step number 2](steps/02-step-number-2.md) | action | pending |" in text


@pytest.mark.parametrize(("command", "decision"), [
    ("rg -n parse_plan src", None),
    ("git log --oneline -3", "allow"),  # as maker rewrote it (test_git_programs.py)
    ("rm -rf src", "deny"),
    ("cat a > b", "deny"),
])
def test_the_planners_bash_is_read_only(project: Path, command: str,
                                        decision: str | None) -> None:
    out = fire("pre-tool-use", tool_input(project, "Bash", agent="maker:planner",
                                          command=command))
    assert (out and out["hookSpecificOutput"]["permissionDecision"]) == decision
    if decision == "deny":
        assert out is not None
        assert "the planner only reads" in out["hookSpecificOutput"]["permissionDecisionReason"]
    assert fire("pre-tool-use", tool_input(project, "Read", agent="maker:planner")) is None


def test_a_step_that_may_search_may_run_read_only_bash(project: Path) -> None:
    one_step_running(project, ["Read", "Grep"], n=0)
    allowed = fire("pre-tool-use", tool_input(project, "Bash", command="rg -n TODO src"))
    assert allowed is None
    denied = fire("pre-tool-use", tool_input(project, "Bash", command="rm -rf src"))
    assert denied is not None
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_lost_marker_never_costs_the_executors_handoff(project: Path,
                                                         running: PlanStore) -> None:
    running.active_path.unlink()  # e.g. removed by hand, or by an older maker
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert out is not None and "accepted" in out["systemMessage"]
    assert running.load().get(1).status == "complete"


def test_a_step_file_mid_edit_lets_the_stop_through_but_keeps_the_marker(
        project: Path, running: PlanStore) -> None:
    path = running.step_path(1)
    good = path.read_text()
    path.write_text("---\nstep: [half-saved\n")
    out = fire("stop", stop_input(project))
    assert out is not None and "decision" not in out and "cannot be read" in out[
        "systemMessage"]
    assert running.read_active() is not None
    path.write_text(good)
    assert fire("stop", stop_input(project))["decision"] == "block"  # type: ignore[index]


def test_refused_handoffs_are_kept(project: Path, running: PlanStore) -> None:
    fire("subagent-stop", subagent_input(project, EXECUTOR, "I did it, trust me."))
    (kept,) = (running.state_dir / "refused").iterdir()
    assert kept.read_text() == "I did it, trust me."


@pytest.mark.parametrize(("path", "denied"), [
    ("plans/.maker/evidence/step-01.json", True),
    ("plans/steps/01-step-number-1.md", True),
    ("{root}/plans/handoffs/x.md", True),
    ("src/app.py", False),
])
def test_the_executor_never_writes_into_plans(project: Path, path: str, denied: bool) -> None:
    one_step_running(project, ["Write", "Edit"])
    target = path.format(root=project)
    for tool in ("Write", "Edit"):
        out = fire("pre-tool-use", tool_input(project, tool, file_path=target, content="x"))
        if denied:
            assert out is not None
            reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            assert "maker's own record of the plan" in reason
        else:
            assert out is None


def test_the_reviewers_verdict_is_recorded_and_gates_approval(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.errors import ReviewMissingError as Missing
    from maker.executor.acceptance.approval import approve_step

    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    files = [f"f{i}.py" for i in range(5)]
    fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1, files_changed=files)))
    assert store.load().get(1).status == "awaiting-approval"  # large: waits for review
    with pytest.raises(Missing, match="needs the independent review first"):
        approve_step(store, 1, "user")
    out = fire("subagent-stop", subagent_input(
        project, "maker:reviewer", "- RED: f4.py drops the error.\nGREEN: tests.\n"
        "VERDICT: changes-needed"))
    # RED findings send the step back to implementation, in progress again.
    assert out is not None and "verdict: changes-needed" in out["systemMessage"]
    assert "sent back to implementation" in out["systemMessage"]
    record = store.load().get(1)
    assert record.status == "in-progress"
    assert record.meta["revision_notes"] == ["The independent reviewer's findings:\n"
                                             "RED: f4.py drops the error."]
    assert record.meta["review_rounds"] == 1


@pytest.mark.parametrize(("command", "fragment"), [
    ("maker step approve 1", "does not move the plan's state"),
    ("TEST_CMD=true maker step approve 1", "does not move the plan's state"),
    ("maker handoff accept h.yaml", "does not move the plan's state"),
    ("sed -i s/pending/complete/ plans/steps/01-x.md", "maker's own record"),
    ("cat ./plans/.maker/active.json", "maker's own record"),
    ("echo x > {root}/plans/.maker/evidence/step-01.json", "maker's own record"),
])
def test_the_executor_cannot_move_state_even_with_bash(project: Path, command: str,
                                                       fragment: str) -> None:
    one_step_running(project, ["Bash"])
    out = fire("pre-tool-use", tool_input(project, "Bash",
                                          command=command.format(root=project)))
    assert out is not None and fragment in out["hookSpecificOutput"][
        "permissionDecisionReason"]
    assert fire("pre-tool-use", tool_input(project, "Bash", command="pytest -q")) is None
    assert fire("pre-tool-use", tool_input(project, "Bash", command="ls docs/plans")) is None


@pytest.mark.parametrize("command", [
    'touch "$PWD/plans/PWNED"', '"maker" step reset 0', "$(which maker) status",
    "cd pl*ns && ls", 'head -3 "$PWD"/plans/PLAN.md', r"m\aker step approve 0",
    "rm -rf ./pla?s", "python -m maker step approve 1", "bash -c 'maker step approve 1'",
])
def test_the_reproduced_bypasses_are_denied(project: Path, command: str) -> None:
    one_step_running(project, ["Bash"])
    out = fire("pre-tool-use", tool_input(project, "Bash", command=command))
    assert out is not None
    decision = out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("maker")


def test_the_executor_never_reads_makers_key(project: Path) -> None:
    from maker.store.seal import key_path

    one_step_running(project, ["Read", "Bash"])
    for tool, tool_in in (("Read", {"file_path": str(key_path())}),
                          ("Bash", {"command": f"cat {key_path()}"})):
        out = fire("pre-tool-use", tool_input(project, tool, **tool_in))
        assert out is not None and "maker's own data" in out["hookSpecificOutput"][
            "permissionDecisionReason"]


def test_evidence_from_overridden_commands_is_refused(project: Path, running: PlanStore,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.verify.runner import run_verification

    monkeypatch.setenv("TEST_CMD", "false")  # the project's real check fails
    run = run_verification(running, project, 1, env=dict(os.environ, TEST_CMD="true"))
    assert run.passed
    out = fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(1)))
    assert out is not None and out["decision"] == "block"
    assert "the recorded verification ran ['true'], but the project's commands are " \
           "['false']" in out["reason"]


def test_a_conditional_step_cannot_jump_back_to_a_finished_step(project: Path) -> None:
    store = write(project, [make_step(0, 1), make_step(1, -2, conditional=True, votes=1),
                            make_step(2, -1)])
    start_step(store, 0)
    fire("subagent-stop", subagent_input(project, EXECUTOR, handoff(0)))
    start_step(store, 1)
    out = fire("subagent-stop", subagent_input(
        project, EXECUTOR, handoff(1, output={"next_step": 0, "reason": "again"})))
    assert out is not None and out["decision"] == "block"
    assert "step 0, which is complete: only a step that has not run yet" in out["reason"]
    assert "one of 2, or -1" in out["reason"]


@pytest.mark.parametrize("broken", ["{not json", "[1, 2]", ""])
def test_a_broken_marker_never_opens_the_gates(project: Path, running: PlanStore,
                                               broken: str) -> None:
    running.active_path.write_text(broken)
    out = fire("stop", stop_input(project))
    assert out is not None and out["decision"] == "block"
    denied = fire("pre-tool-use", tool_input(project, "Write", file_path="x.txt",
                                             content="x"))
    assert denied is not None
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert running.read_active() is not None  # rebuilt from the step files


def test_what_the_reviewers_prompt_promises_its_bash_may_run(project: Path) -> None:
    """The reviewer is told it may run read-only commands and `maker verify`: the hook
    lets exactly those through."""
    text = (Path(__file__).parents[2] / "agents/reviewer.md").read_text()
    assert "`maker verify --step N`" in text and "tests)" not in text
    one_step_running(project, ["Read"])
    # (git: allowed as maker rewrote it, with the repository's programs off; see
    # test_git_programs.py)
    for command, decision in (("git diff", "allow"), ("maker verify --step 1", None),
                              ("pytest -q", "deny")):
        out = fire("pre-tool-use", tool_input(project, "Bash", agent="maker:reviewer",
                                              command=command))
        assert (out and out["hookSpecificOutput"]["permissionDecision"]) == decision, command
