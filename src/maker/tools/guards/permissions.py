"""Which tool calls a plan step permits: its primary and fallback tools, read right.

A plan names tools as Claude Code users write them: built-in names (some from
older clients: ``Task`` for ``Agent``, ``NotebookRead``), MCP tools, and Bash
permission rules such as ``Bash(npm test:*)``. ``permits`` honours all of them, so
a tool the linter accepted is one the step can use, and nothing more:

- ``Bash(npm test:*)`` allows Bash commands that start with ``npm test`` and chain
  nothing else on (no shell operators); ``Bash(make lint)`` allows exactly that;
- a step that may search (``Grep``, ``Glob``, ``LS``) may run read-only Bash
  commands, since clients that give an agent Bash drop those tools;
- maker's own commands for an executor (``maker verify``, ``maker context``, ...)
  and ``ToolSearch`` (loading a deferred tool's schema) are always allowed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from maker.tools.command.maker_commands import EXECUTOR_COMMANDS, orient_command, plain_command
from maker.tools.command.readonly import is_read_only

__all__ = ["ALWAYS_ALLOWED", "MAKER_COMMAND", "canonical", "permits"]

ALWAYS_ALLOWED = frozenset({"ToolSearch"})
SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS"})
_ALIASES = {"Task": "Agent", "NotebookRead": "Read"}
# maker's own read and verification commands, plain arguments only: nothing can be
# chained onto them.
MAKER_COMMAND = plain_command(EXECUTOR_COMMANDS)
_BASH_RULE = re.compile(r"\ABash\((?P<command>.+?)(?P<wildcard>:\*)?\)\Z")
_SHELL_OPERATORS = re.compile(r"[;&|><`\n\r]|\$\(|\$\{")


def canonical(name: str) -> str:
    """The tool's name in current clients (``Task`` → ``Agent``)."""
    return _ALIASES.get(name, name)


def permits(allowed: list[str], tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a step whose tools are ``allowed`` may make this call."""
    names = {canonical(a) for a in allowed}
    if tool in names or tool in ALWAYS_ALLOWED:
        return True
    if tool != "Bash":
        return False
    command = tool_input.get("command")
    if not isinstance(command, str):
        return False
    if MAKER_COMMAND.match(command) or orient_command(command) is not None:
        return True
    if SEARCH_TOOLS & names and is_read_only(command):
        return True
    return any(_bash_rule_allows(rule, command) for rule in allowed)


def _bash_rule_allows(rule: str, command: str) -> bool:
    m = _BASH_RULE.match(rule)
    if m is None or _SHELL_OPERATORS.search(command):
        return False
    wanted, actual = m.group("command").strip(), command.strip()
    if m.group("wildcard"):
        return actual == wanted or actual.startswith(wanted + " ")
    return actual == wanted
