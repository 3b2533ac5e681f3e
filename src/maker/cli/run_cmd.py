"""``maker run``: the headless engine. Plans TASK, or continues the plan in
plans/, and runs every reachable step through claude-agent-sdk.

Exit codes: 0 every reachable step complete; 1 a step failed or blocked, the plan was
refused, an SDK call failed; 2 usage; 3 stopped by --max-budget-usd; 4 a step awaits a
person's approval (``--approve never``, or the stored policy); 130 interrupted (Ctrl-C
or SIGTERM: the step in progress stays resumable).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from maker.cli._common import (
    not_inside_claude_code,
    plans_dir_option,
    reports_errors,
    resolve_plans_dir,
)
from maker.cli.main import cli
from maker.core.events import Event, StepCompleted, StepFailed, StepFlagged, StepStarted
from maker.core.paths import project_to_be
from maker.engine.budget import Budget
from maker.engine.ledger import Call, Ledger
from maker.engine.orchestrator import Orchestrator, RunResult
from maker.engine.parts import EngineParts
from maker.engine.sessions import sdk_reviewer, sdk_runner_factory
from maker.engine.tool_limits import session_limits
from maker.errors import MakerError
from maker.executor.loop.status_view import summary_rows
from maker.executor.rules.step_rules import settings
from maker.executor.state.run import ENGINE_SESSIONS
from maker.planner.parser import MAX_VOTES, MODEL_CHARS, MODEL_PATTERN
from maker.planner.planner import PlannerModule
from maker.store.plan_store import PlanStore
from maker.store.settings import load_settings
from maker.store.workspace import worktree_of
from maker.tools.box.boundary import weaker_notice
from maker.tools.registry import ToolRegistry

__all__ = ["BUDGET", "MODEL", "build_parts", "event_json", "run", "run_until_stopped"]

F = TypeVar("F", bound=Callable[..., Any])


def _model(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--model``: one model name or id, as a plan step's ``model`` is linted."""
    if value is not None and (len(value) > MODEL_CHARS or not MODEL_PATTERN.fullmatch(value)):
        raise click.BadParameter(f"{value[:MODEL_CHARS]!r} is not a model name: give an "
                                 "alias or id such as `sonnet`, `opus`, `haiku` or "
                                 "`claude-sonnet-4-5`", ctx, param)
    return value


