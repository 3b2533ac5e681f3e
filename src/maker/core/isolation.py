"""What every session ``maker run`` starts is given, rather than found in the project:
its settings' sources, named, and its MCP servers, none.

A session of ``-p`` (every session of the SDK) starts a project's ``.mcp.json`` servers
without asking, outside any box: a server a step planted would run with the person's
rights. ``--strict-mcp-config`` with no servers given starts none of them (nor the
person's own: a run's steps are done with the tools their plan names). The settings
come from the sources the client reads by default, written out so that a change of the
SDK's default is not a change of maker's: the person's (``user``), the project's
(``project``: its CLAUDE.md too) and the person's own for this project (``local``); the
step's box and file tools keep ``.claude/`` read-only to every step.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SETTING_SOURCES", "isolated"]

SETTING_SOURCES = ("user", "project", "local")


def isolated() -> dict[str, Any]:
    """The ClaudeAgentOptions fields every session of a run is given (a new dict)."""
    return {"setting_sources": list(SETTING_SOURCES), "strict_mcp_config": True,
            "mcp_servers": {}}
