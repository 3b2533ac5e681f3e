"""Prompts shared by the plugin and the headless engine.

``planner.md`` is the plugin's ``agents/planner.md`` and ``step-executor.md`` its
``agents/step-executor.md`` (links): one file is each agent's system prompt for both,
so they cannot drift apart. Its front matter is one source too: :func:`prompt_tools`
reads the tools the plugin gives the agent, and the headless engine gives it the same
ones.
"""

from __future__ import annotations

import re
from importlib.resources import files

__all__ = ["load_prompt", "prompt_tools"]

_TOOLS_LINE = re.compile(r"^tools:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def _split(name: str) -> tuple[str, str]:
    """``(front matter, body)`` of prompt ``name``; the front matter is "" when absent."""
    text = files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[4:end + 1], text[end + 5:]
    return "", text


def load_prompt(name: str) -> str:
    """The body of prompt ``name`` (its front matter, if any, removed)."""
    return _split(name)[1].strip() + "\n"


def prompt_tools(name: str) -> list[str]:
    """The tools prompt ``name``'s front matter gives its agent (``tools: Read, Grep``).

    Raises ValueError when the prompt declares no tools: an agent without a tool list
    would get every tool, which is never what a maker agent means.
    """
    # The one line (the front matter is one YAML mapping, its `tools:` a plain line:
    # tests/unit/test_front_matter.py holds both).
    match = _TOOLS_LINE.search(_split(name)[0])
    names = [t.strip() for t in match.group(1).split(",") if t.strip()] if match else []
    if not names:
        raise ValueError(f"prompt {name!r} declares no `tools:` in its front matter")
    return names