def _budget(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """``--max-budget-usd``: a finite amount (``nan`` and ``inf`` pass click's range)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not an amount of US dollars: give one such "
                                 "as 5 or 0.50 (leave the option out for no limit)",
                                 ctx, param)
    return value


def MODEL(help: str) -> Callable[[F], F]:  # an option, as click's are; shared with calibrate
    return click.option("--model", default=None, callback=_model, help=help)


def BUDGET(help: str) -> Callable[[F], F]:
    return click.option("--max-budget-usd", type=click.FloatRange(min=0, min_open=True),
                        default=None, callback=_budget, help=help)


def build_parts(store: PlanStore, max_budget_usd: float | None,
                model: str | None) -> EngineParts:
    """The real engine: SDK sessions, the ledger in plans/, the budget, the tool limits."""
    # Where the sessions work: the plan's project; for a plan still to be made, the root
    # it will record (``core.paths``), not the plans folder's parent (MAKER_PLANS_DIR=
    # docs/plans makes its plan for the project, not for docs/, which may not exist yet).

    project = store.project if store.exists() else project_to_be(store.root)
    ledger = Ledger(store)
    return EngineParts(
        runner_factory=sdk_runner_factory(project), ledger=ledger, call_type=Call,
        budget=Budget(max_budget_usd, ledger) if max_budget_usd is not None else None,
        reviewer=sdk_reviewer(project), limits=session_limits, model=model,
        session_id=f"{ENGINE_SESSIONS}-{uuid.uuid4().hex[:12]}")


def build_planner(store: PlanStore) -> Any:
    return PlannerModule(ToolRegistry.default())


def event_json(event: Event) -> str:
    """One event as one JSON line: ``{"event": "StepStarted", ...its fields}``."""
    return json.dumps({"event": type(event).__name__, **asdict(event)}, default=str,
                      ensure_ascii=False)


class _EventsLost(BaseException):
    """The ``--events`` sink failed (a full disk, a closed pipe): the run stops there.
    Not an Exception, so that no handler in the engine takes it for a step's failure."""


class _Progress:
    """A line per step state on stderr (number, title, state, elapsed, cost)."""

    def __init__(self, orch: Orchestrator, events: IO[str] | None, where: str = "") -> None:
        self.orch, self.events, self.where = orch, events, where
        self.titles: dict[int, str] = {}
        self.started: dict[int, float] = {}

    def __call__(self, event: Event) -> None:
        if self.events is not None:
            try:
                self.events.write(event_json(event) + "\n")
                self.events.flush()
            except (OSError, ValueError) as exc:  # ValueError: the stream was closed
                self.events = None
                why = getattr(exc, "strerror", None) or str(exc)
                raise _EventsLost(f"stopped: the events could not be written to "
                                  f"{self.where} ({why}); `maker run` continues the plan "
                                  "(the step in progress stays resumable)") from None
        if isinstance(event, StepStarted):
            self.titles[event.step] = event.title
            self.started[event.step] = time.monotonic()
            self._line(event.step, self._running(event.step))
        elif isinstance(event, StepFlagged):
            self._line(event.step, f"flagged ({event.reason[:60]}); resampling")
        elif isinstance(event, StepCompleted):
            self._line(event.step, "complete")
        elif isinstance(event, StepFailed):
            self._line(event.step, f"failed: {event.reason[:80]}")

    def _running(self, n: int) -> str:
        """"running", and where when the step runs beside others (its worktree)."""

        store = self.orch.store
        try:
            tree = worktree_of(store, store.load_step(n))
        except MakerError:
            tree = None
        return f"running in its worktree {os.path.relpath(tree)}" if tree else "running"

    def _line(self, n: int, state: str) -> None:
        began = self.started.get(n)
        elapsed = f"{time.monotonic() - began:6.1f}s" if began is not None else "      -"
        click.echo(f"step {n:>3}  {self.titles.get(n, '')[:40]:<40}  {state}  "
                   f"{elapsed}  ${self.orch.step_cost(n):.4f}", err=True)


def _table(store: PlanStore, orch: Orchestrator, result: RunResult, err: bool) -> None:
    if store.exists():
        click.echo(f"{'step':>4}  {'title':<40}  {'status':<18}  cost (this run)", err=err)
        for row in summary_rows(store.load(), store):
            click.echo(f"{row.step:>4}  {row.title[:40]:<40}  {row.status:<18}  "
                       f"${orch.step_cost(row.step):.4f}", err=err)
    total = orch.parts.ledger.total()
    click.echo(f"total spent (ledger): ${float(total):.4f}", err=err)
    click.echo(f"maker run: {result.message} (exit {result.exit_code})", err=err)


EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT


def run_until_stopped(orch: Orchestrator, task: str | None) -> RunResult:
    """``orch.run(task)``; Ctrl-C (SIGINT) or SIGTERM (a CI job cancelled) cancels it
    at its next await: never inside a change to plans/ (those are synchronous, and
    all-or-nothing anyway). The step in progress stays in progress, the interrupted
    call is in the ledger, and ``maker run`` continues."""

    async def main() -> RunResult:
        current = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def stop() -> None:
            orch.parts.stopping = True  # (checked before and after every SDK call)
            if current is not None:
                current.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop)
        return await orch.run(task)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        running = orch.store.read_active() if orch.store.exists() else None
        steps = (running or {}).get("wave") or [(running or {}).get("step")]
        where = ("" if not running else f"step {steps[0]} is left in progress; "
                 if len(steps) == 1 else
                 f"steps {', '.join(map(str, steps))} are left in progress; ")
        return RunResult(EXIT_INTERRUPTED, f"interrupted: {where}`maker run` continues "
                         "(or /maker:step in Claude Code)")


@cli.command("run")
@click.argument("task", required=False)
@click.option("--approve", type=click.Choice(["auto", "reviewer", "never"]), default=None,
              help="The approval policy you give this run (default: the stored policy).")
