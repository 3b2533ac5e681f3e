"""How a headless run ends early: an exit code, what to tell the person, and the event
that records it (None when the task is neither done nor failed: it waits for them)."""

from __future__ import annotations

from maker.core.events import Event

__all__ = ["RunStop"]


class RunStop(Exception):
    def __init__(self, code: int, message: str, event: Event | None) -> None:
        super().__init__(message)
        self.code, self.message, self.event = code, message, event
