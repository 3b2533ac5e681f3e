"""The context fields every agent may return (seed 002's ``CONTEXT_OUTPUT_FIELDS``;
docs/architecture.md#the-seeds).

The step executor's handoff, the reviewer's review and the planner's plan may each
carry ``summary`` and ``for_next_agent`` (texts) and ``discoveries``, ``decisions`` and
``blockers`` (lists of texts). :func:`read_context` reads them from an answer's
mapping, one rule for every agent, and lists every problem of their shapes, each with
its fix, for the model that has to correct itself. What becomes of them is the
caller's: the facts go to ``plans/NOTES.md`` (``maker.store.notes.add_notes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from maker.errors import Problem

__all__ = ["CONTEXT_OUTPUT_FIELDS", "FACT_FIELDS", "NOTE_FIELDS", "AgentContext", "kind_of",
           "read_context", "text_list"]

CONTEXT_OUTPUT_FIELDS: dict[str, dict[str, Any]] = {
    "summary": {"type": "string"},
    "discoveries": {"type": "array", "items": {"type": "string"}},
    "blockers": {"type": "array", "items": {"type": "string"}},
    "decisions": {"type": "array", "items": {"type": "string"}},
    "for_next_agent": {"type": "string"},
}
FACT_FIELDS = ("discoveries", "decisions", "blockers")  # NOTES.md's sections
NOTE_FIELDS = ("summary", "for_next_agent")


@dataclass(frozen=True)
class AgentContext:
    """What an agent left for the agents after it; empty when it left nothing."""

    summary: str = ""
    discoveries: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    for_next_agent: str = ""

    def facts(self) -> dict[str, list[str]]:
        """The facts for NOTES.md, by kind (``discoveries``, ``decisions``, ``blockers``)."""
        return {"discoveries": list(self.discoveries), "decisions": list(self.decisions),
                "blockers": list(self.blockers)}

    def __bool__(self) -> bool:
        return any((self.summary.strip(), self.discoveries, self.decisions, self.blockers,
                    self.for_next_agent.strip()))

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, **self.facts(), "for_next_agent": self.for_next_agent}


def kind_of(value: Any) -> str:
    """What ``value`` is, in a model's words: "a text", "a list", "a mapping"…"""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a true/false value"
    return {dict: "a mapping", list: "a list", str: "a text", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _text_item(value: Any) -> str | None:
    """A list item as text, or None when it is not text-like.

    ``- Found: the cache is per user`` is read by YAML as a one-key mapping: that is
    what the model meant as text, so it is turned back into ``key: value``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict) and len(value) == 1:
        (k, v), = value.items()
        if isinstance(k, str) and (v is None or isinstance(v, (str, int, float))):
            return f"{k}: {v}" if v is not None else f"{k}:"
    return None


def text_list(data: Mapping[str, Any], name: str, problems: list[Problem],
              prefix: str = "") -> list[str]:
    """``data[name]`` as a list of non-empty texts ([] when absent); a problem in
    ``problems`` for a value that is not a list, and for each item that is not text."""
    value = data.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(Problem(prefix + name, f"must be a list of texts, got {kind_of(value)}",
                                fix=f"write `{name}:` then one `- text` line per item "
                                    f"(or `{name}: []` when there are none)"))
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        text = _text_item(item)
        if text is None:
            problems.append(Problem(f"{prefix}{name}[{i}]", f"must be a text, got "
                                    f"{kind_of(item)}",
                                    fix="write the item as one line of text; put it in "
                                        "quotes if it contains `: ` or starts with `{`, `[`"))
        elif text.strip():
            out.append(text)
    return out


def read_context(data: Mapping[str, Any], prefix: str = "") -> tuple[AgentContext, list[Problem]]:
    """The context fields of an answer's mapping, and every problem of their shapes.

    Absent fields are empty. ``prefix`` goes before each problem's field name. The
    context holds only the fields that could be read; keys other than the five are the
    caller's to judge.
    """
    problems: list[Problem] = []
    texts: dict[str, str] = {}
    for name in NOTE_FIELDS:
        value = data.get(name)
        if value is None or isinstance(value, str):
            texts[name] = value or ""
        else:
            problems.append(Problem(prefix + name, f"must be a text, got {kind_of(value)}",
                                    fix=f"write it as one text (use `{name}: |` and indented "
                                        "lines for several lines)"))
            texts[name] = ""
    lists = {name: text_list(data, name, problems, prefix) for name in FACT_FIELDS}
    return AgentContext(summary=texts["summary"], for_next_agent=texts["for_next_agent"],
                        **lists), problems
