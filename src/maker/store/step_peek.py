"""A step's status and title, read from its file without a YAML parser.

The Stop hook runs on every stop and needs only these two fields of one step file;
importing PyYAML and the plan model would cost it more than everything else it does.
maker writes a step file's front matter in one plain form (``key: value`` lines,
lists as ``- item`` lines). When the ``step``, ``status`` and ``title`` lines are in
that form, with values that mean the same to YAML as they read (a number, a known
status, a one-line title that YAML would read as that very text), they are taken as
they are. Anything else (a hand edit, an unusual title, a half-saved file) gives
None, and the caller reads and validates the file in full
(``maker.store.step_file.read_step``), as for every other reader.
"""

from __future__ import annotations

from pathlib import Path

from maker.core.bounded import read_regular_file
from maker.core.statuses import STEP_STATUSES
from maker.errors import InputError

__all__ = ["peek", "peek_step"]

_LIMIT = 256 * 1024
# What a plain scalar may not start with in YAML (an indicator, a quote, a number).
_NOT_FIRST = set("-?:,[]{}#&*!|>'\"%@`~. \t+0123456789")
# Plain words that YAML reads as something other than text.
_NOT_TEXT = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def peek_step(path: Path, number: int) -> tuple[str, str] | None:
    """``(status, title)`` of step ``number``'s file, or None: read it in full."""
    found = peek(path, number)
    return None if found is None else (found[0], found[1])


def peek(path: Path, number: int) -> tuple[str, str, dict[str, str]] | None:
    """``peek_step``'s answer, with every one-line field of the front matter (as text:
    what the hook asks besides, e.g. whether the step may vote)."""
    try:
        text = read_regular_file(path, _LIMIT).decode("utf-8")
    except (InputError, OSError, UnicodeDecodeError):  # the full read names it
        return None
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end == -1 or "\n## Task\n" not in text[end:]:
        return None
    fields: dict[str, str] = {}
    for line in text[4:end].split("\n"):
        if not line or line[0] in " -":  # a list item or a continued value
            if fields and next(reversed(fields)) in ("step", "status", "title"):
                return None  # ... of one of ours: not a one-line value
            continue
        key, colon, value = line.partition(":")
        if not colon or key in fields or (value and value[0] != " "):
            return None
        fields[key] = value[1:]
    step, status, title = fields.get("step"), fields.get("status"), fields.get("title")
    if step is None or not step.isdigit() or int(step) != number:
        return None
    if status not in STEP_STATUSES or title is None:
        return None
    title = _one_line_text(title)
    return (status, title, fields) if title else None


def _one_line_text(value: str) -> str | None:
    """The text of a one-line YAML scalar, when it is plainly text; else None."""
    if len(value) >= 2 and value[0] == "'" == value[-1]:
        inner = value[1:-1]
        return inner.replace("''", "'") if "'" not in inner.replace("''", "") else None
    if not value or value[0] in _NOT_FIRST or value[-1] in " \t:" \
            or value.lower() in _NOT_TEXT or not value.isprintable():
        return None
    if ": " in value or " #" in value or "\t" in value:
        return None
    return value
