"""Events that flow between maker's modules (seeds 000/001, docs/architecture.md#the-seeds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from maker.core.models import Plan, TaskConfig

__all__ = [
    "Event",
    "PlanCreated",
    "StepCompleted",
    "StepFailed",
    "StepFlagged",
    "StepStarted",
    "TaskCompleted",
    "TaskFailed",
    "TaskSubmitted",
]


@dataclass
class Event:
    timestamp: float


@dataclass
class TaskSubmitted(Event):
    instruction: str
    config: TaskConfig


@dataclass
class PlanCreated(Event):
    plan: Plan


@dataclass
class StepStarted(Event):
    step: int
    title: str


@dataclass
class StepCompleted(Event):
    step: int
    output: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepFlagged(Event):
    step: int
    reason: str


@dataclass
class StepFailed(Event):
    step: int
    reason: str


@dataclass
class TaskCompleted(Event):
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskFailed(Event):
    reason: str
