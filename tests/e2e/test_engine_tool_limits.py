"""The executor's limits in a real SDK session: maker.engine.tool_limits against the real
claude-agent-sdk, the real bundled Claude Code CLI and the scripted Messages API.

What this pins down (claude-agent-sdk 0.2.187, Claude Code 2.1.330), as the module
docstring of ``maker.engine.tool_limits`` says: the PreToolUse hook sees every call,
those ``allowed_tools`` auto-approves included; ``can_use_tool`` sees only the calls
that need permission (tools outside ``allowed_tools``, and AskUserQuestion).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.sdk_runner import greet_step, make_runner
from maker.core.models import TaskConfig
from maker.engine.tool_limits import NO_USER, make_can_use_tool, make_hooks
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, Reply

pytestmark = [
    pytest.mark.e2e,
    # The SDK warns that the step's whole-tool allowed_tools entries shadow
    # can_use_tool: that is the case the PreToolUse hook is there for.
    pytest.mark.filterwarnings("ignore::claude_agent_sdk.CanUseToolShadowedWarning"),
]

HANDOFF = """\
step: 2
status: blocked
output: {}
summary: Could not write the greeting with the step's tools.
discoveries: []
decisions: []
blockers:
  - Which greeting? (no user to ask)
for_next_agent: ''
files_changed: []
"""

QUESTION = {"questions": [{"question": "Which greeting?", "header": "Greeting",
                           "multiSelect": False,
                           "options": [{"label": "hello", "description": "English"},
                                       {"label": "bonjour", "description": "French"}]}]}


def script(api: FakeMessagesAPI, project: Path, bash: str) -> None:
    api.script("step-executor",
               Reply.tool("Write", {"file_path": str(project / "greeting.txt"),
                                    "content": "hello"}),
               Reply.tool("Bash", {"command": bash}),
               Reply.tool("AskUserQuestion", QUESTION),
               Reply.tool("Read", {"file_path": str(project / "README.md")}),
               Reply.text(HANDOFF))


def results(api: FakeMessagesAPI) -> list[Any]:
    return api.requests_for("step-executor")[-1].all_tool_results


def recording(seen: list[str], callback: Any, name: str) -> Any:
    async def wrapped(*args: Any) -> Any:
        tool = args[0] if isinstance(args[0], str) else args[0]["tool_name"]
        seen.append(f"{name}:{tool}")
        return await callback(*args)
    return wrapped


@pytest.fixture
def store(project: Path) -> PlanStore:
    (project / "plans").mkdir()
    (project / "README.md").write_text("# Greeter\n")
    return PlanStore(project / "plans")


async def test_refusals_reach_the_model_and_nothing_is_written(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path, claude_home: Path,
        store: PlanStore) -> None:
    script(fake_api, project, "touch plans/x")
    step = greet_step(["Bash"])
    seen: list[str] = []
    (matcher,) = make_hooks(store, step)["PreToolUse"]
    matcher.hooks = [recording(seen, matcher.hooks[0], "hook")]
    runner = make_runner(fake_api, claude_binary, claude_home,
                         can_use_tool=recording(seen, make_can_use_tool(store, step), "cut"),
                         hooks={"PreToolUse": [matcher]})

    result = await runner.run(step, context="", config=TaskConfig(instruction="greet",
                                                                  cwd=str(project)))

    assert result.error is None, result.error
    assert result.output["status"] == "blocked"
    fake_api.assert_done()
    write, bash, ask, read = results(fake_api)
    assert write.is_error and "step 2 may use only Read, Bash, AskUserQuestion" in write.text
    assert "`Write` is not among them" in write.text
    assert bash.is_error and "maker's own record of the plan" in bash.text
    assert ask.is_error and NO_USER in ask.text
    assert not read.is_error and "# Greeter" in read.text
    # Nothing was written: not outside the step's tools, not into plans/.
    assert not (project / "greeting.txt").exists()
    assert list((project / "plans").iterdir()) == []
    # The hook saw every call and decided the three refusals; so can_use_tool was
    # asked about nothing (Read and Bash are auto-approved by allowed_tools).
    assert seen == ["hook:Write", "hook:Bash", "hook:AskUserQuestion", "hook:Read"]


async def test_can_use_tool_alone_sees_only_calls_that_need_permission(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path, claude_home: Path,
        store: PlanStore) -> None:
    """Why the hook holds the guard: a Bash call of a step that lists Bash never reaches
    can_use_tool (a harmless command here; ``touch plans/x`` would run the same way)."""
    script(fake_api, project, "touch made-by-bash")
    step = greet_step(["Bash"])
    seen: list[str] = []
    runner = make_runner(fake_api, claude_binary, claude_home,
                         can_use_tool=recording(seen, make_can_use_tool(store, step), "cut"))

    result = await runner.run(step, context="", config=TaskConfig(instruction="greet",
                                                                  cwd=str(project)))

    assert result.error is None, result.error
    assert seen == ["cut:Write", "cut:AskUserQuestion"]
    write, bash, ask, _ = results(fake_api)
    assert write.is_error and "`Write` is not among them" in write.text
    assert not bash.is_error and (project / "made-by-bash").exists()
    assert ask.is_error and NO_USER in ask.text
    assert not (project / "greeting.txt").exists()


async def test_disallowed_tools_take_a_tool_out_of_the_models_hands(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path, claude_home: Path,
        store: PlanStore) -> None:
    """The SDK's disallowed_tools, with the other two as the engine wires them: the model
    is not offered Write at all, and a call to it is answered by the CLI, not by maker.
    (Without can_use_tool, a headless session does not offer AskUserQuestion either.)"""
    from maker.engine.tool_limits import disallowed_tools

    script(fake_api, project, "ls")
    step = greet_step(["Bash"])
    runner = make_runner(fake_api, claude_binary, claude_home,
                         hooks=make_hooks(store, step),
                         can_use_tool=make_can_use_tool(store, step))
    options = runner.options
    runner.options = lambda s, c: {**options(s, c),  # type: ignore[method-assign]
                                   "disallowed_tools": disallowed_tools(s)}

    result = await runner.run(step, context="", config=TaskConfig(instruction="greet",
                                                                  cwd=str(project)))

    assert result.error is None, result.error
    first = fake_api.requests_for("step-executor")[0]
    assert not {"Write", "Edit", "WebFetch"} & set(first.tool_names)
    assert {"Read", "Bash", "AskUserQuestion"} <= set(first.tool_names), \
        json.dumps(first.tool_names)
    write, _, ask, _ = results(fake_api)
    assert write.is_error and "No such tool available: Write" in write.text
    assert ask.is_error and NO_USER in ask.text
    assert not (project / "greeting.txt").exists()
