"""Text that maker renders from someone else's words: made safe and kept short.

Titles, tasks, reasoning and handoff texts come from users and models. Rendered into
PLAN.md, a brief or a message for the model, they must not become links, tables or
diagram syntax (``md_cell``, ``mermaid_label``), carry NUL bytes or terminal control
sequences (``strip_controls``), or repeat 20 KB of task text where a line will do
(``task_line``, ``clip``). Everything else is kept verbatim.
"""

from __future__ import annotations

import re
import reprlib

__all__ = ["TASK_SHOWN", "clip", "md_cell", "mermaid_label", "shown_value", "strip_controls",
           "task_line"]

# How much of the task a summary shows (status, SessionStart); PLAN.md has all of it.
TASK_SHOWN = 300
# C0 controls but tab and newline, DEL, and the C1 controls (ANSI CSI among them).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MD_SPECIAL = re.compile(r"([\\|\[\]`<>*_])")


def strip_controls(text: str) -> str:
    """``text`` without control characters (NUL, ESC, CR...), tabs and newlines kept."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n"))


def clip(text: str, limit: int, where: str = "plans/PLAN.md") -> str:
    """``text`` cut to ``limit`` characters, saying how much more there is and where."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}… ({len(text) - limit:,} more characters in {where})"


def task_line(task: str, limit: int = TASK_SHOWN, where: str = "plans/PLAN.md") -> str:
    """The task's first line for a one-line summary; cut at ``limit`` characters, saying
    how much more of the task there is and where."""
    task = strip_controls(task).strip()
    if not task:
        return "(no task text)"
    first = task.split("\n", 1)[0].rstrip()
    if len(first) <= limit:
        return first
    shown = first[:limit].rstrip()
    return f"{shown}… ({len(task) - len(shown):,} more characters in {where})"


def md_cell(text: str) -> str:
    """``text`` as plain text in a Markdown table cell or link text: no link, no column."""
    flat = " ".join(strip_controls(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat)


def mermaid_label(text: str, limit: int = 60) -> str:
    """``text`` as a quoted Mermaid node label (entity codes for what would end it)."""
    flat = " ".join(strip_controls(text).split())[:limit]
    for char, code in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"),
                       ("`", "#96;")):
        flat = flat.replace(char, code)
    return flat


def shown_value(value: object, limit: int = 80) -> str:
    """A value an answer gave, as an error message quotes it: its repr, cut to ``limit``
    characters (an answer's value may be of any size; the message about it is not)."""
    shown = reprlib.Repr()  # (its keyword arguments are Python 3.12's)
    shown.maxstring = shown.maxother = limit
    shown.maxlist = shown.maxdict = shown.maxtuple = shown.maxset = 6
    shown.maxlevel = 3
    text = shown.repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
