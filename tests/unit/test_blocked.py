"""A step whose depends_on is unmet (seed 004's gate_blocked, docs/architecture.md#the-seeds):
the user's answer to maker's
question starts it anyway (recorded as forced) or starts nothing, as the client reports the
answer to the PostToolUse hook; the model cannot answer it itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.hooks import fire
from harness.step_plans import linear
from maker.executor.verdicts.blocked import blocked_question


@pytest.fixture()
def project(plugin_project: Path) -> Path:
    return plugin_project


def _ask() -> dict[str, Any]:
    return blocked_question(3, "Step number 3", {2: "pending"})


def _answered(project: Path, label: str, **extra: Any) -> dict[str, Any] | None:
    ask = _ask()
    text = ask["questions"][0]["question"]
    return fire("post-tool-use", {
        "session_id": "sess-1", "cwd": str(project), "hook_event_name": "PostToolUse",
        "tool_name": "AskUserQuestion", "tool_input": ask,
        "tool_response": {"answers": {text: label}}, "tool_use_id": "t9", **extra})


def test_the_user_starts_the_blocked_step_anyway(project: Path) -> None:
    store = linear(project, 3)
    out = _answered(project, "Start step 3 anyway", prompt_id="p-1")
    told = json.dumps(out)
    assert "STARTED: step 3" in told and "Execute maker step 3." in told
    record = store.load_step(3)
    assert record.status == "in-progress" and record.meta["forced"] is True
    assert record.meta["forced_over"] == ["step 2 was pending"]
    active = store.read_active()
    assert active is not None and active["session_id"] == "sess-1"


def test_the_user_declines_and_nothing_starts(project: Path) -> None:
    store = linear(project, 3)
    told = json.dumps(_answered(project, "Do not start step 3"))
    assert "STEP_BLOCKED" in told and "not to start step 3" in told
    assert store.load_step(3).status == "pending" and store.read_active() is None


def test_the_model_cannot_answer_the_question_itself(project: Path) -> None:
    linear(project, 3)
    ask = _ask()
    ask["answers"] = {ask["questions"][0]["question"]: "Start step 3 anyway"}
    out = fire("pre-tool-use", {"session_id": "sess-1", "cwd": str(project),
                                "hook_event_name": "PreToolUse",
                                "tool_name": "AskUserQuestion", "tool_input": ask,
                                "tool_use_id": "t1"})
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
