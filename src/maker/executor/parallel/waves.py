"""Which steps run together (a wave), and where a step that runs beside others works.

A **wave** is a set of ready steps (``maker.executor.state.schedule``: every ``depends_on``
complete) that cannot touch the same files, taken in the schedule's order:

- each declares ``writes`` (``maker.planner.writes``); a step that declares nothing
  runs alone;
- no two claims may overlap, and none may touch a shared file (lockfiles, migrations,
  generated code, manifests, and the project's own ``shared`` in
  ``plans/settings.yaml``);
- no conditional step before it is still undecided (its choice could make the step
  one the plan never takes);
- the project is a git repository (each runs in a worktree maker owns:
  ``maker.tools.git.worktrees``).

A wave of one is an ordinary step, run in the main checkout. In a wave of two or more,
each step works in its own worktree (``worktree`` in its front matter, the folder under
the plans folder; ``worktree_base``, the commit it was cut from) and its change is
brought back by :mod:`maker.executor.parallel.land`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from maker.planner.writes import Work, clash, shared_hit
from maker.store.workspace import LANDED_KEY, worktree_of

if TYPE_CHECKING:
    from maker.executor.state.schedule import Schedule
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["alone_reason", "together", "wave"]

def alone_reason(record: StepRecord, shared: Sequence[str], work: Work | None = None) -> str:
    """Why step ``record`` must run alone ("" when it may run beside others)."""
    writes = record.spec.writes
    if writes is None:
        return "it does not say what it writes (`writes`)"
    hit = shared_hit(writes, shared, work)
    return f"it may write a shared file: {hit}" if hit else ""


def _clash(a: StepRecord, b: StepRecord, work: Work) -> str:
    why = clash(a.spec.writes or [], b.spec.writes or [], work)
    return f"steps {a.number} and {b.number}: {why}" if why else ""


def _undecided_before(plan: StoredPlan, sched: Schedule, n: int) -> bool:
    return any(r.spec.is_conditional and r.number < n
               and sched.statuses.get(r.number) not in ("complete", "skipped")
               for r in plan.steps)


def together(plan: StoredPlan, sched: Schedule, candidates: Sequence[int],
             shared: Sequence[str], limit: int,
             running: Sequence[StepRecord] = (), work: Work | None = None) -> list[int]:
    """The longest prefix-greedy set of ``candidates`` (ready steps, in order) that may
    run together and beside ``running`` (steps of the wave already under way), at most
    ``limit`` in all. A first candidate that must run alone is returned alone (when
    nothing is running). Past ``work``'s limit (a plan whose claims take that long to
    compare) no further candidate joins: each pair is decided as PLAN.md decides it."""
    work = work or Work()
    chosen: list[StepRecord] = list(running)
    out: list[int] = []
    for n in candidates:
        if len(chosen) >= limit or work.over:
            break
        record = plan.get(n)
        fits = not alone_reason(record, shared, work) \
            and not _undecided_before(plan, sched, n) \
            and not any(_clash(record, other, work) for other in chosen)
        if fits:
            chosen.append(record)
            out.append(n)
        elif not chosen:
            return [n]  # it runs alone
    return out


def wave(store: PlanStore, plan: StoredPlan, sched: Schedule, limit: int) -> list[int]:
    """The ready steps to start now, beside the worktree steps already in progress."""
    from maker.store.records import occupying
    from maker.store.settings import load_settings

    busy = occupying(plan)
    if busy and not all(worktree_of(store, r) or r.meta.get(LANDED_KEY) for r in busy):
        return []  # a step in the main checkout runs alone
    if limit < 2 and not busy:
        return list(sched.ready[:1])
    running = [r for r in busy if r.status == "in-progress"]
    shared = load_settings(store.root).shared
    return together(plan, sched, sched.ready, shared, max(limit, 1), running)
