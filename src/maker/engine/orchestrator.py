"""The headless run: plan a task, then run every reachable step.

    TaskSubmitted → PlanCreated → StepStarted → StepFlagged* → StepCompleted | StepFailed
                  → … → TaskCompleted | TaskFailed

``Orchestrator.run(task)`` plans ``task`` (:class:`~maker.planner.planner.PlannerModule`)
and stores the plan; ``run(None)`` continues the plan in ``plans/`` (after a crash,
after ``/maker:step``, after a budget stop): a step left in progress is resumed, a step
awaiting approval is decided by the policy. Then, with ``parallel`` above 1, up to that
many steps at once (``maker.engine.wave_loop``); else one step at a time
(:class:`~maker.engine.step_run.StepRun`), in the schedule's order, so a conditional
step's accepted ``next_step`` chooses the branch.

Approval (``--approve NAME`` is a person's flag, recorded with ``set_policy``):
``never`` stops at the first step awaiting approval; ``auto`` approves a small step
and asks the independent reviewer about a large one; ``reviewer`` asks it about every
step; a large step (5+ files maker measured, or two declared boundaries) is reviewed
under every policy, unless a person set ``STEP_SKIP_REVIEW=1`` (then a person decides
it). The reviewer is an SDK session with the plugin's ``agents/reviewer.md``; its
verdict is recorded (``record_review``) and applied (``review_loop.apply_review``, as
the plugin's hook does): RED findings send the step back to implementation with them as
revision notes, and it runs again, at most ``max_review_attempts`` times
(``plans/settings.yaml``); past that, the run stops for a person (exit 4) with the
findings.

Every SDK call goes to the ledger and is preceded by the budget's check; each call
gets the remaining budget as its own ``max_budget_usd``.

Exit codes (:attr:`RunResult.exit_code`):

- 0 ``EXIT_COMPLETE``: every reachable step is complete (the rest skipped);
- 1 ``EXIT_FAILED``: a step failed or was blocked, the plan was refused, or an SDK call
  failed (the step stays in progress);
- 2 ``EXIT_USAGE``: no task and no plan to continue;
- 3 ``EXIT_BUDGET``: stopped by ``--max-budget-usd`` (``maker run`` continues);
- 4 ``EXIT_APPROVAL``: a step awaits a person's approval (``maker step approve N`` or
  ``/maker:step``, then ``maker run``, continues): the ``never`` policy, review skipped,
  or the reviewer's findings past ``max_review_attempts``; or a person decides a step in
  progress (a deviation; a code vote undecided under ``undecided_code_vote: ask``). No
  Task* event is emitted then: the task is neither done nor failed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maker.core.events import (
    Event,
    PlanCreated,
    StepCompleted,
    TaskCompleted,
    TaskFailed,
    TaskSubmitted,
)
from maker.core.models import TaskConfig
from maker.core.module import Module
from maker.core.paths import project_to_be  # (no plan yet: no recorded root)
from maker.core.statuses import AWAITING
from maker.engine.parts import EngineParts
from maker.engine.review_session import review_session
from maker.engine.sessions import session_limit
from maker.engine.step_run import StepRun
from maker.engine.stops import (
    EXIT_APPROVAL,
    EXIT_BUDGET,
    EXIT_COMPLETE,
    EXIT_FAILED,
    EXIT_USAGE,
    RunStop,
    stop_asked,
    what_is_kept,
)
from maker.engine.vote_step import plan_checks, run_votes
from maker.engine.wave_loop import WaveLoop
from maker.errors import AgentSDKError, BudgetExceededError, MakerError, PlanRefusedError, StepError
from maker.executor.acceptance.approval import approve_step, read_policy, set_policy
from maker.executor.acceptance.review import Review, latest_review
from maker.executor.acceptance.review_loop import apply_review
from maker.executor.acceptance.review_route import ReviewNeed, review_need
from maker.executor.state.lifecycle import default_step, flush_overview
from maker.executor.state.schedule import SKIPPED, plan_schedule
from maker.handoff.measured import files_note
from maker.store import changes
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord, StoredPlan

__all__ = ["Orchestrator", "RunResult"]

OVERVIEW_EVERY = 1.0  # seconds between two rewrites of PLAN.md during a run


@dataclass
class RunResult:
    exit_code: int
    message: str
    events: list[Event] = field(default_factory=list)


class Orchestrator(Module):
    """Runs a task, or the plan in ``store``, headless.

    ``planner`` is a PlannerModule (needed only with a task); ``approve`` the policy a
    person gave the run (None: the stored one); ``vote_law`` ``(p, target)``: each
    voting step's lead is the law's ``k_min`` for the plan's voting steps, per-sample
    success ``p`` and whole-task success ``target`` (else ``parts.votes``);
    ``on_event`` sees every event as it happens; ``only`` the one step to run (a
    ``/maker:step`` whose step's code is voted on), then stop. ``step_costs`` holds
    what each step's calls cost so far in this run.
    """

    def __init__(self, store: PlanStore, parts: EngineParts, *, planner: Any = None,
                 approve: str | None = None, vote_law: tuple[float, float] | None = None,
                 on_event: Callable[[Event], None] | None = None, parallel: int = 1,
                 only: int | None = None) -> None:
        self.store = store
        # A run loads the plan several times per step: each load reads what maker
        # changed, and all of plans/ at least once a second (hand edits). PLAN.md is for
        # a person to read: on a fast plan, at most once a second, and always at the
        # end of the run (``run``).
        store.full_read_every = changes.FULL_EVERY
        store.overview_every = OVERVIEW_EVERY
        self.parts = parts
        self.planner = planner
        self.approve = approve
        self.vote_law = vote_law  # (per-sample success, target): --vote from the law
        self.vote_note = ""  # what the law asked for, said at the end of the run
        self.on_event = on_event
        self.step_costs: dict[int, float] = {}
        self._current: StepRun | None = None
        self.parallel = 1 if only is not None else parallel  # steps at once (--parallel N)
        self.only = only
        self._waves: WaveLoop | None = None

    def step_cost(self, n: int) -> float:
        """What step ``n``'s calls cost in this run so far (its running step included)."""
        running = self._current.cost_usd if self._current and self._current.n == n else 0.0
        running += self._waves.running_cost(n) if self._waves is not None else 0.0
        return self.step_costs.get(n, 0.0) + running

    async def run(self, task: str | None = None) -> RunResult:
        """Plan ``task`` (or continue the stored plan) and run it; never raises for
        what the exit code can say."""
        result = RunResult(EXIT_FAILED, "")
        try:
            async for event in self._events(task, None, result):
                result.events.append(event)
                if self.on_event is not None:
                    self.on_event(event)
        finally:
            self._flush_overview()
        return result

    def _flush_overview(self) -> None:
        """PLAN.md brought up to date if the run held a change back from it; a plan that
        can no longer be read (a hand edit) keeps the PLAN.md it had."""
        with contextlib.suppress(MakerError):
            flush_overview(self.store)

    async def process(self, event: Event) -> AsyncIterator[Event]:
        """As a Module: a TaskSubmitted runs that task to its end (other events: none)."""
        if isinstance(event, TaskSubmitted):
            try:
                async for out in self._events(event.instruction, event.config,
                                              RunResult(EXIT_FAILED, ""), submitted=event):
                    yield out
            finally:
                self._flush_overview()

    async def _events(self, task: str | None, config: TaskConfig | None, result: RunResult,
                      submitted: TaskSubmitted | None = None) -> AsyncIterator[Event]:
        try:
            if task is not None:
                async for event in self._plan(task, config, submitted):
                    yield event
            elif not self.store.exists():
                raise RunStop(EXIT_USAGE, f"no plan in {self.store.root} to continue: give a "
                            "task (`maker run \"TASK\"`) or make one with /maker:plan", None)
            if self.approve is not None:
                set_policy(self.store, self.approve,
                           f"person (maker run --approve {self.approve})")
            try:  # (what the law asked for, and what --vote cannot do here: said at the end)
                self.parts.votes, self.vote_note = run_votes(self.store, self.parts.votes,
                                                             self.vote_law)
            except ValueError as exc:
                raise RunStop(EXIT_USAGE, str(exc), None) from None
            async for event in self._steps():
                yield event
        except RunStop as stop:
            result.exit_code, result.message = stop.code, stop.message
            if stop.event is not None:
                yield stop.event
            return
        except BudgetExceededError as exc:
            result.exit_code = EXIT_BUDGET
            result.message = f"stopped by the budget: {exc}" + (
                "" if getattr(self.parts.budget, "hint", "") else ". What is done is kept; "
                "`maker run` (with a larger --max-budget-usd) continues")
        except PlanRefusedError as exc:
            result.message = f"the plan was refused: {exc}"
        except AgentSDKError as exc:
            result.message = f"an SDK call failed: {exc}. {what_is_kept(self.store, task)}"
        else:
            result.exit_code, result.message = EXIT_COMPLETE, \
                "every reachable step is complete"
            yield TaskCompleted(timestamp=time.time(), outputs=self.store.outputs())
            return
        yield TaskFailed(timestamp=time.time(), reason=result.message)

    async def _plan(self, task: str, config: TaskConfig | None,
                    submitted: TaskSubmitted | None) -> AsyncIterator[Event]:
        if self.planner is None:
            raise RunStop(EXIT_USAGE, "a task needs a planner", None)

        config = config or TaskConfig(instruction=task, model=self.parts.model,
                                      cwd=str(project_to_be(self.store.root)))
        submitted = submitted or TaskSubmitted(timestamp=time.time(), instruction=task,
                                               config=config)
        yield submitted
        self.planner.max_budget_usd = self.parts.call_budget()
        self.planner.session_timeout = session_limit(self.store.root, self.parts.session_timeout)
        project = Path(config.cwd) if config.cwd else project_to_be(self.store.root)
        self.planner.plan_checks = checks = plan_checks(project)
        try:
            async for event in self.planner.process(submitted):
                if isinstance(event, PlanCreated):
                    if problems := checks(event.plan):  # (whatever planner made it)
                        raise PlanRefusedError(problems, attempts=1)
                    self.store.write_plan(event.plan, task)
                    yield event
        finally:
            for i, call in enumerate(self.planner.calls, start=1):
                self.parts.record_answer("planner", None, i, call, config.model)

    async def _steps(self) -> AsyncIterator[Event]:
        if self.parallel > 1:
            self._waves = WaveLoop(self.store, self.parts, self.parallel, self._decide,
                                   self.step_costs)
            async for event in self._waves.events():
                yield event
            return
        store = self.store
        follows: int | None = None  # the step the gate said is ready next
        while True:
            if (asked := stop_asked(self.parts.keep_going)) is not None:
                raise asked
            n, follows = follows, None
            if n is None:
                plan = store.load()
                waiting = [r for r in plan.steps if r.status == AWAITING
                           and self.only in (None, r.number)]
                if waiting:
                    async for event in self._decide(waiting[0]):
                        yield event
                    continue
                n = self._next(plan)
                if n is None:
                    return
            step = self._current = StepRun(self.parts, store, n)
            try:
                async for event in step.events():
                    yield event
            finally:
                self.step_costs[n] = self.step_costs.get(n, 0.0) + step.cost_usd
                self._current = None
            if step.status == "complete":
                yield StepCompleted(timestamp=time.time(), step=n,
                                    output=_mapping(step.output))
                # (start_step checks it again: this only saves reading the whole plan)
                follows = step.next_ready[0] if step.next_ready and self.only is None \
                    else None
            elif step.status == "person":  # (a gate of its own: a person decides)
                raise RunStop(EXIT_APPROVAL, step.reason, None)
            elif step.status != AWAITING:
                reason = f"step {n} is {step.status}: {step.reason}"
                raise RunStop(EXIT_FAILED, reason, TaskFailed(timestamp=time.time(),
                                                            reason=reason))

    def _next(self, plan: StoredPlan) -> int | None:
        """The step to run next: the one in progress, else the first ready one; None
        when every reachable step is done (``only``: when it is no longer in progress).
        Raises RunStop when nothing can run."""
        if self.only is not None:  # (started by /maker:step; put back: not this run's)
            return self.only if plan.get(self.only).status == "in-progress" else None
        sched = plan_schedule(self.store, plan)
        try:
            return default_step(plan, sched)  # (the plugin's rule: `maker step start`)
        except StepError as exc:
            if all(s in ("complete", SKIPPED) for s in sched.statuses.values()):
                return None
            raise RunStop(EXIT_FAILED, str(exc), TaskFailed(timestamp=time.time(),
                                                          reason=str(exc))) from None

    async def _decide(self, record: StepRecord) -> AsyncIterator[Event]:
        """A step awaiting approval: approve it by policy, ask the reviewer, or stop for
        a person (``maker.executor.acceptance.review_route.review_need``, as in /maker:step). RED
        findings send the step back to implementation (``review_loop.apply_review``):
        the loop then runs it again."""
        store, n = self.store, record.number
        policy = read_policy(store)
        handoff = store.read_handoff(n) or {}
        need = review_need(store, record, policy.name, handoff)
        output = _mapping(handoff.get("output"))
        if need.route == "policy":
            approve_step(store, n, "policy:auto")
            yield StepCompleted(timestamp=time.time(), step=n, output=output)
            return
        review = latest_review(store, record)
        why = ""
        if need.wants_review and review is None and self.parts.reviewer is not None:
            review = await self._review(record, need)
            decided = apply_review(store, store.load().get(n), review,
                                   session_id=self.parts.session_id)
            if decided.kind == "approved":
                yield StepCompleted(timestamp=time.time(), step=n, output=output)
            if decided.kind != "person":
                return  # approved; or sent back: in progress again, run next
            why = f" ({decided.text}: `maker status` shows them)"
        elif review is not None and review.approves and need.route == "reviewer":
            apply_review(store, record, review)  # (reviewed, then cut off before this)
            yield StepCompleted(timestamp=time.time(), step=n, output=output)
            return
        elif need.skipped:
            why = " (STEP_SKIP_REVIEW=1: no review; a person decides)"
        elif need.wants_review and review is None:
            why = (" (no reviewer is available to this run: /maker:step reviews it, or "
                   "approve it without a review with `STEP_SKIP_REVIEW=1 maker step "
                   f"approve {n}`)")
        note = files_note(store.load_step(n), store.read_handoff(n) or {})  # (not to miss)
        raise RunStop(EXIT_APPROVAL, f"step {n} ({record.title}) is done and awaits "
                    f"approval{why}.{f' {note}.' if note else ''} To go on: `maker step "
                    f"approve {n}` in a terminal, "
                    f"or /maker:step (/maker:approve {n}) in Claude Code; then "
                    "`maker run` continues the plan", None)

    async def _review(self, record: StepRecord, need: ReviewNeed) -> Review:
        review, cost = await review_session(self.store, self.parts, record, need)
        self.step_costs[record.number] = self.step_costs.get(record.number, 0.0) + cost
        return review


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
