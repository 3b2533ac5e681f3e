"""The module interface: a module turns one event into zero or more events."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from maker.core.events import Event

__all__ = ["Module"]


class Module(ABC):
    @abstractmethod
    def process(self, event: Event) -> AsyncIterator[Event]:
        """Yield the events that ``event`` causes (none for events it does not handle)."""
