"""Plan semantics: the dependencies a step has when the planner left them out."""

from __future__ import annotations

from dataclasses import replace

from maker.core.models import RUNTIME_DECIDED, Plan, PlanStep, step_refs

__all__ = ["resolve_dependencies"]


def resolve_dependencies(plan: Plan) -> Plan:
    """Fill each step's ``depends_on`` when the planner left it out.

    A step depends on the steps whose outputs it reads, on the step(s) whose
    ``next`` leads to it, and, when nothing leads to it (a branch target), on the
    nearest conditional step before it.
    """
    leads_to: dict[int, list[int]] = {}
    for s in plan.steps:
        leads_to.setdefault(s.next_step_sequence_number, []).append(s.step)
    first = min((s.step for s in plan.steps), default=0)
    out: list[PlanStep] = []
    last_conditional: int | None = None
    for s in sorted(plan.steps, key=lambda s: s.step):
        if s.depends_on is None:
            deps = [n for n in step_refs(s.input_variables) if n != s.step]
            preds = [p for p in leads_to.get(s.step, []) if p != s.step]
            if not preds and s.step != first and last_conditional is not None:
                preds = [last_conditional]
            deps += [p for p in preds if p not in deps and p < s.step]
            s = replace(s, depends_on=sorted(deps))
        out.append(s)
        if s.next_step_sequence_number == RUNTIME_DECIDED:
            last_conditional = s.step
    order = {s.step: i for i, s in enumerate(plan.steps)}
    out.sort(key=lambda s: order[s.step])
    return replace(plan, steps=out)
