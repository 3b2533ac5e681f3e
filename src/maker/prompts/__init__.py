"""Prompts shared by the plugin and the headless engine.

``planner.md`` is the plugin's ``agents/planner.md`` and ``step-executor.md`` its
``agents/step-executor.md`` (links): one file is each agent's system prompt for both,
so they cannot drift apart. Its front matter is one source too: :func:`prompt_tools`
reads the tools the plugin gives the agent, and the headless engine gives it the same
ones. ``planner_user.md`` is the planner's first message, a template
(``load_prompt("planner_user", instruction=…, tools_list=…)``, as seed 001 writes it:
docs/architecture.md#the-seeds).
"""

from __future__ import annotations

import re
from importlib.resources import files

__all__ = ["load_prompt", "prompt_tools"]

_TEMPLATES = ("planner_user",)  # the prompts that are templates: every placeholder filled

_TOOLS_LINE = re.compile(r"^tools:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
# The seeds' names (seed 001: ``load_prompt("planner_system")``) for the files maker keeps:
# the planner's system prompt is the plugin's agents/planner.md, one file for both.
_NAMES = {"planner_system": "planner"}
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def _split(name: str) -> tuple[str, str]:
    """``(front matter, body)`` of prompt ``name``; the front matter is "" when absent."""
    name = _NAMES.get(name, name)
    text = files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[4:end + 1], text[end + 5:]
    return "", text


def load_prompt(name: str, **values: object) -> str:
    """The body of prompt ``name`` (its front matter, if any, removed), with each
    ``{key}`` of ``values`` put in (seed 001: ``load_prompt("planner_user",
    instruction=…, tools_list=…)``). Only those placeholders are filled: the prompts'
    other braces (``{key: type}`` schemas) stay as written. Raises KeyError naming a
    placeholder the prompt has and ``values`` lacks, or a value it has no place for."""
    body = _split(name)[1].strip() + "\n"
    if not values:
        return body
    wanted = set(_PLACEHOLDER.findall(body))
    unused = sorted(set(values) - wanted)
    if unused:
        raise KeyError(f"prompt {name!r} has no placeholder for {unused}")
    missing = sorted(k for k in wanted if k not in values and name in _TEMPLATES)
    if missing:
        raise KeyError(f"prompt {name!r} needs values for {missing}")
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), body)


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
