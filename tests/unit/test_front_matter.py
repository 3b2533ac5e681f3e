"""Every agent's and command's front matter is one YAML mapping of keys the client knows:
a value that runs onto a line of its own (an example's `assistant: …`) reads as another
key, and the client keeps only what comes before it. An agent's tools and description say
what the code gives and routes to it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from maker.executor.rules.step_rules import REVIEW_THRESHOLD

REPO = Path(__file__).resolve().parents[2]
AGENT_KEYS = {"name", "description", "tools", "disallowedTools", "model", "color"}
COMMAND_KEYS = {"description", "argument-hint", "allowed-tools", "model",
                "disable-model-invocation"}
FILES = sorted([*REPO.glob("agents/*.md"), *REPO.glob("commands/*.md")])
# What a step's executor must never be given: a subagent's calls are not held to the
# step's tools; the others reach past the step (other agents and tasks, the session's
# schedule, its working tree and mode) or run a command's lines outside the guard.
ESCAPES = {"Agent", "Task", "SendMessage", "TaskStop", "Skill", "SlashCommand", "CronCreate",
           "CronDelete", "EnterWorktree", "ExitWorktree", "EnterPlanMode", "ExitPlanMode"}


def _front(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "\n---\n" in text, path.name
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_the_front_matter_is_one_mapping_of_known_keys(path: Path) -> None:
    front = _front(path)
    assert isinstance(front, dict), path.name
    known = AGENT_KEYS if path.parent.name == "agents" else COMMAND_KEYS
    assert set(front) <= known, set(front) - known
    assert isinstance(front["description"], str) and front["description"].strip()
    for key, value in front.items():  # (a list or mapping is not what the client reads)
        assert isinstance(value, (str, bool)), (key, value)


def test_each_agents_examples_are_in_its_description() -> None:
    agents = [p for p in FILES if p.parent.name == "agents"]
    assert len(agents) == 3
    for path in agents:
        front = _front(path)
        assert isinstance(front, dict)
        description = front["description"]
        assert description.count("<example>") == description.count("</example>") >= 1
        assert "\nassistant: " in description and "user: " in description, path.name
        assert front["name"] == path.stem


def _agent(agent: str) -> dict[str, str]:
    """An agent's front matter, each value as text."""
    head = _front(REPO / "agents" / f"{agent}.md")
    assert isinstance(head, dict)
    return {key: str(value) for key, value in head.items()}


def _names(line: str) -> set[str]:
    return {t.strip() for t in line.split(",") if t.strip()}


def test_the_executor_is_denied_what_escapes_its_step_and_keeps_what_a_step_may_name(
        ) -> None:
    """Its tools are its step's (the PreToolUse guard), MCP tools among them, which a
    static ``tools:`` list cannot grant (``mcp__*`` is not honoured: only a server's own
    name is); so its front matter takes away what no step may give it."""
    front = _agent("step-executor")
    assert "tools" not in front
    denied = _names(front.get("disallowedTools", ""))
    assert ESCAPES <= denied
    planner = (REPO / "agents" / "planner.md").read_text(encoding="utf-8")
    offered = planner.split("Tool names are Claude Code tools (", 1)[1].split(")", 1)[0]
    assert not denied & _names(offered.replace("...", ""))


def test_the_reviewers_description_names_what_the_code_routes_to_it() -> None:
    description = _agent("reviewer")["description"].split("<example>")[0]
    words = {5: "five"}
    assert f"changed {words[REVIEW_THRESHOLD]} or more files" in description
    assert "every step under the `reviewer` approval policy" in description
    # the boundaries a person declares (plans/settings.yaml), two of them crossed
    assert "crossed two declared architectural boundaries" in description
