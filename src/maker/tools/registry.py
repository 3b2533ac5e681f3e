"""The tools a plan step may name: Claude Code's built-ins and any MCP tool.

A step's ``primary_tools`` / ``fallback_tools`` become the tool list of the
subagent that runs it, so a misspelt name would silently leave that subagent
without the tool. The linter asks ``is_known`` and, for a name that is not,
``closest`` for a suggestion. MCP tools (``mcp__<server>__<tool>``) depend on the
user's configuration, so every well-formed MCP name is accepted.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["BUILTIN_TOOLS", "READ_ONLY_TOOLS", "Tool", "ToolRegistry", "is_mcp_name",
           "only_read"]

# Claude Code's built-in tools (code.claude.com/docs/en/tools-reference), plus the
# names older releases used (Task, BashOutput, KillShell, LS, MultiEdit,
# NotebookRead, SlashCommand), which planners trained on them still write.
BUILTIN_TOOLS: dict[str, str] = {
    "Agent": "Launch a subagent with its own context window for a self-contained task",
    "Task": "Launch a subagent (the older name of Agent)",
    "AskUserQuestion": "Ask the user multiple-choice questions to settle requirements",
    "Bash": "Run a shell command (tests, builds, git, package managers)",
    "BashOutput": "Read the output of a background shell command",
    "KillShell": "Stop a background shell command",
    "Edit": "Replace an exact string in a file",
    "MultiEdit": "Make several exact-string replacements in one file",
    "Write": "Create or overwrite a file",
    "Read": "Read a file (text, images, PDF, notebooks)",
    "Glob": "Find files by name pattern, e.g. **/*.py",
    "Grep": "Search file contents with a regular expression",
    "LS": "List a directory",
    "NotebookEdit": "Edit a Jupyter notebook cell",
    "NotebookRead": "Read a Jupyter notebook",
    "TodoWrite": "Keep a checklist of the work in progress",
    "WebFetch": "Fetch a URL and read its content",
    "WebSearch": "Search the web",
    "Skill": "Run a skill",
    "SlashCommand": "Run a slash command",
    "ExitPlanMode": "Present a plan for approval and leave plan mode",
    "EnterPlanMode": "Switch to plan mode to design an approach before coding",
    "EnterWorktree": "Create an isolated git worktree and switch to it",
    "ExitWorktree": "Leave a worktree session and return to the original directory",
    "LSP": "Code intelligence from a language server: definitions, references, types",
    "ListMcpResourcesTool": "List the resources that connected MCP servers expose",
    "ReadMcpResourceTool": "Read an MCP resource by URI",
    "TaskCreate": "Create a task in the session's task list",
    "TaskGet": "Read one task of the session's task list",
    "TaskList": "List the session's tasks",
    "TaskUpdate": "Update or delete a task of the session's task list",
    "TaskOutput": "Read the output of a background task",
    "TaskStop": "Stop a background task",
    "CronCreate": "Schedule a prompt in this session",
    "CronDelete": "Cancel a scheduled prompt",
    "CronList": "List the session's scheduled prompts",
    "ToolSearch": "Find and load deferred tools",
}

# The built-in tools that change nothing outside the session: a step that uses only
# these can be sampled several times and voted on (maker.engine.vote_step). Bash is
# not among them (a step's command can do anything), nor any MCP tool.
READ_ONLY_TOOLS = frozenset({
    "Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "LSP",
    "ListMcpResourcesTool", "ReadMcpResourceTool", "TaskGet", "TaskList", "TaskOutput",
    "BashOutput", "TodoWrite", "ToolSearch", "AskUserQuestion",
})

# mcp__<server>__<tool>; server names may themselves contain single underscores.
_MCP_NAME = re.compile(r"^mcp__[A-Za-z0-9][\w.-]*?__[A-Za-z0-9][\w.-]*$")
# A permission-rule specifier after a name: ``Bash(git log:*)``.
_SPECIFIER = re.compile(r"^([^()\s]+)\(.*\)$", re.DOTALL)


def only_read(tools: Iterable[str]) -> bool:
    """Whether every one of ``tools`` only reads (:data:`READ_ONLY_TOOLS`)."""
    return all(t in READ_ONLY_TOOLS for t in tools)


def is_mcp_name(name: str) -> bool:
    """True for a well-formed MCP tool name, ``mcp__<server>__<tool>``."""
    return bool(_MCP_NAME.match(name))


@dataclass(frozen=True)
class Tool:
    """A tool a step may use."""

    name: str
    description: str


class ToolRegistry:
    """The tools a plan may name. ``ToolRegistry.default()`` holds Claude Code's built-ins."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._by_lower: dict[str, str] = {}

    @classmethod
    def default(cls) -> ToolRegistry:
        """A registry holding every Claude Code built-in tool."""
        registry = cls()
        for name, description in BUILTIN_TOOLS.items():
            registry.register_builtin(name, description)
        return registry

    def register_builtin(self, name: str, description: str) -> None:
        """Add (or re-describe) a tool by its exact name."""
        if not name or name != name.strip():
            raise ValueError(f"a tool name must be a non-empty word, got {name!r}")
        self._tools[name] = Tool(name, description)
        self._by_lower[name.lower()] = name

    def is_known(self, name: str) -> bool:
        """True for a registered name or any ``mcp__<server>__<tool>`` name.

        A permission-rule specifier is allowed after a known name: ``Bash(git log:*)``.
        """
        if not isinstance(name, str):
            return False
        if name in self._tools or is_mcp_name(name):
            return True
        m = _SPECIFIER.match(name)
        return m is not None and m.group(1) in self._tools

    def closest(self, name: str) -> str | None:
        """The registered name a misspelt ``name`` most likely meant, or None."""
        base = name.strip()
        m = _SPECIFIER.match(base)
        if m:
            base = m.group(1)
        exact = self._by_lower.get(base.lower())
        if exact is not None:
            return exact
        matches = difflib.get_close_matches(base.lower(), list(self._by_lower), n=1, cutoff=0.6)
        return self._by_lower[matches[0]] if matches else None

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._tools)

    def describe(self) -> str:
        """The tools as a text list for the planner prompt, one ``- Name: what`` a line."""
        lines = [f"- {t.name}: {t.description}" for t in self._tools.values()]
        lines.append("- mcp__<server>__<tool>: any tool of an MCP server the user has connected")
        return "\n".join(lines)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.is_known(name)

    def __len__(self) -> int:
        return len(self._tools)
