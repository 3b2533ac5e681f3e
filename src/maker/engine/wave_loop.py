"""``maker run --parallel N``: up to N steps at once, each step that runs
beside others in a worktree of its own.

    loop: decide a step awaiting approval (policy, reviewer, or stop for a person)
          resume the steps in progress; start the next wave (``executor.waves.wave``):
              one step alone ─▶ in the main checkout, as a serial run
              several        ─▶ each in its worktree (made one after another)
          wait for the next event of any running step; a step that ends is handled as
          the serial loop handles it

Every step is a :class:`~maker.engine.step_run.StepRun` of its own task; their events
reach the caller as they happen, in one stream. The ledger and the budget are shared:
a budget stop raised in one step cancels every other at its next await (each stays in
progress, resumable), as Ctrl-C does. A step that fails or waits for a person stops new
starts; the steps already running finish first, then the run ends with that reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from maker.core.events import Event, StepCompleted, TaskFailed
from maker.core.statuses import AWAITING
from maker.engine.step_run import StepRun
from maker.engine.stops import EXIT_APPROVAL, EXIT_FAILED, RunStop, stop_asked
from maker.executor.parallel.land import recover
from maker.executor.parallel.waves import wave
from maker.executor.parallel.worktree_step import prune_worktrees, start_in_worktree
from maker.executor.state.schedule import SKIPPED, nothing_ready_reason, plan_schedule
from maker.store.records import StoredPlan, in_progress
from maker.store.workspace import worktree_of

if TYPE_CHECKING:
    from maker.engine.parts import EngineParts
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["WaveLoop"]



class WaveLoop:
    """The steps of ``store``'s plan, up to ``limit`` at once. ``decide`` is the
    orchestrator's decision on a step awaiting approval (it raises RunStop to stop for a
    person); ``costs`` gathers what each step's calls cost."""

    def __init__(self, store: PlanStore, parts: EngineParts, limit: int,
                 decide: Callable[[StepRecord], AsyncIterator[Event]],
                 costs: dict[int, float]) -> None:
        self.store, self.parts, self.limit = store, parts, limit
        self.decide, self.costs = decide, costs
        self.runs: dict[int, StepRun] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def running_cost(self, n: int) -> float:
        run = self.runs.get(n)
        return run.cost_usd if run is not None else 0.0

    async def events(self) -> AsyncIterator[Event]:
        store = self.store
        recover(store)  # (a landing a kill cut short: put back)
        prune_worktrees(store)
        stop: RunStop | None = None
        try:
            while True:
                if stop is None:
                    stop = stop_asked(self.parts.keep_going)
                if stop is None:
                    plan = store.load()
                    waiting = [r for r in plan.steps if r.status == AWAITING
                               and r.number not in self._tasks]
                    if waiting:
                        try:
                            async for event in self.decide(waiting[0]):
                                yield event
                        except RunStop as why:
                            stop = why
                        continue
                    self._start(plan)
                if not self._tasks:
                    if stop is not None:
                        raise stop
                    self._finished(store.load())
                    return
                kind, item = await self._queue.get()
                if kind == "event":
                    yield item
                    continue
                n, error = item
                self._tasks.pop(n)
                run = self.runs.pop(n)
                self.costs[n] = self.costs.get(n, 0.0) + run.cost_usd
                if error is not None:
                    raise error  # (budget, SDK, interruption: the others are cancelled)
                if run.status == "complete":
                    yield StepCompleted(timestamp=time.time(), step=n,
                                        output=_mapping(run.output))
                elif run.status == "person" and stop is None:
                    stop = RunStop(EXIT_APPROVAL, run.reason, None)
                elif run.status not in ("complete", AWAITING, "person") and stop is None:
                    reason = f"step {n} is {run.status}: {run.reason}"
                    stop = RunStop(EXIT_FAILED, reason, TaskFailed(timestamp=time.time(),
                                                                   reason=reason))
        finally:
            await self._cancel()
            if stop is None or not self._tasks:
                prune_worktrees(store)  # (none is left once nothing runs)

    def _start(self, plan: StoredPlan) -> None:
        """Resume the steps in progress that no task runs; then start the next wave."""
        store = self.store
        running = in_progress(plan)
        main = [r for r in running if worktree_of(store, r) is None]
        for record in running:
            if record.number not in self._tasks and (not main or not self._tasks):
                if worktree_of(store, record) is not None:  # (made whole if a kill cut it)
                    start_in_worktree(store, record.number, self.parts.session_id)
                self._spawn(record.number)
                if worktree_of(store, record) is None:
                    return  # (a step in the main checkout runs alone)
        if main or len(self._tasks) >= self.limit:
            return
        picked = wave(store, plan, plan_schedule(store, plan), self.limit)
        picked = [n for n in picked if n not in self._tasks][: self.limit - len(self._tasks)]
        apart = len(picked) > 1 or bool(self._tasks)
        for n in picked:
            if apart:  # (each its worktree, made one after another under the plan lock)
                start_in_worktree(store, n, self.parts.session_id, self.limit)
            self._spawn(n)

    def _spawn(self, n: int) -> None:
        run = self.runs[n] = StepRun(self.parts, self.store, n)

        async def drive() -> None:
            try:
                async for event in run.events():
                    await self._queue.put(("event", event))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # (handed to the loop, which stops the run)
                await self._queue.put(("done", (n, exc)))
                return
            await self._queue.put(("done", (n, None)))

        self._tasks[n] = asyncio.create_task(drive(), name=f"maker step {n}")

    async def _cancel(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for n, run in self.runs.items():
            self.costs[n] = self.costs.get(n, 0.0) + run.cost_usd
        self.runs.clear()

    def _finished(self, plan: StoredPlan) -> None:
        """Nothing runs: every reachable step is done, or RunStop says why not."""

        sched = plan_schedule(self.store, plan)
        if all(s in ("complete", SKIPPED) for s in sched.statuses.values()):
            return
        reason = nothing_ready_reason(sched, plan)
        raise RunStop(EXIT_FAILED, reason, TaskFailed(timestamp=time.time(), reason=reason))


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
