"""Garbage to every hook, over plans in every state and with hand-edited state files:
no hook raises anything but maker's own errors (which ``run_hook`` turns into a visible
message), every hook prints JSON or nothing, and nothing in the project outside
``plans/`` is written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.crash_states import awaiting, in_progress, stopped
from maker.errors import MakerError
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import HookInput, run_hook
from maker.store.plan_store import PlanStore

KEYS = ("session_id", "cwd", "tool_name", "tool_input", "tool_response", "prompt",
        "prompt_id", "agent_type", "agent_id", "last_assistant_message", "transcript_path",
        "agent_transcript_path", "stop_hook_active", "source", "tool_use_id",
        "permission_mode")
TEXTS = st.sampled_from(["", "sess-1", "maker:step-executor", "maker:planner",
                         "maker:reviewer", "Bash", "Write", "AskUserQuestion", "Agent",
                         "/maker:approve 2", "/maker:reject 2 x", "/maker:policy auto",
                         "/maker:step 2", "/maker:plan x", "/dev/zero", "plans", "step: 2",
                         "\x00", "🙂" * 3, "VERDICT: approve"]) | st.text(max_size=40)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | TEXTS,
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(TEXTS, inner, max_size=4), max_leaves=12)
INPUTS = st.dictionaries(st.sampled_from(KEYS), JSON, max_size=10)
STATES: dict[str, Callable[[Path], PlanStore]] = {
    "in progress": in_progress, "awaiting approval": awaiting, "stopped": stopped}
# What a person (or a model, through a bypass) might leave in maker's state files.
EDITS: dict[str, Callable[[PlanStore], None]] = {
    "none": lambda s: None,
    "active.json garbage": lambda s: s.active_path.write_text("{not json"),
    "active.json wrong types": lambda s: s.active_path.write_text(
        json.dumps({"step": "two", "session_id": 5, "started_at": [1]})),
    "active.json another step": lambda s: s.active_path.write_text(
        json.dumps({"step": 99, "session_id": "sess-1"})),
    "policy.json garbage": lambda s: s.policy_path.write_text('["auto"]'),
    "runs garbage": lambda s: (s.state_dir / "runs").mkdir(exist_ok=True) or (
        s.state_dir / "runs" / "step-02.json").write_text('{"turns": 7, "launches": "x"}'),
    "step file status garbage": lambda s: _edit_step(s, "status: ", "status: [1, 2]\nx: "),
    "step file resets text": lambda s: _edit_step(s, "status: ", "resets: abc\nstatus: "),
    "empty journal": lambda s: (s.state_dir / "txn").mkdir(exist_ok=True),
}


def _edit_step(store: PlanStore, old: str, new: str) -> None:
    path = store.step_path(2)
    path.write_text(path.read_text().replace(old, new, 1))


def _outside_plans(project: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in project.rglob("*")
            if "plans" not in p.relative_to(project).parts[:1]}


@pytest.mark.parametrize("state", sorted(STATES))
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_hook_survives_garbage_over_hand_edited_state(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        verification_off: None, state: str, edit: str) -> None:
    project = tmp_path_factory.mktemp("project")
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path_factory.mktemp("data")))
    store = STATES[state](project)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    EDITS[edit](store)
    before = _outside_plans(project)

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(event=st.sampled_from(sorted(HANDLERS)), data=INPUTS)
    def fire(event: str, data: dict[str, Any]) -> None:
        data = {"hook_event_name": "X", "cwd": str(project), **data}
        try:
            HANDLERS[event](HookInput(event, data))
        except MakerError:
            pass  # maker's own error, with its message: run_hook shows it
        out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
        assert out == "" or isinstance(json.loads(out), dict)

    fire()
    assert _outside_plans(project) == before
    assert not [p for p in project.iterdir() if p.name not in ("plans", "src")]
    assert os.path.isdir(project / "plans")


@pytest.mark.parametrize("garbage", ["{not json", '{"step": "two"}', "[]", '{"step": true}'])
def test_a_broken_in_progress_marker_keeps_the_stop_gate_shut(
        project_env: Path, garbage: str) -> None:
    store = in_progress(project_env)  # step 2 in progress, started by session s-1
    store.active_path.write_text(garbage)
    out = run_hook("stop", HANDLERS["stop"], stdin=json.dumps(
        {"hook_event_name": "Stop", "session_id": "s-1", "cwd": str(project_env)}))
    assert json.loads(out)["decision"] == "block"
    assert store.read_active() == {"step": 2, "started_at": store.load().get(2).meta[
        "started_at"], "session_id": "s-1", "attempts": {}}


@pytest.fixture(name="project_env")
def _project_env(plugin_project: Path) -> Path:
    return plugin_project


def test_a_check_that_fails_refuses_maker_subagents_tools(
        project_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = in_progress(project_env)
    assert store.read_active() is not None

    def boom(*args: object, **kwargs: object) -> None:
        raise ValueError("a check that broke")

    monkeypatch.setattr("maker.tools.guards.guard.executor_refusal", boom)
    out = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps(
        {"hook_event_name": "PreToolUse", "session_id": "s-1", "cwd": str(project_env),
         "agent_type": "maker:step-executor", "tool_name": "Read",
         "tool_input": {"file_path": "x"}}))
    decision = json.loads(out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "could not check this tool call (ValueError: a check that broke)" in \
        decision["permissionDecisionReason"]
