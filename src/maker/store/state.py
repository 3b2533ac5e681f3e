"""What the Stop hook reads of a plans directory, without the plan model.

:class:`PlanState` has the paths, the lock and the in-progress marker of a
:class:`~maker.store.plan_store.PlanStore`, and one step's status and title
(``maker.store.step_peek``). It imports neither PyYAML nor the plan model: a hook
that fires on every stop pays only for what it reads. Anything more (rebuilding a
lost marker, a step file in an unusual form, recording a failure) goes through
:meth:`PlanState.full`, the plan store itself.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from maker.store.active import read_active, write_active
from maker.store.atomic import plan_lock
from maker.store.journal import TXN_DIR
from maker.store.step_peek import peek

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any, Protocol

    from maker.store.plan_store import PlanStore
    from maker.store.records import StoredPlan

__all__ = ["PlanState"]  # and StateDir, for the type checker


if TYPE_CHECKING:  # for the type checker only: a Protocol needs typing at run time
    class StateDir(Protocol):
        """Where a plan keeps maker's own state (a ``PlanStore`` or a ``PlanState``)."""

        @property
        def state_dir(self) -> Path: ...


class PlanState:
    """One plans directory, as the Stop hook reads it (same paths as ``PlanStore``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.steps_dir = self.root / "steps"
        self.state_dir = self.root / ".maker"
        self.active_path = self.state_dir / "active.json"
        self._full: PlanStore | None = None
        self._may_vote: dict[int, bool] = {}  # what step_status read of each step

    def full(self) -> PlanStore:
        """The plan store of this directory, for everything beyond the marker."""
        if self._full is None:
            from maker.store.plan_store import PlanStore

            self._full = PlanStore(self.root)
        return self._full

    def lock(self, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        return plan_lock(self.root, timeout)

    def settle(self) -> None:
        """As ``PlanStore.settle``: a change cut short by a crash is undone first."""
        if os.path.lexists(self.root / TXN_DIR):
            with self.lock():
                pass

    def load(self, check_approvals: bool = True) -> StoredPlan:
        return self.full().load(check_approvals)

    def read_active(self) -> dict[str, Any] | None:
        return read_active(self)

    def write_active(self, data: dict[str, Any] | None) -> None:
        write_active(self, data)

    def step_status(self, number: int) -> tuple[str, str]:
        """``(status, title)`` of step ``number``; a file in an unusual form is read and
        validated in full (PlanFileError, StepNotFoundError as ``load_step``)."""
        self.settle()
        path = self.step_path(number)
        peeked = peek(path, number) if path is not None else None
        if peeked is not None:
            status, title, fields = peeked
            self._may_vote[number] = fields.get("task_type") == "conditional_step" or \
                "votes" in fields
            return status, title
        record = self.full().load_step(number)
        self._may_vote[number] = record.spec.is_conditional or bool(record.spec.votes)
        return record.status, record.title

    def may_vote(self, number: int) -> bool:
        """Whether step ``number`` may be decided by a vote (conditional, or ``votes:``),
        as ``step_status`` just read it; True when it has not (the caller then asks the
        ballots, which know)."""
        return self._may_vote.get(number, True)

    def step_path(self, number: int) -> Path | None:
        # As PlanStore.step_path: found by its numeric prefix, the first in the
        # folder's order. Only names holding the number's digits can match: the
        # others (nearly all of a long plan's) are passed over without a split.
        digits = str(number)
        try:
            names = os.listdir(self.steps_dir)
        except OSError:
            return None
        for name in names:
            if digits not in name:
                continue
            head = name.split("-", 1)[0]
            if head.isdigit() and int(head) == number and name.endswith(".md"):
                return self.steps_dir / name
        return None
