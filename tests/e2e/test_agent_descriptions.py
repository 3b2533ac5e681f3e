"""Each of maker's agents reaches the client with its whole description, examples included:
read from the list of agent types the client gives the main agent for its Agent tool, in
a recorded request. (A description whose examples run onto a line of their own, not one
YAML value, was cut at the first line: the client read `assistant: …` as another key.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.plugin import PLUGIN_ROOT, Run, run_maker
from maker_scripted import FakeMessagesAPI
from maker_scripted.replies import Reply

pytestmark = pytest.mark.e2e


def _description(agent: str) -> str:
    text = (PLUGIN_ROOT / "agents" / f"{agent}.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))
    return str(front["description"])


def test_the_agent_tool_carries_each_agents_whole_description(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    fake_api.script("main", Reply.text("Nothing to do."))
    run_maker(run_claude, "Say nothing.")
    offered = json.dumps(fake_api.requests_for("main")[0].body)
    assert "Available agent types for the Agent tool" in offered
    for name in ("planner", "reviewer", "step-executor"):
        whole = _description(name)
        assert whole.count("<example>") >= 1 and "\nassistant: " in whole, name
        listed = json.dumps(f"- maker:{name}: {whole} (Tools:")[1:-1]
        start = offered.find(f"maker:{name}:")
        assert listed in offered, (name, offered[start:start + 1500])

