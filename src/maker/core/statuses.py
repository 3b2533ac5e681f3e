"""A step's statuses, on their own: the hooks read them without the plan model."""

from __future__ import annotations

__all__ = ["AWAITING", "STEP_STATUSES"]

AWAITING = "awaiting-approval"  # done, and waiting for a person (or a policy) to approve

STEP_STATUSES: tuple[str, ...] = ("pending", "in-progress", "awaiting-approval", "complete",
                                  "blocked", "failed")
