"""A plan as stored: its steps' records, their statuses and their files.

A long-lived store hands out the records it keeps (``kept``): read-only all the way
down, copied by ``StoredPlan.get`` for a caller to change. The kept store's invariants,
and the tests that hold them, are written in one place: ``tests/unit/test_kept_records.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn

from maker.core.models import Plan, PlanStep
from maker.errors import StepNotFoundError
from maker.yaml_cleaner.frozen import freeze, thaw

__all__ = ["StepRecord", "StoredPlan", "copy_record", "in_progress", "kept", "occupying"]


@dataclass
class StepRecord:
    """A step as stored: its spec, its status, its resolved dependencies, its file."""

    spec: PlanStep
    status: str
    depends_on: list[int]
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    # The step file's "## Edge cases" section: earlier steps' sweeps write it (maker's
    # code, ``maker.executor.protocol.sweep``), a person may edit it; the brief shows it.
    edge_cases: str = ""

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_kept"):
            self._refuse()
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get("_kept"):
            self._refuse()
        object.__delattr__(self, name)

    def _refuse(self) -> NoReturn:
        raise AttributeError(
            f"step {self.number}'s record is the store's own, shared by every plan "
            "loaded since: change the copy that StoredPlan.get() returns")

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
    # A store that keeps its plan between loads checks a kept record's file again when
    # ``get`` hands out a copy to change (a hand edit just before must not be written
    # over): the record as its file is now.
    _fresh: Callable[[StepRecord], StepRecord] | None = field(default=None, init=False,
                                                               repr=False, compare=False)
    # Set by the store when ``steps`` holds only kept records: then the positions where
    # ``get`` put a copy are the only records not kept (``kept_but``).
    _copied: set[int] | None = field(default=None, init=False, repr=False, compare=False)
    _list: list[StepRecord] | None = field(default=None, init=False, repr=False,
                                           compare=False)

    def all_kept(self) -> None:
        """Note that ``steps`` holds only the store's kept records (``PlanStore.load``)."""
        self._copied, self._list = set(), self.steps

    def kept_but(self, steps: list[StepRecord]) -> set[int] | None:
        """The positions of ``steps`` (this plan's) holding a record that is not kept,
        when only ``get`` put any there; None when that is not known (a plan not loaded
        so, or whose list was replaced)."""
        return self._copied if self._list is steps and steps is self.steps else None

    def find(self, number: int) -> StepRecord | None:
        """Step ``number``'s record to read (perhaps the store's own: see ``get``), or
        None when the plan has no such step."""
        i = self._index.get(number)
        if i is None or i >= len(self.steps) or self.steps[i].number != number:
            return next((r for r in self.steps if r.number == number), None)
        return self.steps[i]

    def get(self, number: int) -> StepRecord:
        """Step ``number``'s record, this plan's own to change (and ``save``).

        ``steps`` may hold the store's kept records (``kept``), shared by every plan
        loaded while their files are unchanged: read them there; the first ``get`` of
        one puts a copy of it in their place. So a load costs no copy of a thousand
        records, and an edit never reaches another plan."""
        i = self._index.get(number)
        if i is None or i >= len(self.steps) or self.steps[i].number != number:
            # Built on first use, again when ``steps`` changed under it: O(1) per lookup
            # (a 1,000-step plan is looked up thousands of times per step).
            self._index = {r.number: j for j, r in enumerate(self.steps)}
            i = self._index.get(number)
        if i is not None:
            record = self.steps[i]
            if record.__dict__.get("_kept"):
                if self._fresh is not None:
                    record = self._fresh(record)
                record = self.steps[i] = copy_record(record)
                if self._copied is not None:
                    self._copied.add(i)
            return record
        known = ", ".join(str(r.number) for r in self.steps[:20])
        raise StepNotFoundError(f"the plan has no step {number} (steps: {known}"
                                f"{', …' if len(self.steps) > 20 else ''})", number)

    def components(self) -> dict[int, str | None]:
        """Each step's ``component`` (None: it has none), as NOTES.md's scopes need it."""
        return {r.number: r.spec.component for r in self.steps}

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


def kept(record: StepRecord) -> StepRecord:
    """``record``, made the store's own: read-only all the way down (an attribute set on
    it or on its spec raises, and so does any change of its ``meta``, its
    ``depends_on`` or the lists in its spec: ``maker.yaml_cleaner.frozen``), and
    ``StoredPlan.get`` hands out a copy of it. Its spec is frozen in place: it is shared
    with the records already handed out, whose specs nothing changes in place either."""
    spec = record.spec
    if not spec.__dict__.get("_frozen"):
        for f in fields(spec):
            object.__setattr__(spec, f.name, freeze(getattr(spec, f.name)))
        object.__setattr__(spec, "_frozen", True)
    object.__setattr__(record, "meta", freeze(record.meta))
    object.__setattr__(record, "depends_on", freeze(record.depends_on))
    object.__setattr__(record, "_kept", True)
    return record


def copy_record(record: StepRecord) -> StepRecord:
    """A copy of ``record`` deep enough that an edit of it never reaches ``record``
    (the spec is shared: nothing changes a spec in place)."""
    return StepRecord(record.spec, record.status, list(record.depends_on), record.path,
                      thaw(record.meta), record.edge_cases)
