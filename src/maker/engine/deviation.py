"""Orient's deviation gate in ``maker run`` (``maker.executor.protocol.orient`` holds the rules).

A session that records a major deviation (``maker orient N major``, which the engine's
PreToolUse hook runs as this run's own maker) stops before any edit. ``STEP_AUTOAPPROVE=1``
in ``maker run``'s environment (a person's setting) approves the revised step and the
session is resumed to do it; otherwise the run stops for a person (exit 4, as for an
approval), and ``maker run`` continues once they decided.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.executor.protocol.orient import autoapproved, decide_deviation, pending_deviation

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["after_answer", "stop_reason"]


def stop_reason(record: StepRecord) -> str:
    """Why the run stops at step ``record``'s pending deviation, and how a person goes on."""
    dev = pending_deviation(record) or {}
    n = record.number
    return (f"step {n} ({record.title}) deviates from the plan: {dev.get('what_changed')}; "
            f"the revised step: {dev.get('revised_task')}. A person decides: `maker step "
            f"approve {n}` (the revised step) or `maker step reject {n}` in a terminal, or "
            f"/maker:approve {n} or /maker:reject {n} in Claude Code; then `maker run` "
            "continues the plan")


def after_answer(store: PlanStore, n: int) -> tuple[str, str]:
    """After a session of step ``n`` answered: ``("", "")`` when no deviation is pending;
    ``("resume", feedback)`` when ``STEP_AUTOAPPROVE=1`` approved the revised step;
    ``("stop", reason)`` when a person decides."""
    record = store.load_step(n)
    dev = pending_deviation(record)
    if dev is None:
        return "", ""
    if not autoapproved():
        return "stop", stop_reason(record)
    decide_deviation(store, n, True, "STEP_AUTOAPPROVE=1 (a person's setting)")
    return "resume", (f"maker: STEP_AUTOAPPROVE=1 (set by a person for this run) approved "
                      f"the revised step {n}. Go on with it now: do the step as revised "
                      f"({str(dev.get('revised_task'))[:500]}), then answer with the "
                      "handoff.")
