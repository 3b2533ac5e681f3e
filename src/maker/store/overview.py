"""PLAN.md's body: the task, the reasoning, a step table and a Mermaid graph."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.flow import next_label
from maker.core.text import md_cell, mermaid_label, strip_controls, task_line
from maker.errors import PlanFileError

if TYPE_CHECKING:
    from maker.store.records import StoredPlan

__all__ = ["body_sha256", "keep_hand_edited", "render_overview"]

_GRAPH_LIMIT = 300  # GitHub stops rendering far before a 10,000-node diagram


def _next(n: int) -> str:
    return next_label(n)


@functools.lru_cache(maxsize=16384)
def _row(prefix: str, number: int, title: str, conditional: bool, nxt: int, path: Path,
         status: str, deps: tuple[int, ...]) -> str:
    """One step's table row. Kept: a run rewrites PLAN.md at every change of every
    step, and a 1,000-step table is mostly rows that did not change."""
    text = str(path)  # (pathlib's relative_to costs more than the rest of a row)
    rel = text[len(prefix):].replace(os.sep, "/") if text.startswith(prefix) else path.name
    kind = "conditional" if conditional else "action"
    shown = ", ".join(map(str, deps)) or "—"
    return (f"| {number} | [{md_cell(title)}]({rel}) | {kind} | {status} | {shown} | "
            f"{_next(nxt)} |")


@functools.lru_cache(maxsize=4096)
def _node(number: int, title: str, conditional: bool, status: str) -> str:
    label = mermaid_label(f"{number}. {title} [{status}]")
    shape = f'{{"{label}"}}' if conditional else f'["{label}"]'
    return f"  s{number}{shape}"


def body_sha256(body: str) -> str:
    """The digest PLAN.md's front matter keeps of its body (to notice a hand edit)."""
    import hashlib

    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def keep_hand_edited(path: Path, archive_dir: Path) -> dict[str, Any]:
    """PLAN.md's front matter as it is now ({} when it cannot be read). PLAN.md's body
    is rewritten from the step files: if someone edited it, their version is kept under
    ``archive_dir`` first."""
    from maker.core.clock import file_stamp, utc_now
    from maker.store.atomic import atomic_write
    from maker.store.frontmatter import read_front_matter

    try:
        meta, body = read_front_matter(path)
    except PlanFileError:
        return {}
    if meta.get("body_sha256") not in (None, body_sha256(body.strip())):
        atomic_write(archive_dir / f"PLAN-edited-{file_stamp(utc_now())}.md",
                     path.read_text(encoding="utf-8"))
    return meta


def render_overview(plan: StoredPlan, root: Path, shown: Mapping[int, str] | None = None,
                    policy: str = "") -> str:
    """PLAN.md's body. What users and models wrote is kept verbatim but for control
    characters; in the table and the graph it is escaped, so a title stays a title."""
    shown = shown or {}
    first = task_line(plan.task, 120, "the Task section below")
    lines = [f"# Plan: {first}", "",
             "> Written by maker. The step files under `steps/` are the source of truth: "
             "edit them freely, then run `maker status`.", "",
             "## Task", "", plan.task.strip() or "(none given)", "",
             "## Reasoning", "", plan.reasoning.strip(), "",
             *([f"Approval policy: {md_cell(policy)}", ""] if policy else []),
             "## Steps", "",
             "| # | Title | Type | Status | Depends on | Next |",
             "|---|---|---|---|---|---|"]
    prefix = os.path.join(str(root), "")
    for r in plan.steps:
        s = r.spec
        lines.append(_row(prefix, s.step, s.title, s.is_conditional,
                          s.next_step_sequence_number, r.path,
                          shown.get(r.number, r.status), tuple(r.depends_on)))
    lines += _together(plan)
    lines += ["", "## Dependency graph", ""]
    if len(plan.steps) > _GRAPH_LIMIT:
        lines.append(f"({len(plan.steps)} steps: too many to draw; see the table.)")
        return strip_controls("\n".join(lines))
    lines += ["```mermaid", "flowchart TD"]
    for r in plan.steps:
        lines.append(_node(r.number, r.title, r.spec.is_conditional,
                           shown.get(r.number, r.status)))
    # Each step's next (read here, not through plan.get: no copy of a kept record).
    nexts = {r.number: r.spec.next_step_sequence_number for r in plan.steps}
    for r in plan.steps:
        nxt = r.spec.next_step_sequence_number
        if nxt in nexts:
            lines.append(f"  s{r.number} --> s{nxt}")
        for d in r.depends_on:
            if d in nexts and nexts[d] != r.number:
                lines.append(f"  s{d} -.-> s{r.number}")
    lines.append("```")
    return strip_controls("\n".join(lines))


def _together(plan: StoredPlan) -> list[str]:
    """Which steps may run at the same time (``maker run --parallel N``, /maker:step):
    independent, and what they say they write (``writes``) cannot meet."""
    if len(plan.steps) > _GRAPH_LIMIT:
        return []
    from maker.planner.writes import beside

    pairs = beside([(r.number, list(r.depends_on), r.spec.writes) for r in plan.steps])
    if pairs is None:
        return ["", "## Steps that may run together", "",
                "Not worked out here: what the steps write takes too long to compare. "
                "`maker status` shows the steps that may start together now."]
    if not pairs:
        return []
    return ["", "## Steps that may run together", "",
            *(f"- step {n} beside step{'s' if len(ms) > 1 else ''} "
              f"{', '.join(map(str, ms))}" for n, ms in sorted(pairs.items()))]
