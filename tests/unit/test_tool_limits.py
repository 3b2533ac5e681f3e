"""The executor's limits as the SDK session gets them (maker.engine.tool_limits): the
callbacks driven with plain dicts, as claude-agent-sdk calls them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from claude_agent_sdk import HookMatcher, PermissionResultAllow, PermissionResultDeny

from harness.engine_fakes import ScriptedModel, parts, run
from harness.step_plans import handoff, linear, tool_step
from maker.engine import tool_limits
from maker.engine.orchestrator import EXIT_COMPLETE, Orchestrator
from maker.engine.tool_limits import (
    NO_USER,
    decide,
    disallowed_tools,
    make_can_use_tool,
    make_hooks,
)
from maker.store.plan_store import PlanStore

OUTSIDE = "may use only"
PLANS = "maker's own record of the plan"


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    (tmp_path / "plans").mkdir()
    (tmp_path / "src").mkdir()
    return PlanStore(tmp_path / "plans")


def test_a_session_gets_all_three_means(store: PlanStore) -> None:
    step = tool_step(4, ["Read"])
    limits = tool_limits.session_limits(store, step)  # type: ignore[arg-type]
    assert set(limits) == {"hooks", "can_use_tool", "disallowed_tools"}
    assert limits["disallowed_tools"] == disallowed_tools(step)
    assert "Write" in limits["disallowed_tools"] and "Read" not in limits["disallowed_tools"]
    assert callable(limits["can_use_tool"]) and list(limits["hooks"]) == ["PreToolUse"]


def test_maker_run_builds_its_sessions_with_them(store: PlanStore) -> None:
    from maker.cli.run_cmd import build_parts

    assert build_parts(store, None, None).limits is tool_limits.session_limits


def test_every_engine_session_holds_them_unless_a_run_gives_its_own(project: Path) -> None:
    """``EngineParts`` holds the limits by default: no engine, ``maker run``'s or a test's,
    starts an executor session without them."""
    store = linear(project, 1)
    model = ScriptedModel([handoff(1)])
    assert run(Orchestrator(store, parts(model))).exit_code == EXIT_COMPLETE
    assert {"hooks", "can_use_tool", "disallowed_tools"} <= set(model.options[0])
    assert model.options[0]["disallowed_tools"] == disallowed_tools(store.load_step(1))


def test_no_user_wording_says_decide_or_hand_off_blocked() -> None:
    assert "no user is present; decide, or hand off blocked with the question" in NO_USER


CALLS: list[tuple[list[str], str, dict[str, Any], str | None]] = [
    (["Read"], "Read", {"file_path": "src/a.py"}, None),
    (["Read"], "Write", {"file_path": "src/a.py", "content": "x"}, OUTSIDE),
    (["Read", "Bash"], "Bash", {"command": "touch plans/x"}, PLANS),
    (["Read", "Bash"], "Bash", {"command": "pytest -q"}, None),
    (["Write"], "Write", {"file_path": "plans/PLAN.md", "content": "x"}, PLANS),
    (["Read"], "AskUserQuestion", {"questions": []}, NO_USER),
]


@pytest.mark.parametrize(("tools", "tool", "tool_input", "expected"), CALLS)
async def test_can_use_tool_denies_with_the_reason(store: PlanStore, tools: list[str],
                                                   tool: str, tool_input: dict[str, Any],
                                                   expected: str | None) -> None:
    callback = make_can_use_tool(store, tool_step(4, tools))
    result = await callback(tool, tool_input, SimpleNamespace(tool_use_id="t1"))
    if expected is None:
        assert isinstance(result, PermissionResultAllow)
    else:
        assert isinstance(result, PermissionResultDeny)
        assert expected in result.message
        assert result.interrupt is False  # the model reads it and goes on


@pytest.mark.parametrize(("tools", "tool", "tool_input", "expected"), CALLS)
async def test_pre_tool_use_hook_denies_with_the_reason(store: PlanStore, tools: list[str],
                                                        tool: str, tool_input: dict[str, Any],
                                                        expected: str | None) -> None:
    (matcher,) = make_hooks(store, tool_step(4, tools))["PreToolUse"]
    (hook,) = matcher.hooks
    hook_input = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
                  "tool_use_id": "t1", "cwd": str(store.root.parent), "session_id": "s"}
    output = await hook(hook_input, "t1", {"signal": None})  # type: ignore[arg-type]
    if expected is None:
        assert output == {}  # no opinion: the permission rules still apply
    else:
        assert output == {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": decide(store, tool_step(4, tools), tool, tool_input,
                                               cwd=store.root.parent).refusal}}
        assert expected in output["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_hook_sees_every_tool_and_fails_closed(store: PlanStore) -> None:
    (matcher,) = make_hooks(store, tool_step(4, ["Read"]))["PreToolUse"]
    assert isinstance(matcher, HookMatcher)
    assert matcher.matcher is None
    assert matcher.on_failure == "block"


async def test_the_hook_resolves_paths_in_the_calls_cwd(store: PlanStore) -> None:
    (hook,) = make_hooks(store, tool_step(4, ["Write"]))["PreToolUse"][0].hooks
    call = {"tool_name": "Write", "tool_input": {"file_path": "steps/x", "content": "x"}}
    in_plans = await hook({**call, "cwd": str(store.root)}, "t", {"signal": None})  # type: ignore[arg-type]
    in_project = await hook({**call, "cwd": str(store.root.parent)}, "t", {"signal": None})  # type: ignore[arg-type]
    assert PLANS in str(in_plans)
    assert in_project == {}


async def test_can_use_tool_takes_a_step_record(store: PlanStore) -> None:
    record = SimpleNamespace(spec=tool_step(4, ["Read"]))
    result = await make_can_use_tool(store, record)("Edit", {"file_path": "src/a"}, None)  # type: ignore[arg-type]
    assert isinstance(result, PermissionResultDeny)
    assert "step 4 may use only Read, AskUserQuestion" in result.message


async def test_a_check_that_fails_refuses_the_call_saying_why(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> str | None:
        raise OSError("disk gone")

    monkeypatch.setattr(tool_limits, "executor_decision", broken)
    result = await make_can_use_tool(store, tool_step(4, ["Read"]))("Read", {}, None)
    assert isinstance(result, PermissionResultDeny)
    assert "could not check this tool call (OSError: disk gone)" in result.message
    (hook,) = make_hooks(store, tool_step(4, ["Read"]))["PreToolUse"][0].hooks
    output = await hook({"tool_name": "Read", "tool_input": {}}, "t", {"signal": None})  # type: ignore[arg-type]
    assert "OSError: disk gone" in str(output)


def test_disallowed_tools_are_the_builtins_the_step_can_never_use() -> None:
    removed = disallowed_tools(tool_step(4, ["Read", "Grep"], ["Task"]))
    assert {"Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch"} <= set(removed)
    # Its own tools stay, under their current names too.
    assert not {"Read", "Grep", "Agent"} & set(removed)
    # Bash runs `maker verify` in every step; AskUserQuestion gets maker's answer;
    # ToolSearch is always allowed; older names could alias a current tool.
    assert not {"Bash", "AskUserQuestion", "ToolSearch", "Task", "NotebookRead"} & set(removed)
    assert removed == sorted(removed)


def test_disallowed_tools_take_a_step_record() -> None:
    record = SimpleNamespace(spec=tool_step(4, ["Write", "Edit"]))
    assert "Write" not in disallowed_tools(record)  # type: ignore[arg-type]
    assert "Read" in disallowed_tools(record)  # type: ignore[arg-type]
