"""A complete step's evidence: a sealed ``maker verify`` run that passed after it started.

A handoff cannot just claim ``exit_code: 0``: when the project has verification
commands, the gate looks for the run that ``maker verify --step N`` recorded and
sealed (``maker.store.seal``), in this project, with the project's own commands; and
once that record shows the step's fix budget spent (``maker.verify.fixes``), no
``complete`` handoff is accepted for this run of the step.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.errors import PlanFileError, Problem
from maker.store.records import StepRecord

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.verify.result import VerificationRun

__all__ = ["check_evidence", "check_landed", "project_dir"]


def project_dir(store: PlanStore) -> Path:
    """Where verification runs: the plan's project (as ``maker verify``)."""
    return store.project


def check_landed(store: PlanStore, record: StepRecord, problems: list[Problem]) -> None:
    """A step run beside others is complete only once its change has landed in the main
    checkout (``maker land N``: merged file by file and verified there)."""
    from maker.store.workspace import worktree_of

    if worktree_of(store, record) is not None:
        n = record.number
        problems.append(Problem("evidence", f"step {n} runs in its own worktree, and its "
                                "change has not landed in the main checkout yet", n,
                                fix="fix the handoff's other problems: maker lands the "
                                    "change when it accepts the handoff (or run `maker land "
                                    f"{n}`, which merges it and verifies the main checkout, "
                                    "then send the handoff again)"))


def check_evidence(store: PlanStore, record: StepRecord,
                   problems: list[Problem]) -> VerificationRun | None:
    """The recorded verification run behind a complete step, adding problems if lacking."""
    from maker.verify.detect import detect_commands
    from maker.verify.runner import evidence_path, recorded_evidence

    if not detect_commands(project_dir(store)):
        return None  # no verification command is known: none can be required
    n = record.number
    rerun = f"run `maker verify --step {n}`; once it passes, send the handoff again"
    try:
        run = recorded_evidence(store, n)
    except PlanFileError as exc:
        problems.append(Problem("evidence", f"the recorded verification cannot be read: {exc}",
                                n, fix=rerun))
        return None
    if run is None:
        problems.append(Problem("evidence", "no verification run is recorded for this step: "
                                "a complete step needs one that passed", n, fix=rerun))
        return None
    if not run.sealed:
        problems.append(Problem("evidence", f"the recorded verification in "
                                f"{evidence_path(store, n)} was not written by `maker verify` "
                                "(its seal is missing or wrong), so it is not evidence", n,
                                fix=f"run `maker verify --step {n}` yourself; never write or "
                                    "edit maker's files. Once it passes, send the handoff again"))
        return None
    if os.path.realpath(run.project_dir) != os.path.realpath(project_dir(store)):
        problems.append(Problem("evidence", f"the recorded verification ran in "
                                f"{run.project_dir}, not in this project", n, fix=rerun))
        return None
    started = _when(record.meta.get("started_at"))
    finished = _when(run.finished_at)
    if started is not None and (finished is None or finished <= started):
        problems.append(Problem("evidence", f"the recorded verification finished at "
                                f"{run.finished_at}, before this step started "
                                f"({record.meta.get('started_at')})", n, fix=rerun))
        return None
    # Seed 004's max_fix_attempts (docs/architecture.md#the-seeds): past it, the step's run is over.
    if run.failed_runs:
        from maker.store.settings import load_settings
        from maker.verify.fixes import spent, spent_problem

        bound = load_settings(store.root).max_fix_attempts
        if spent(run, str(record.meta.get("started_at") or ""), bound):
            problems.append(Problem("status", spent_problem(run, bound), n,
                                    fix="hand off with `status: failed`, what still fails "
                                        "in `blockers` and what you tried in `summary`"))
            return None
    expected = [c.command for c in detect_commands(project_dir(store))]
    ran = [c.command for c in run.commands]
    if run.passed and ran != expected:
        problems.append(Problem(
            "evidence", f"the recorded verification ran {ran}, but the project's commands "
            f"are {expected}", n,
            fix=f"run `maker verify --step {n}` as it is, without overriding FORMAT_CMD, "
                "LINT_CMD, BUILD_CMD or TEST_CMD"))
        return None
    if not run.passed:
        bad = run.failed_command
        what = (f"`{bad.command}` exited with {bad.exit_code}" if bad is not None
                else f"its status is {run.status}")
        tail = (bad.output_tail or "").strip()[-600:] if bad is not None else ""
        problems.append(Problem("evidence", f"the recorded verification did not pass: {what}"
                                + (f"; its output ends with:\n{tail}" if tail else ""), n,
                                fix="fix what fails, then " + rerun))
        return None
    return run


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
