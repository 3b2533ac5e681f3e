"""PlannerModule with the real claude-agent-sdk and the real bundled Claude Code CLI;
only the model is scripted (the Messages API on 127.0.0.1).

The model first answers a plan with a misspelt key; maker's linter refuses it and the
same session is resumed with every problem; the model answers a valid plan, and the
module yields PlanCreated with it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.scenarios import GREETING_TASK, PLANNER, greeting_plan, to_yaml
from maker.core.events import PlanCreated, TaskSubmitted
from maker.core.models import TaskConfig
from maker.planner.planner import PlannerModule
from maker.tools.registry import ToolRegistry
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, find_claude, isolated_env

pytestmark = pytest.mark.e2e

MISSPELT_PROBLEM = "step 0: primary_tool: is not a step field (fix: did you mean `primary_tools`?)"


def _misspelt_plan() -> str:
    plan = greeting_plan()
    first = plan["plan"][0]
    plan["plan"][0] = {("primary_tool" if k == "primary_tools" else k): v
                       for k, v in first.items()}
    return to_yaml(plan)


def _valid_after_the_problems(request: RecordedRequest) -> Reply:
    said = request.last_user_text
    assert said.startswith("maker rejected the plan (attempt 1 of 3)"), said
    assert MISSPELT_PROBLEM in said, said
    return Reply.text(to_yaml(greeting_plan()))


async def test_a_refused_plan_is_corrected_in_the_same_session(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    fake_api.script(PLANNER, Reply.text(_misspelt_plan()), _valid_after_the_problems)
    env = isolated_env(fake_api.base_url, claude_home)
    # The SDK starts the CLI with os.environ under `env`: blank what isolated_env left
    # out (a real key…) so none of it comes back.
    env = {**{k: "" for k in os.environ if k not in env}, **env}
    planner = PlannerModule(registry=ToolRegistry.default(), env=env, cli_path=find_claude())
    config = TaskConfig(instruction=GREETING_TASK, cwd=str(project))

    events = [e async for e in planner.process(
        TaskSubmitted(timestamp=0.0, instruction=GREETING_TASK, config=config))]

    fake_api.assert_done()
    assert [type(e) for e in events] == [PlanCreated]
    plan = events[0].plan  # type: ignore[attr-defined]
    assert plan.task == GREETING_TASK
    assert [s.title for s in plan.steps] == ["Write hello.txt", "Check hello.txt"]
    assert plan.steps[0].primary_tools == greeting_plan()["plan"][0]["primary_tools"]

    first, second = fake_api.requests_for(PLANNER)
    assert first.last_user_text.startswith(f"Plan this task: {GREETING_TASK}")
    # The plugin planner's own tools, read-only, and nothing else. (Claude Code adds
    # a deferred-loading placeholder, "never call this tool"; with no ToolSearch
    # offered, nothing deferred can be loaded.)
    tools = first.body["tools"]
    assert sorted(t["name"] for t in tools if not t.get("defer_loading")) == [
        "Glob", "Grep", "Read"]
    assert {t["name"] for t in tools if t.get("defer_loading")} <= {"DeferredToolPlaceholder"}
    # Resumed: the second call carries the first answer in its history.
    assert any("primary_tool:" in str(m.get("content")) for m in second.messages
               if m.get("role") == "assistant")
    assert len(planner.calls) == 2
    assert planner.calls[0].session_id and planner.calls[0].session_id == \
        planner.calls[1].session_id
