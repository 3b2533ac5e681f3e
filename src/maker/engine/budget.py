"""A run's budget (``maker run --max-budget-usd``): a circuit breaker over the ledger."""

from __future__ import annotations

import math

from maker.engine.ledger import EPSILON, Ledger, usd
from maker.errors import BudgetExceededError

__all__ = ["Budget"]


class Budget:
    """The run's circuit breaker: at most ``max_usd`` (None: no limit) spent on the plan,
    as its ledger counts it (failed and flagged calls, and earlier runs, included).

    ``own_calls``: count only the calls made after the budget was made (``maker
    calibrate``'s samples, not the plan's earlier runs)."""

    def __init__(self, max_usd: float | None, ledger: Ledger, *,
                 own_calls: bool = False) -> None:
        if max_usd is not None and (isinstance(max_usd, bool) or not math.isfinite(max_usd)
                                    or max_usd < 0):
            raise ValueError(f"max_usd: {max_usd!r} is not an amount >= 0")
        self.max_usd = max_usd
        self.ledger = ledger
        self.before = ledger.total() if own_calls else 0.0

    @property
    def spent(self) -> float:
        return self.ledger.total() - self.before

    @property
    def remaining(self) -> float | None:
        """What is left (never below 0), or None without a limit."""
        if self.max_usd is None:
            return None
        return max(0.0, self.max_usd - self.spent)

    @property
    def exhausted(self) -> bool:
        remaining = self.remaining
        return remaining is not None and remaining <= EPSILON

    def for_call(self) -> float | None:
        """The ``max_budget_usd`` to give the next SDK call: what is left of the run's
        budget, so that one runaway call is cut too (None: no limit)."""
        return self.remaining

    def check(self) -> None:
        """Raise BudgetExceededError when the budget is spent; before every call."""
        if self.max_usd is None:
            return
        spent = self.spent
        if self.max_usd - spent > EPSILON:
            return
        if self.before:
            raise BudgetExceededError(
                f"the budget is spent: {usd(spent)} of {usd(self.max_usd)} "
                f"(--max-budget-usd {self.max_usd:g}) on this command's calls, counted in "
                f"{self.ledger.path}. Run it again with a larger --max-budget-usd, or fewer "
                "samples.")
        raise BudgetExceededError(
            f"the run's budget is spent: {usd(spent)} of {usd(self.max_usd)} "
            f"(--max-budget-usd {self.max_usd:g}), counted in {self.ledger.path}. The plan "
            "is kept as it is; `maker run --max-budget-usd X` with a higher X continues it "
            f"(X counts what the plan has spent so far: give more than {usd(spent)}).")
