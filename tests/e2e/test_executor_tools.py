"""The step executor's tools in /maker:step, with the real Claude Code CLI: its step's
own (an MCP tool among them, which only inheritance can give a plugin's agent), and
nothing that reaches past its step (agents/step-executor.md's ``disallowedTools``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.plugin import PLUGIN_ROOT, Run, run_maker, step, write_plan
from harness.scenarios import EXECUTOR, executor_writes, greeting_plan, handoff, step_flow, tool
from maker_scripted import FakeMessagesAPI

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).with_name("_mcp_server.py")
HELLO = "mcp__probe__hello"


def denied() -> set[str]:
    """The executor's ``disallowedTools`` (tests/unit/test_front_matter.py says which)."""
    text = (PLUGIN_ROOT / "agents" / "step-executor.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("disallowedTools:"))
    return {t.strip() for t in line.split(":", 1)[1].split(",")} - {""}


def test_the_executor_may_use_its_steps_mcp_tool_and_nothing_that_escapes_its_step(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, tmp_path: Path) -> None:
    plan = greeting_plan()
    plan["plan"][0]["primary_tools"] = ["Write", "Read", HELLO]
    write_plan(project, plan)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"probe": {"command": sys.executable,
                                                           "args": [str(SERVER)]}}}))
    step_flow(fake_api, [
        executor_writes("hello.txt", "hello\n"),
        tool("ToolSearch", query=f"select:{HELLO}", max_results=1),  # (a deferred tool)
        tool(HELLO),
    ], handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"]))

    run = run_maker(run_claude, "/maker:step", extra_args=["--mcp-config", str(config)])

    fake_api.assert_done()
    requests = fake_api.requests_for(EXECUTOR)
    offered = json.dumps(requests[0].body)  # the tools, and the deferred ones by name
    assert HELLO in offered
    never = denied()
    assert {"Agent", "Skill", "TaskStop"} <= never
    assert not never & set(requests[0].tool_names)
    assert not [n for n in never if f"\\n{n}\\n" in offered]  # nor deferred
    called = next(r for r in requests if any("hello from" in t.text for t in r.tool_results))
    assert not called.tool_results[0].is_error
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    assert step(project, 0).status == "complete"
