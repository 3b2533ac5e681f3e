"""One verification run as maker records it: the commands that ran, as evidence, and
those that did not (the record ``maker.verify.runner`` seals and every reader loads)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from maker.core.models import Evidence
from maker.verify.detect import VerifyCommand

__all__ = ["RunStatus", "VerificationRun"]

RunStatus = Literal["passed", "failed", "nothing-to-run"]


@dataclass
class VerificationRun:
    """One verification run: the commands that ran (as Evidence) and those that did not.

    ``passed`` is True only when at least one command ran and every one exited 0;
    ``status`` tells a failure from a project with nothing known to run.
    """

    step: int | None
    project_dir: str
    started_at: str
    finished_at: str
    status: RunStatus
    commands: list[Evidence] = field(default_factory=list)
    not_run: list[VerifyCommand] = field(default_factory=list)
    message: str = ""
    attempt: str = ""  # the step's started_at when it ran: which run of the step
    failed_runs: int = 0  # the failing runs recorded in that run of the step, this one too
    # Whether the recorded file carried maker's valid seal (not part of the record).
    sealed: bool = field(default=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed_command(self) -> Evidence | None:
        return next((e for e in self.commands if e.exit_code != 0), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "project_dir": self.project_dir,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "status": self.status,
            "passed": self.passed,
            "message": self.message,
            "attempt": self.attempt,
            "failed_runs": self.failed_runs,
            "commands": [asdict(e) for e in self.commands],
            "not_run": [asdict(c) for c in self.not_run],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VerificationRun:
        """Raises KeyError/TypeError/ValueError on data that is not a recorded run."""
        status = data["status"]
        if status not in ("passed", "failed", "nothing-to-run"):
            raise ValueError(f"status {status!r}")
        return cls(
            step=data.get("step"), project_dir=str(data["project_dir"]),
            started_at=str(data["started_at"]), finished_at=str(data["finished_at"]),
            status=status,
            commands=[Evidence(**e) for e in data.get("commands") or []],
            not_run=[VerifyCommand(**c) for c in data.get("not_run") or []],
            message=str(data.get("message") or ""), attempt=str(data.get("attempt") or ""),
            failed_runs=int(data.get("failed_runs") or 0))
