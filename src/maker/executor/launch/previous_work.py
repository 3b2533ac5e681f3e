"""The brief's "Context from previous work" (seed 002, docs/architecture.md#the-seeds), bounded
so it never grows.

The previous agent's ``summary`` and ``for_next_agent`` (from the handoff accepted most
recently), the ``summary`` of each step this one depends on (``depends_on``, nearest
first), and the newest facts of ``NOTES.md``, each cut to a ``BriefBudget``, with a line
saying how much was left out and where to read it whole. ``maker.executor.launch.brief`` puts
it in every brief (the plugin's executor's, and ``maker run``'s sessions'); seed 000's
AgentRunner puts it in its prompt (``persistent_context``).

A step with a ``component`` sees its part of the plan only (seed 002's
``get_context_for_prompt(component_id)``): the facts of its component's steps, of the
steps it depends on, and the plan-wide ones (``maker.store.fact_scope``); and the
previous agent is the one that handed off last among those steps and the steps with no
component. A step with no component sees everything.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.bounded import INPUT_LIMIT, open_regular
from maker.core.text import strip_controls
from maker.errors import InputError
from maker.store.fact_scope import visible_to
from maker.store.notes import PREVIOUS_PLAN, read_notes

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["BriefBudget", "context_section", "cut", "persistent_context", "previous_handoff",
           "shown_path"]

_ACCEPTED_AT = re.compile(r"^accepted_at:[ \t]*['\"]?([^'\"\n]+)", re.MULTILINE)
_CUT = " …"
_MIN_SUMMARY = 80  # room below which no further summary is read
_HEAD_BYTES = 1024  # the gate writes accepted_at third: it is in the first bytes


@dataclass(frozen=True)
class BriefBudget:
    """Size limits, in characters, of the parts of a brief that would otherwise grow.

    ``notes_chars`` bounds the NOTES.md facts (newest kept), ``fact_chars`` each one
    fact, ``for_next_agent_chars`` the previous agent's note, ``summaries_chars`` the
    summaries of the previous step and of the steps this one depends on together,
    ``summary_chars`` each one, ``summaries_named`` how many left-out steps are named,
    ``outputs_chars`` the referenced outputs, ``task_chars`` the plan's task line.
    """

    notes_chars: int = 6000
    fact_chars: int = 600
    for_next_agent_chars: int = 3000
    summaries_chars: int = 4000
    summary_chars: int = 800
    summaries_named: int = 12
    outputs_chars: int = 60_000
    task_chars: int = 1000


def previous_handoff(store: PlanStore, step: int,
                     among: Collection[int] | None = None) -> dict[str, Any] | None:
    """The handoff accepted most recently, other than ``step``'s own (and of a step in
    ``among``, when given); None if none.

    "Most recently" is by ``accepted_at``, which the gate writes; a file without one
    (a hand-written handoff) counts as oldest. Ties go to the higher step number.
    """
    # (each file's key read once while it is unchanged: a long run asks at every step)
    best = max((key for key in store.handoff_heads(_key).values()
                if key is not None and key[1] != step and (among is None or key[1] in among)),
               default=None)
    return store.read_handoff(best[1]) if best is not None else None


def _key(path: Path) -> tuple[str, int] | None:
    """``(accepted_at, step number)`` of a handoff file; None for a name with no number."""
    head = path.name.split("-", 1)[0]
    if not head.isdigit():
        return None
    m = _accepted_at(path)
    return (m.group(1).strip() if m else "", int(head))


def _accepted_at(path: Path) -> re.Match[str] | None:
    """The ``accepted_at`` line of a handoff's front matter, reading little of the file."""
    try:
        with open_regular(path) as fh:  # a FIFO among the handoffs must not hang the brief
            text = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
            end = text.find("\n---", 4)
            # Search whole lines only: the head may end in the middle of one.
            m = _ACCEPTED_AT.search(text, 0, end if end > 0 else max(0, text.rfind("\n")))
            if m is None and end < 0:  # a long front matter: read the rest of it
                text += fh.read(INPUT_LIMIT).decode("utf-8", errors="replace")
                end = text.find("\n---", 4)
                m = _ACCEPTED_AT.search(text, 0, end if end > 0 else len(text))
    except (OSError, InputError):
        return None
    return m