@BUDGET("Stop the run (exit 3) once its SDK calls cost this much.")
@MODEL("The executors' default model.")
@click.option("--events", "events_to", default=None, metavar="FILE|-",
              help="Write one JSON object per event to FILE (or stdout with -).")
@click.option("--vote", "vote", type=click.IntRange(1, MAX_VOTES), default=None, metavar="K",
              help="Vote on every step that can be sampled without side effects "
                   "(conditional steps, read-only steps): the winning answer leads by K; "
                   "where the project's tests run with pytest, on code steps too, by what "
                   "their samples do.")
@click.option("--target-success", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=None, metavar="T",
              help="With --sample-success: K is the law's smallest lead for a whole-task "
                   "success T.")
@click.option("--sample-success", type=click.FloatRange(0.5, 1, min_open=True),
              default=None, metavar="P",
              help="Your estimate of one sample's success (`maker calibrate` measures it).")
@click.option("--session-timeout", type=click.FloatRange(0, 604800), default=None,
              metavar="SECONDS",
              help="Stop an SDK session that runs longer (0: no limit); for this run, "
                   "over session_timeout in plans/settings.yaml (default 1800).")
@click.option("--parallel", type=click.IntRange(1, 16), default=1, metavar="N",
              help="Run up to N independent steps at once, each in a git worktree maker "
                   "owns (default 1: one at a time).")
@plans_dir_option
@reports_errors
def run(task: str | None, approve: str | None, max_budget_usd: float | None,
        model: str | None, events_to: str | None, vote: int | None,
        target_success: float | None, sample_success: float | None,
        session_timeout: float | None, parallel: int, plans_dir: Path | None) -> None:
    """Plan TASK (or continue the plan in plans/) and run every reachable step."""
    if approve is not None:  # a person's policy: never the model's, from inside Claude Code
        not_inside_claude_code(f"maker run --approve {approve}", f"/maker:policy {approve}")
    if vote is not None and target_success is not None:
        raise click.UsageError("give either --vote K or --target-success T (with "
                               "--sample-success P), not both")
    if (target_success is None) != (sample_success is None):
        raise click.UsageError("--target-success T and --sample-success P go together: "
                               "the law needs both (`maker calibrate STEP` estimates P)")
    store = PlanStore(resolve_plans_dir(plans_dir))
    settings(store.root)  # a broken plans/settings.yaml is said before anything is spent
    parts = build_parts(store, max_budget_usd, model)
    parts.votes = vote or 1
    parts.session_timeout = session_timeout
    law = (sample_success, target_success) if sample_success and target_success else None
    orch = Orchestrator(store, parts, planner=build_planner(store) if task else None,
                        approve=approve, vote_law=law, parallel=parallel)
    out: IO[str] | None = None
    if events_to == "-":
        out = sys.stdout
    elif events_to:
        try:
            out = open(events_to, "w", encoding="utf-8")  # closed below
        except OSError as exc:
            raise click.BadParameter(
                f"cannot write {events_to}: {exc.strerror or exc}; give a file in a "
                "folder that exists and you can write, or - for stdout",
                param_hint="'--events'") from None
    weaker = _weaker_protection(store)
    if weaker:  # (once a run: the person reads what holds the executors' Bash)
        click.echo(weaker, err=True)
    try:
        orch.on_event = _Progress(orch, out, "stdout" if events_to == "-" else str(events_to))
        try:
            result = run_until_stopped(orch, task)
        except _EventsLost as lost:
            result = RunResult(1, str(lost))
    finally:
        if out is not None and out is not sys.stdout:
            with contextlib.suppress(OSError):  # a full disk: said above
                out.close()
    # With --events -, stdout is the JSON lines: the table goes to stderr.
    if orch.vote_note:
        click.echo(orch.vote_note, err=events_to == "-")
    _table(store, orch, result, err=events_to == "-")
    sys.exit(result.exit_code)


def _weaker_protection(store: PlanStore) -> str:
    """A line for the person when a step executor's Bash is held by less than the
    kernel boundary in this run; "" when it is."""

    said = weaker_notice(load_settings(store.root).boundary if store.root.is_dir() else "auto")
    return f"maker run: {said}." if said else ""
