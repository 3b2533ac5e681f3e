"""How a headless run ends early: an exit code, what to tell the person, and the event
that records it (None when the task is neither done nor failed: it waits for them)."""

from __future__ import annotations

from maker.core.events import Event

__all__ = ["EXIT_STOPPED", "STOPPED_SAID", "RunStop", "stop_asked"]


EXIT_STOPPED = 5
"""A person asked the run to stop (``/maker:run --stop``): what ran finished, nothing more
started."""
STOPPED_SAID = ("stopped as the user asked (/maker:run --stop): what ran has finished, "
                "nothing more was started; /maker:run goes on from here")


def stop_asked(keep_going: object) -> RunStop | None:
    """The stop a person asked for, when ``keep_going`` (``EngineParts.keep_going``)
    says not to start another step; else None."""
    if callable(keep_going) and not keep_going():
        return RunStop(EXIT_STOPPED, STOPPED_SAID, None)
    return None


class RunStop(Exception):
    def __init__(self, code: int, message: str, event: Event | None) -> None:
        super().__init__(message)
        self.code, self.message, self.event = code, message, event