def persistent_context(store: PlanStore, plan: StoredPlan, step: int,
                       budget: BriefBudget | None = None) -> str:
    """The brief's "Context from previous work" for ``step``: the previous agent's
    ``for_next_agent`` and the plan's NOTES.md facts (newest first kept), bounded by
    ``budget``; what the headless runner puts in its prompt too (seed 002)."""
    return strip_controls(context_section(store, plan, step, store.project,
                                           budget or BriefBudget()))


def context_section(store: PlanStore, plan: StoredPlan, step: int, project: Path,
                    budget: BriefBudget) -> str:
    lines = ["## Context from previous work"]
    record = plan.find(step)
    scope = _Scope.of(plan, record)
    prev = previous_handoff(store, step, scope.steps if scope.component else None)
    room = [budget.summaries_chars]  # what the summaries may still take
    if prev is not None:
        n = prev.get("step", "?")
        status = prev.get("status", "?")
        note = str(prev.get("for_next_agent") or "").strip()
        among = (f"; the latest of component `{scope.component}`, of the steps this one "
                 "depends on and of the plan-wide ones") if scope.component else ""
        lines += ["", f"### From the previous agent (step {n}, {status}{among})", ""]
        summary = _summary(prev)
        if summary:
            where = shown_path(_handoff_file(store, plan, n), project)
            lines.append("What it did (its `summary`): "
                         + _within(summary, room, budget, where))
            lines.append("")
        if note:
            lines.append(cut(note, budget.for_next_agent_chars))
            if len(note) > budget.for_next_agent_chars:
                where = shown_path(_handoff_file(store, plan, n), project)
                lines += ["", f"({len(note) - budget.for_next_agent_chars} more characters "
                          f"left out: read `for_next_agent` in {where})"]
        else:
            lines.append("(it left no note for you)")
    shown = prev.get("step") if prev is not None else None
    deps = [d for d in (record.depends_on if record is not None else []) if d != shown]
    if deps:
        lines.append(_depends_section(store, plan, deps, project, budget, room))
    lines.append(_notes_section(store, plan, project, budget, scope))
    return "\n".join(lines)


@dataclass(frozen=True)
class _Scope:
    """What a step is shown: ``component`` (None: everything), the steps it depends on
    (``depends``), and the steps whose previous agent it may hear from (``steps``)."""

    component: str | None
    depends: frozenset[int]
    steps: frozenset[int]
    components: dict[int, str | None]

    @classmethod
    def of(cls, plan: StoredPlan, record: StepRecord | None) -> _Scope:
        component = record.spec.component if record is not None else None
        if component is None or record is None:
            return cls(None, frozenset(), frozenset(), {})
        components = plan.components()
        depends = frozenset(record.depends_on)
        return cls(component, depends, depends | {n for n, c in components.items()
                                                  if c in (component, None)}, components)

    def shows(self, fact: str) -> bool:
        return visible_to(fact, self.component, self.depends, self.components)


def _summary(handoff: dict[str, Any]) -> str:
    summary = handoff.get("summary")
    return summary.strip() if isinstance(summary, str) else ""


def _within(summary: str, room: list[int], budget: BriefBudget, where: str) -> str:
    """``summary`` cut to its own limit and to what ``room`` has left (which it spends),
    with where to read it whole when it was cut."""
    limit = min(budget.summary_chars, room[0])
    text = cut(summary, limit)
    if len(summary) > limit:
        text += f" (cut: read `summary` in {where})"
    room[0] -= len(text)
    return text


