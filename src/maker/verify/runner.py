"""Run a project's verification commands and record what happened as evidence (seed 004,
docs/architecture.md#the-seeds).

Format, lint, build, then the full tests, each in a shell in the project directory with a
timeout (``MAKER_VERIFY_TIMEOUT`` seconds, default 1800). The run stops after the first
command that fails (later results would mislead), listing the commands not run.

Each command's evidence: its command line, exit code, duration and output tail. The run is
written atomically to ``plans/.maker/evidence/step-NN.json`` (``last-run.json``, no step),
sealed (``maker.store.seal``) with a key kept outside the project: ``recorded_evidence``
checks the seal, so the gate refuses a run that ``maker verify`` did not write. A step's
record counts its current run's failures (``maker.verify.fixes``: ``max_fix_attempts``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from maker.core.bounded import read_text_file
from maker.core.clock import utc_now
from maker.core.models import Evidence
from maker.errors import InputError, PlanFileError, VerificationError
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.seal import check, seal
from maker.verify.check_run import Progress, ProgressCallback, run_check, step_box
from maker.verify.detect import (
    ENV_VARS,
    KINDS,
    VerifyCommand,
    detect_commands,
    off_text,
    turned_off,
)
from maker.verify.fixes import failed_runs, step_attempt
from maker.verify.result import RunStatus, VerificationRun

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "evidence_path",
    "recorded_evidence",
    "run_verification",
]

DEFAULT_TIMEOUT_S = 1800.0


def evidence_path(store: PlanStore, step: int | None) -> Path:
    """Where the run for ``step`` is recorded (``last-run.json`` when step is None)."""
    name = "last-run.json" if step is None else f"step-{step:02d}.json"
    return store.state_dir / "evidence" / name


def recorded_evidence(store: PlanStore, step: int | None) -> VerificationRun | None:
    """The recorded run for ``step`` (or the last stepless run), None if there is none.

    ``sealed`` on the run says whether its seal is maker's: False for a file that
    ``maker verify`` did not write (or that was edited since).
    Raises PlanFileError naming the file when it exists but cannot be read back.
    """
    path = evidence_path(store, step)
    try:
        text = read_text_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PlanFileError(path, f"cannot read: {exc.strerror}") from None
    except InputError as exc:
        raise PlanFileError(path, str(exc), fix="run `maker verify` again") from None
    try:
        data = json.loads(text)
        run = VerificationRun.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise PlanFileError(path, f"not a recorded verification run ({exc})",
                            fix=f"delete it and run `maker verify"
                                f"{'' if step is None else f' --step {step}'}` again") from None
    run.sealed = check(data)
    return run


def run_verification(
    store: PlanStore,
    project_dir: Path | None = None,
    step: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    heartbeat_s: float = 30.0,
) -> VerificationRun:
    """Run the project's format, lint, build and test commands; record and return the run.

    ``project_dir`` defaults to the plans directory's parent. ``env`` (default: the
    process environment) chooses the commands (see ``detect_commands``), sets the
    timeout and is the commands' environment. The run is recorded only when the plans
    directory holds a plan (a stray ``plans/`` must not appear in a project without one).

    Raises VerificationError when verification cannot run at all (no project directory,
    a bad ``MAKER_VERIFY_TIMEOUT``), StepNotFoundError for a step the plan lacks.
    A command that fails is not an error: it is in the returned run.
    """
    env = dict(os.environ if env is None else env)
    project = Path(project_dir) if project_dir is not None else store.project
    if not project.is_dir():
        raise VerificationError(f"cannot verify {project}: no such directory")
    attempt = step_attempt(store, step)  # StepNotFoundError, naming the steps
    timeout = timeout_s if timeout_s is not None else _timeout_from(env)

    commands = detect_commands(project, env)
    boxed = step_box(store, step, project)
    started = utc_now()
    evidence: list[Evidence] = []
    not_run: list[VerifyCommand] = []
    for i, cmd in enumerate(commands, start=1):
        if evidence and evidence[-1].exit_code != 0:
            not_run.append(cmd)
            continue
        if progress:
            progress(Progress("start", i, len(commands), cmd))
        ev = run_check(cmd, i, len(commands), project, env, timeout, heartbeat_s, progress,
                      boxed)
        evidence.append(ev)
        if progress:
            progress(Progress("done", i, len(commands), cmd, ev.duration_s, ev.exit_code))

    run = VerificationRun(step, str(project), started, utc_now(),
                          _status(evidence), evidence, not_run)
    run.message = _message(run, turned_off(env))
    if store.exists():  # (under the lock: two runs at once lose no failure from the count)
        with store.lock():
            if step is not None:  # (a record maker cannot read counts nothing)
                try:
                    previous = recorded_evidence(store, step)
                except PlanFileError:
                    previous = None
                run.attempt, run.failed_runs = attempt, failed_runs(previous, attempt, run.status)
            atomic_write(evidence_path(store, step),
                         json.dumps(seal(run.to_dict()), indent=2) + "\n")
    return run


def _status(evidence: list[Evidence]) -> RunStatus:
    if not evidence:
        return "nothing-to-run"
    return "passed" if all(e.exit_code == 0 for e in evidence) else "failed"


def _message(run: VerificationRun, off: list[str]) -> str:
    off_note = f" ({off_text(off)})" if off else ""
    if run.status == "nothing-to-run":
        unset = [ENV_VARS[k] for k in KINDS if k not in off]
        if not unset:
            return f"no verification commands known for this project: every check is " \
                   f"off{off_note}"
        return ("no verification commands known for this project: set " + ", ".join(unset)
                + " to the commands that check it" + off_note)
    kinds = ", ".join(e.kind or e.command for e in run.commands)
    if run.passed:
        return f"verification passed: {kinds}{off_note}"
    failed = run.failed_command
    assert failed is not None
    text = f"verification failed: {failed.kind} `{failed.command}` exited {failed.exit_code}"
    if run.not_run:
        text += ("; stopped there, so not run: " + ", ".join(c.kind for c in run.not_run) +
                 " (their results would mislead until this passes)")
    return text


def _timeout_from(env: Mapping[str, str]) -> float:
    raw = env.get("MAKER_VERIFY_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise VerificationError(f"MAKER_VERIFY_TIMEOUT={raw!r} is not a positive number of "
                                "seconds (unset it for the default, 1800)")
    return value


