"""`maker run`'s sessions are given their settings and servers: a project's `.mcp.json`
(a server a step could have planted, or one a person keeps for their own sessions) is not
started by any session of the run. The real `maker run`, SDK and CLI, against the
scripted Messages API; without `--strict-mcp-config` the CLI starts it (a session of
`-p` approves project servers without asking)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.maker_run import greeting_run, run_maker
from harness.plugin import step, write_plan
from maker_scripted import FakeMessagesAPI

pytestmark = pytest.mark.e2e


def test_a_planted_mcp_json_starts_no_server_in_a_run(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path, tmp_path: Path) -> None:
    from maker_scripted.scenarios import greeting_plan

    started = tmp_path / "server-started"
    server = Path(__file__).with_name("_mcp_server.py")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": {
        "command": "/bin/sh",
        "args": ["-c", f"touch '{started}'; exec '{sys.executable}' '{server}'"]}}}))
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude/settings.local.json").write_text(json.dumps(
        {"enableAllProjectMcpServers": True}))
    write_plan(project, greeting_plan(), policy="never")
    greeting_run(fake_api)

    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stderr[-2000:]
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    assert not started.exists(), "a session of the run started the project's MCP server"
    tools = {t for r in fake_api.requests for t in r.tool_names}
    assert not any(t.startswith("mcp__") for t in tools), sorted(tools)
