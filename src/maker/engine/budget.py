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
    calibrate``'s samples, not the plan's earlier runs); ``since``: the ledger's
    ``(total, calls of unknown cost)`` when the budget began (a ``/maker:run``'s, kept
    across its stretches)."""

    def __init__(self, max_usd: float | None, ledger: Ledger, *,
                 own_calls: bool = False, since: tuple[float, int] | None = None,
                 hint: str = "") -> None:
        if max_usd is not None and (isinstance(max_usd, bool) or not math.isfinite(max_usd)
                                    or max_usd < 0):
            raise ValueError(f"max_usd: {max_usd!r} is not an amount >= 0")
        self.max_usd = max_usd
        self.ledger = ledger
        self.hint = hint  # how the person goes on, for a budget given elsewhere
        self.before = ledger.total() if own_calls else 0.0
        self.unknown_before = ledger.unknown_costs() if own_calls else 0
        if since is not None:  # (the ledger's totals when the budget began: a run's)
            self.before, self.unknown_before = since

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
        unknown = self.ledger.unknown_costs() - self.unknown_before
        if unknown:  # (counted as unknown, never as zero: the budget may be spent)
            raise BudgetExceededError(
                f"{unknown} call(s) counted against the budget have no cost the SDK "
                f"reported (see {self.ledger.path}, cost_known: false), so maker cannot "
                "tell that the budget is not spent; it stops here. Run without a budget, "
                "or with a client that reports each call's cost.")
        spent = self.spent
        if self.max_usd - spent > EPSILON:
            return
        if self.hint:
            raise BudgetExceededError(
                f"the run's budget is spent: {usd(spent)} of {usd(self.max_usd)} "
                f"since it was given, counted in {self.ledger.path}. {self.hint}")
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
