"""Tool registry: Claude Code's built-ins, MCP names, suggestions, the planner's list."""

from __future__ import annotations

import pytest

from maker.tools.registry import BUILTIN_TOOLS, ToolRegistry, is_mcp_name


@pytest.fixture
def default() -> ToolRegistry:
    return ToolRegistry.default()


def test_seed_usage():
    registry = ToolRegistry()
    registry.register_builtin("Read", "Read files")
    registry.register_builtin("Write", "Write files")
    assert registry.is_known("Read") and registry.is_known("Write")
    assert not registry.is_known("Bash")
    assert registry.names() == ["Read", "Write"]
    assert "- Read: Read files" in registry.describe()
    assert "- Write: Write files" in registry.describe()


@pytest.mark.parametrize("name", ["Agent", "Task", "Bash", "BashOutput", "KillShell", "Edit",
                                  "MultiEdit", "Glob", "Grep", "LS", "NotebookEdit",
                                  "NotebookRead", "Read", "TodoWrite", "WebFetch", "WebSearch",
                                  "Write", "AskUserQuestion", "Skill", "SlashCommand",
                                  "ExitPlanMode"])
def test_default_has_claude_code_builtins(default, name):
    assert default.is_known(name)
    assert name in default.names()


@pytest.mark.parametrize(("name", "known"), [
    ("mcp__github__create_issue", True),
    ("mcp__plugin_maker_fake__tool", True),
    ("mcp__my-server__do.thing", True),
    ("mcp__github", False),
    ("mcp____tool", False),
    ("mcp__server__", False),
    ("mcp_github_issue", False),
    ("Bash(git log:*)", True),
    ("Read(./src/**)", True),
    ("Nope(x)", False),
    ("bash", False),
    ("", False),
    (" Read", False),
])
def test_is_known(default, name, known):
    assert default.is_known(name) is known


def test_is_known_refuses_non_text(default):
    assert default.is_known(3) is False  # type: ignore[arg-type]
    assert 3 not in default


@pytest.mark.parametrize(("name", "closest"), [
    ("bash", "Bash"),
    ("READ", "Read"),
    ("Bsh", "Bash"),
    ("WebFetcher", "WebFetch"),
    ("Grepp", "Grep"),
    ("bash(ls)", "Bash"),
    ("Quantum", None),
])
def test_closest(default, name, closest):
    assert default.closest(name) == closest


def test_is_mcp_name():
    assert is_mcp_name("mcp__a__b")
    assert not is_mcp_name("mcp__a")


def test_register_builtin_refuses_blank_names():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="non-empty"):
        registry.register_builtin("", "nothing")
    with pytest.raises(ValueError, match="non-empty"):
        registry.register_builtin(" Read", "padded")


def test_register_builtin_redescribes(default):
    default.register_builtin("Read", "Read anything")
    assert default.names().count("Read") == 1
    assert "- Read: Read anything" in default.describe()


def test_describe_lists_every_tool_and_mcp(default):
    text = default.describe()
    assert len(text.splitlines()) == len(BUILTIN_TOOLS) + 1
    assert "mcp__<server>__<tool>" in text
    assert len(default) == len(BUILTIN_TOOLS)
