"""``maker verify``: run the project's format, lint, build and test commands as evidence."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

import click

from maker.cli._common import echo_json, plans_dir_option, reports_errors, resolve_plans_dir
from maker.cli.main import cli
from maker.errors import MakerError
from maker.executor.rules.step_rules import settings
from maker.handoff.on_base import on_base_said, run_on_base
from maker.store.plan_store import PlanStore
from maker.store.workspace import step_project
from maker.verify.check_run import Progress
from maker.verify.fixes import budget_note, fix_budget_spent
from maker.verify.runner import evidence_path, run_verification

__all__ = ["verify"]


@cli.command("verify")
@click.option("--step", "step", type=int, default=None,
              help="Record the evidence for this step (plans/.maker/evidence/step-NN.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the recorded run as JSON.")
@plans_dir_option
@reports_errors
def verify(step: int | None, as_json: bool, plans_dir: Path | None) -> None:
    """Run format, lint, build and the full tests; record the evidence."""
    store = PlanStore(resolve_plans_dir(plans_dir))
    # A started step's fix budget (max_fix_attempts in plans/settings.yaml): read first,
    # so that a broken settings file is said before the commands run.
    bound = settings(store.root).max_fix_attempts if step is not None else 0
    _exit_on_termination()
    run = run_verification(store, _where(store, step), step, _print_progress)
    # (the step's new tests on the code before it: only once its own checks pass)
    base = run_on_base(store, step) if step is not None and run.passed and \
        store.exists() else None
    note = budget_note(run, bound)
    stop = bool(run.attempt) and fix_budget_spent(run.failed_runs, bound)
    if as_json:
        data = run.to_dict()
        data["recorded"] = str(evidence_path(store, step)) if store.exists() else None
        data["fix_budget"] = {"max_fix_attempts": bound, "spent": stop, "note": note} \
            if run.attempt else None
        data["on_base"] = base
        echo_json(data)
    else:
        click.echo(run.message)
        failed = run.failed_command
        if failed is not None and failed.output_tail:
            click.echo(f"--- last lines of `{failed.command}` ---")
            click.echo(failed.output_tail)
        for line in on_base_said(base or {}):
            click.echo(line)
        if store.exists():
            click.echo(f"evidence recorded in {evidence_path(store, step)}")
        else:
            click.echo(f"evidence not recorded: no plan in {store.root}")
        if note:
            click.echo(note)
    sys.exit(1 if run.status == "failed" or stop else 0)


def _print_progress(p: Progress) -> None:
    if p.event == "start":
        line = f"[{p.index}/{p.total}] {p.command.kind}: {p.command.command} ..."
    elif p.event == "heartbeat":
        line = f"      {p.command.kind} still running ({_duration(p.elapsed_s)})"
    else:
        verdict = "ok" if p.exit_code == 0 else f"FAILED (exit {p.exit_code})"
        line = f"      {verdict} in {_duration(p.elapsed_s)}"
    click.echo(line, err=True)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def _exit_on_termination() -> None:
    """Turn SIGTERM/SIGHUP (a tool's timeout, a closed terminal) into an exit, so the
    running command's whole process group is killed instead of left orphaned."""

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, leave)


def _where(store: PlanStore, step: int | None) -> Path:
    """Where a step's checks run: its worktree when it runs beside others (its evidence
    there is its own; maker verifies the main checkout again when it lands)."""
    if step is None or not store.exists():
        return store.project

    try:
        return step_project(store, store.load_step(step))
    except MakerError:
        return store.project  # (run_verification names the step that is not there)
