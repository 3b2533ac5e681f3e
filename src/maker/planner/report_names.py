"""Deliverables the client will not let a subagent write: files named like a report.

Claude Code (2.1.332) refuses a subagent's Write of a file whose name matches
``^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\\.md$``, any case ("Subagents should return
findings as text, not write report files"). A step's executor is a subagent in
``/maker:step``, so a step whose deliverable is such a file would fail there. The linter
says so before the step runs (:func:`report_name_problems`: a step that names one needs
Bash, through which it may still write it), and the brief tells the executor how
(:func:`report_name_note`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from maker.core.models import PlanStep
from maker.errors import Problem

__all__ = ["report_name_note", "report_name_problems", "report_named"]

_REFUSED = re.compile(r"(?:REPORT|SUMMARY|FINDINGS|ANALYSIS)[^/\s]*\.md", re.IGNORECASE)
_PATHS = re.compile(r"[\w.\-/]*\.md\b", re.IGNORECASE)
_WHY = ("Claude Code refuses a subagent's Write of a file named like `REPORT*.md`, "
        "`SUMMARY*.md`, `FINDINGS*.md` or `ANALYSIS*.md` (\"Subagents should return "
        "findings as text\"), and a step's executor is a subagent")


def report_named(texts: Iterable[Any]) -> list[str]:
    """The files named like a report (by the client's rule) in ``texts``, in order."""
    found: dict[str, None] = {}
    for text in texts:
        for path in _PATHS.findall(text if isinstance(text, str) else ""):
            if _REFUSED.fullmatch(path.rsplit("/", 1)[-1]):
                found[path] = None
    return list(found)


def _named(item: dict[str, Any]) -> list[str]:
    writes = item.get("writes")
    return report_named([*(writes if isinstance(writes, list) else []),
                         item.get("task_description"), item.get("title")])


def report_name_problems(item: dict[str, Any], number: int) -> list[Problem]:
    """A step that names a report-like file and cannot write it but with the Write
    tool: its tools lack Bash."""
    named = _named(item)
    tools = [*(item.get("primary_tools") or []), *(item.get("fallback_tools") or [])]
    if not named or "Bash" in tools:
        return []
    return [Problem("primary_tools", f"the step delivers `{named[0]}`: {_WHY}, so it "
                    "could not write it", number,
                    fix="add `Bash` to the step's tools (its brief then says to write "
                        "the file with Bash), or give the file another name (for example "
                        "`docs/auth-review.md`)")]


def report_name_note(spec: PlanStep) -> str:
    """The brief's words for a step that names a report-like file; "" for others."""
    named = report_named([*(spec.writes or []), spec.task_description, spec.title])
    if not named:
        return ""
    shown = ", ".join(f"`{n}`" for n in named[:3])
    return (f"{_WHY}: write {shown} with Bash (`cat > {named[0]} <<'EOF'` … `EOF`), "
            "not with Write.")
