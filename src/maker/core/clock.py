"""maker's timestamps: one format for records, one derived from it for file names."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["file_stamp", "utc_now"]


def utc_now() -> str:
    """Now, in UTC, as maker records it: ``2025-01-31T12:00:00.000000Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def file_stamp(when: str | None = None) -> str:
    """A ``utc_now()`` time (now when None) as it appears in file names (no ``:`` or ``.``)."""
    return (when or utc_now()).replace(":", "").replace(".", "-")
