"""A plan as stored: its steps' records, their statuses and their files."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from maker.core.models import Plan, PlanStep
from maker.errors import StepNotFoundError

__all__ = ["StepRecord", "StoredPlan", "in_progress", "occupying"]


@dataclass
class StepRecord:
    """A step as stored: its spec, its status, its resolved dependencies, its file."""

    spec: PlanStep
    status: str
    depends_on: list[int]
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def number(self) -> int:
        return self.spec.step

    @property
    def title(self) -> str:
        return self.spec.title


@dataclass
class StoredPlan:
    task: str
    reasoning: str
    created_at: str
    steps: list[StepRecord]

    _index: dict[int, int] = field(default_factory=dict, init=False, repr=False,
                                   compare=False)

    def get(self, number: int) -> StepRecord:
        i = self._index.get(number)
        if i is None or i >= len(self.steps) or self.steps[i].number != number:
            # Built on first use, again when ``steps`` changed under it: O(1) per lookup
            # (a 1,000-step plan is looked up thousands of times per step).
            self._index = {r.number: j for j, r in enumerate(self.steps)}
            i = self._index.get(number)
        if i is not None:
            return self.steps[i]
        known = ", ".join(str(r.number) for r in self.steps[:20])
        raise StepNotFoundError(f"the plan has no step {number} (steps: {known}"
                                f"{', …' if len(self.steps) > 20 else ''})", number)

    def as_plan(self) -> Plan:
        return Plan(reasoning=self.reasoning, steps=[r.spec for r in self.steps], task=self.task)

    def as_raw(self) -> dict[str, Any]:
        """The plan as the planner's YAML data, so the linter checks hand edits too."""
        return {"task": self.task, "reasoning": self.reasoning,
                "plan": [dict(asdict(r.spec), depends_on=list(r.depends_on))
                         for r in self.steps]}


def in_progress(plan: StoredPlan) -> list[StepRecord]:
    """The steps whose stored status is in-progress (normally none or one)."""
    return [r for r in plan.steps if r.status == "in-progress"]


def occupying(plan: StoredPlan) -> list[StepRecord]:
    """The steps that keep another from starting: in progress, or awaiting approval."""
    return [r for r in plan.steps if r.status in ("in-progress", "awaiting-approval")]
