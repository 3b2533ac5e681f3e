"""A step's statuses, on their own: the hooks read them without the plan model."""

from __future__ import annotations

__all__ = ["STEP_STATUSES"]

STEP_STATUSES: tuple[str, ...] = ("pending", "in-progress", "awaiting-approval", "complete",
                                  "blocked", "failed")
