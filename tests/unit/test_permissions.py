"""What a step's tool list permits: names, aliases, Bash rules, search, maker's commands."""

from __future__ import annotations

import pytest

from maker.tools.guards.permissions import permits


@pytest.mark.parametrize(("allowed", "tool", "tool_input", "ok"), [
    (["Read"], "Read", {}, True),
    (["Read"], "Write", {}, False),
    (["Task"], "Agent", {}, True),                     # an older client's name
    (["NotebookRead"], "Read", {}, True),
    (["mcp__github__create_issue"], "mcp__github__create_issue", {}, True),
    (["Read"], "ToolSearch", {"query": "select:WebFetch"}, True),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test"}, True),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test -- --watch=false"}, True),
    (["Bash(npm test:*)"], "Bash", {"command": "npm testx"}, False),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test && rm -rf /"}, False),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test; curl x"}, False),
    (["Bash(npm test:*)"], "Bash", {"command": "npm run build"}, False),
    (["Bash(make lint)"], "Bash", {"command": "make lint"}, True),
    (["Bash(make lint)"], "Bash", {"command": "make lint fix"}, False),
    (["Bash(npm test:*)"], "Write", {}, False),
    (["Grep"], "Bash", {"command": "rg -n TODO src"}, True),
    (["Glob"], "Bash", {"command": "find . -name '*.py'"}, True),
    (["Grep"], "Bash", {"command": "rm -rf src"}, False),
    (["Read"], "Bash", {"command": "rg -n TODO src"}, False),
    (["Read"], "Bash", {"command": "maker verify --step 3"}, True),
    (["Read"], "Bash", {"command": "maker context 3"}, True),
    (["Read"], "Bash", {"command": "maker verify --step 3 && rm x"}, False),
    (["Read"], "Bash", {"command": "maker step approve 3"}, False),
    (["Read"], "Bash", {}, False),
])
def test_permits(allowed: list[str], tool: str, tool_input: dict[str, str], ok: bool) -> None:
    assert permits(allowed, tool, tool_input) is ok
