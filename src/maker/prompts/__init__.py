"""Prompts shared by the plugin and the headless engine.

``planner.md`` is the plugin's ``agents/planner.md`` and ``step-executor.md`` its
``agents/step-executor.md`` (links): one file is each agent's system prompt for both,
so they cannot drift apart.
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["load_prompt"]


def load_prompt(name: str) -> str:
    """The body of prompt ``name`` (its front matter, if any, removed)."""
    text = files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            text = text[end + 5:]
    return text.strip() + "\n"
