"""Where a step leads: its ``next_step_sequence_number``, read one way everywhere."""

from __future__ import annotations

from maker.core.models import END, RUNTIME_DECIDED, PlanStep

__all__ = ["decides_next", "next_label"]


def decides_next(spec: PlanStep) -> bool:
    """Whether ``spec`` decides at run time which step comes next (by its output's
    ``next_step``): a conditional step, or one whose ``next`` is ``RUNTIME_DECIDED``."""
    return spec.is_conditional or spec.next_step_sequence_number == RUNTIME_DECIDED


def next_label(n: int, *, step: str = "{n}", end: str = "end",
               decided: str = "decided at run time") -> str:
    """``n`` (a ``next_step_sequence_number``) in words: ``end``, ``decided`` for a step
    that decides at run time, else ``step`` with the number filled in."""
    if n == END:
        return end
    if n == RUNTIME_DECIDED:
        return decided
    return step.format(n=n)