def _depends_section(store: PlanStore, plan: StoredPlan, deps: list[int], project: Path,
                     budget: BriefBudget, room: list[int]) -> str:
    """The ``summary`` of each step this one depends on, nearest first, within ``room``:
    the steps that do not fit are named (a few) and counted, never read."""
    lines = ["", "### What the steps this one depends on did (their `summary`)", ""]
    left_out: list[int] = []
    for n in sorted(set(deps), reverse=True):  # the nearest step first
        if left_out or room[0] < _MIN_SUMMARY:
            left_out.append(n)
            continue
        handoff = store.read_handoff(n) or {}
        summary = _summary(handoff)
        if not summary:
            line = f"- step {n}: no accepted handoff yet"
            room[0] -= len(line)
        else:
            where = shown_path(_handoff_file(store, plan, n), project)
            line = f"- step {n} ({handoff.get('status', '?')}): " + _within(
                summary, room, budget, where)
        lines.append(line)
    if left_out:
        named = ", ".join(str(n) for n in left_out[:budget.summaries_named])
        more = len(left_out) - budget.summaries_named
        named += f" and {more} more" if more > 0 else ""
        lines.append(f"({len(left_out)} older summaries left out (steps {named}): read "
                     f"`summary` in their handoffs, {shown_path(store.handoffs_dir, project)}"
                     "/NN-*.md)")
    return "\n".join(lines)


def _handoff_file(store: PlanStore, plan: StoredPlan, n: Any) -> Path:
    for r in plan.steps:
        if r.number == n:
            return store.handoffs_dir / r.path.name
    return store.handoffs_dir


def _attempt(meta: dict[str, Any]) -> int:
    """A step's current attempt: 1, then one more for each reset."""
    resets = meta.get("resets")
    return resets + 1 if type(resets) is int and resets >= 0 else 1


def _notes_section(store: PlanStore, plan: StoredPlan, project: Path,
                   budget: BriefBudget, scope: _Scope) -> str:
    notes_rel = shown_path(store.notes_path, project)
    attempts = {r.number: _attempt(r.meta) for r in plan.steps if r.meta.get("resets")}
    everything = read_notes(store.notes_path, plan=plan.created_at or None, attempts=attempts)
    notes = {title: shown for title, entries in everything.items()
             if (shown := [e for e in entries if title.startswith(PREVIOUS_PLAN)
                           or scope.shows(e)])}
    others = sum(map(len, everything.values())) - sum(map(len, notes.values()))
    head = f"### Project notes ({notes_rel}: durable facts from earlier steps, newest last)"
    if scope.component is not None:
        head = (f"### Project notes (facts of component `{scope.component}`, of the steps "
                f"this one depends on and plan-wide ones, from {notes_rel}; newest last)")
    lines = ["", head]
    if others:
        lines += ["", f"({others} fact{'s' if others > 1 else ''} of other components left "
                      f"out: {'they are' if others > 1 else 'it is'} in {notes_rel})"]
    if not notes:
        return "\n".join([*lines, "", "(none yet)"])
    kept = _newest_within(notes, budget)
    archived = any(store.archive_dir.glob("NOTES-*.md"))
    archive = f"{shown_path(store.archive_dir, project)}/NOTES-*.md"
    if archived:
        lines += ["", f"(The oldest facts are archived in {archive}.)"]
    for title, entries in notes.items():
        n = kept[title]
        lines += ["", f"#### {title}", ""]
        left_out = len(entries) - n
        if left_out:
            lines.append(f"({left_out} older {title.lower()} left out: read them in "
                         f"{notes_rel})")
        for entry in entries[len(entries) - n:]:
            lines.append("- " + cut(entry, budget.fact_chars))
    return "\n".join(lines)


def _newest_within(notes: dict[str, list[str]], budget: BriefBudget) -> dict[str, int]:
    """How many of each section's newest entries fit the budget, taken in turns."""
    kept = dict.fromkeys(notes, 0)
    remaining = budget.notes_chars
    open_ = [t for t in notes if notes[t]]
    while open_:
        for title in list(open_):
            entries = notes[title]
            if kept[title] >= len(entries):
                open_.remove(title)
                continue
            cost = len(cut(entries[-1 - kept[title]], budget.fact_chars)) + 3
            if cost > remaining:
                open_.remove(title)  # newest first: an older one must not jump the gap
                continue
            remaining -= cost
            kept[title] += 1
    return kept


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(0, limit - len(_CUT))].rstrip() + _CUT


def shown_path(path: Path, project: Path) -> str:
    try:
        return str(path.relative_to(project))
    except ValueError:
        return str(path)
