"""The NOTES.md a new plan starts with: the old plan's discoveries, and what its planner
left for the steps (seed 002's context fields, ``maker.core.agent_context``;
docs/architecture.md#the-seeds).

``PlanStore.write_plan`` calls :func:`start_notes` under the plan's lock, so the notes
are written with the plan or not at all; a refused plan never reaches it. The
planner's discoveries, decisions and blockers are plan-wide facts (no step tag); its
``summary`` and ``for_next_agent`` go to the section "From the planner". Every step's
brief shows NOTES.md (``maker.executor.launch.previous_work``), so every step reads them.
"""

from __future__ import annotations

from pathlib import Path

from maker.core.agent_context import AgentContext
from maker.core.bounded import read_text_file
from maker.store.atomic import atomic_write
from maker.store.notes import add_notes, notes_for_new_plan

__all__ = ["PLANNER_SECTION", "planner_facts", "start_notes"]

PLANNER_SECTION = "From the planner"


def planner_facts(context: AgentContext) -> dict[str, list[str]]:
    """The planner's context as NOTES.md facts, by kind or section title."""
    notes = [f"{label}: {text.strip()}" for label, text in (
        ("Its summary", context.summary), ("For every step", context.for_next_agent))
        if text.strip()]
    return {**context.facts(), PLANNER_SECTION: notes}


def start_notes(path: Path, archive_dir: Path, plan: str, context: AgentContext) -> int:
    """Start NOTES.md (``path``) for the plan created at ``plan``: the old plan's
    discoveries kept as such (``notes_for_new_plan``), then the planner's ``context``
    added. Returns how many of the planner's facts were added. The caller holds the
    plan lock."""
    if path.is_file():  # the old plan's facts are not this plan's
        atomic_write(path, notes_for_new_plan(read_text_file(path), plan))
    facts = planner_facts(context)
    if not any(facts.values()):
        return 0
    return add_notes(path, facts, archive_dir=archive_dir, plan=plan)
