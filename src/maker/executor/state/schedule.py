"""Which steps can run now, and which were skipped by a conditional step.

Statuses on disk are ``pending``, ``in-progress``, ``awaiting-approval``,
``complete``, ``blocked`` and ``failed``. Two facts are derived here and never stored:

- **reachable**: walking from the first step along ``next`` (a step's
  ``next_step_sequence_number``), a complete conditional step leads to the
  ``next_step`` of its accepted output; a conditional step that has not decided yet
  makes every later step potentially reachable.
- **skipped**: a pending step that is no longer reachable (the branch not taken).

A step is **ready** when it is pending, reachable, and every step it depends on is
complete, or skipped when the step does not read that step's output (a join after a
branch must not wait for the branch not taken).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from maker.core.flow import decides_next
from maker.core.models import END, RUNTIME_DECIDED, step_refs
from maker.core.statuses import AWAITING
from maker.executor.rules.instructions import decide_hint
from maker.executor.state.held_vote import held
from maker.store.step_cache import stat_stamp

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = [
    "SKIPPED",
    "Schedule",
    "decided_next",
    "decision_outputs",
    "next_steps",
    "nothing_ready_reason",
    "plan_schedule",
    "schedule",
    "unmet_dependencies",
]

SKIPPED = "skipped"


@dataclass(frozen=True)
class Schedule:
    """The derived view of a plan: reachability, display statuses, ready steps."""

    reachable: frozenset[int]
    main_path: tuple[int, ...]
    statuses: dict[int, str]  # display status: stored, or "skipped"
    ready: tuple[int, ...]  # main-path steps first, then by number
    waiting_on: dict[int, dict[int, str]]  # pending reachable step → deps not complete

    def status(self, step: int) -> str:
        return self.statuses[step]


def decided_next(record: StepRecord, outputs: Mapping[str, Any]) -> int | None:
    """The ``next_step`` a complete conditional step's accepted output chose, if any."""
    out = outputs.get(record.spec.output_variable)
    if not isinstance(out, Mapping):
        return None
    value = out.get("next_step")
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _successors(record: StepRecord, outputs: Mapping[str, Any]) -> tuple[list[int], bool]:
    """``(next steps, decided)``: where the walk goes after ``record``.

    ``decided`` is False when a conditional step has not chosen yet, in which case
    every later step is a potential successor.
    """
    if decides_next(record.spec):
        if record.status == "complete":
            chosen = decided_next(record, outputs)
            if chosen is not None:
                return ([chosen] if chosen != END else []), True
            fixed = record.spec.next_step_sequence_number
            if fixed not in (END, RUNTIME_DECIDED):
                return [fixed], True
            return [], True
        return [], False
    nxt = record.spec.next_step_sequence_number
    return ([] if nxt in (END, RUNTIME_DECIDED) else [nxt]), True


def schedule(plan: StoredPlan, outputs: Mapping[str, Any]) -> Schedule:
    """Derive reachability, display statuses and ready steps from a loaded plan.

    ``outputs`` maps output_variable → output of every accepted complete handoff
    (``PlanStore.outputs()``).
    """
    by_number = {r.spec.step: r for r in plan.steps}
    numbers = sorted(by_number)
    reachable: set[int] = set()
    if numbers:
        todo = [numbers[0]]
        # Steps from numbers[later:] on are already queued (an undecided conditional
        # step before them): each is queued once, so the walk stays linear.
        later = len(numbers)
        while todo:
            n = todo.pop()
            if n in reachable or n not in by_number:
                continue
            reachable.add(n)
            successors, decided = _successors(by_number[n], outputs)
            todo.extend(successors)
            if not decided:
                i = bisect.bisect_right(numbers, n)
                if i < later:
                    todo.extend(numbers[i:later])
                    later = i

    main_path: list[int] = []
    on_main: set[int] = set()  # (a list's `in` would make a long chain quadratic)
    if numbers:
        at: int | None = numbers[0]
        while at is not None and at in by_number and at not in on_main:
            main_path.append(at)
            on_main.add(at)
            successors, decided = _successors(by_number[at], outputs)
            at = successors[0] if decided and successors else None

    statuses = {n: (SKIPPED if by_number[n].status == "pending" and n not in reachable
                    else by_number[n].status) for n in numbers}
    waiting: dict[int, dict[int, str]] = {}
    ready: list[int] = []
    for n in numbers:
        if statuses[n] != "pending":
            continue
        missing = unmet_dependencies(by_number[n], statuses)
        if missing:
            waiting[n] = missing
        else:
            ready.append(n)
    ready_set = set(ready)
    on_path = [n for n in main_path if n in ready_set]
    first = set(on_path)
    ordered = on_path + [n for n in ready if n not in first]
    return Schedule(frozenset(reachable), tuple(main_path), statuses, tuple(ordered), waiting)


def unmet_dependencies(record: StepRecord, statuses: Mapping[int, str]) -> dict[int, str]:
    """The steps ``record`` waits for → their display status ({} when it may start).

    A dependency is met when it is complete, or skipped (the branch not taken) and
    ``record`` does not read its output.
    """
    missing: dict[int, str] = {}
    reads: set[int] | None = None  # parsed only when a dependency was skipped
    for d in record.depends_on:
        status = statuses.get(d, "not in the plan")
        if status == "complete":
            continue
        if status == SKIPPED:
            if reads is None:
                reads = set(step_refs(record.spec.input_variables))
            if d not in reads:
                continue
        missing[d] = status
    return missing


def decision_outputs(store: PlanStore, plan: StoredPlan) -> dict[str, Any]:
    """The accepted outputs that reachability depends on: complete conditional steps'.

    Reading only these (not every handoff) keeps a status check cheap on big plans.
    """
    wanted = [r.spec.step for r in plan.steps
              if r.status == "complete" and decides_next(r.spec)]
    return store.outputs(only=wanted, plan=plan) if wanted else {}


@dataclass
class _Kept:
    """What ``plan_schedule`` keeps in the store between two calls."""

    keys: list[Any]  # per step: its record's identity (a kept record), or ``_seen`` of it
    held: list[StepRecord]  # (alive, so that the identities in ``keys`` are not reused)
    cond: list[int]  # positions of the conditional steps
    stamps: tuple[Any, ...]  # their accepted handoffs' stamps, of the complete ones
    sched: Schedule
    dependents: dict[int, list[int]]  # step number -> positions of the steps needing it
    on_path: dict[int, int]  # step number -> its position on the main path


def plan_schedule(store: PlanStore, plan: StoredPlan) -> Schedule:
    """``schedule`` for a loaded plan, reading only the outputs it needs from the store.

    Kept by the store, and brought up to date from what changed: a run asks for the
    schedule of a 1,000-step plan several times per step, and a step changes one or two
    statuses. A record the store keeps (unchanged on disk, ``records.kept``) is known by
    its identity; any other by its spec, status and dependencies. When only statuses of
    steps that decide nothing changed, reachability stands, and only those steps and
    the steps that depend on them are looked at again; anything else (a spec, the
    dependencies, a conditional step's status or its accepted handoff) is computed
    afresh."""
    steps = plan.steps
    if plan.kept_but(steps) is not None:  # every record kept but those ``get`` copied
        keys: list[Any] = list(map(id, steps))
        for i in plan.kept_but(steps) or ():
            keys[i] = _seen(steps[i])
    else:
        keys = [id(r) if r.__dict__.get("_kept") else _seen(r) for r in steps]
    kept: _Kept | None = store.memo.get("schedule")
    if kept is not None and len(kept.keys) == len(keys) and \
            _stamps(store, steps, kept.cond) == kept.stamps:
        changed = [i for i, (a, b) in enumerate(zip(kept.keys, keys, strict=True)) if a != b]
        if not changed:
            return kept.sched
        updated = _update(kept, steps, changed)
        if updated is not None:
            kept.keys, kept.held, kept.sched = keys, list(steps), updated
            kept.stamps = _stamps(store, steps, kept.cond)
            return updated
    sched = schedule(plan, decision_outputs(store, plan))
    dependents: dict[int, list[int]] = {}
    for i, r in enumerate(steps):
        for d in r.depends_on:
            dependents.setdefault(d, []).append(i)
    cond = [i for i, r in enumerate(steps) if decides_next(r.spec)]
    store.memo["schedule"] = _Kept(keys, list(steps), cond, _stamps(store, steps, cond), sched,
                                   dependents, {n: i for i, n in enumerate(sched.main_path)})
    return sched


def _seen(r: StepRecord) -> tuple[Any, str, tuple[int, ...]]:
    """What the schedule reads of a record: its spec (the object), status, dependencies."""
    return r.spec, r.status, tuple(r.depends_on)


def _stamps(store: PlanStore, steps: list[StepRecord], cond: list[int]) -> tuple[Any, ...]:
    return tuple(stat_stamp(store.handoffs_dir / steps[i].path.name) for i in cond
                 if i < len(steps) and steps[i].status == "complete")


def _update(kept: _Kept, steps: list[StepRecord], changed: list[int]) -> Schedule | None:
    """``kept.sched`` brought up to date for the steps at the ``changed`` positions;
    None when reachability may have moved (then only the whole walk tells)."""
    old = kept.sched
    for i in changed:
        now = steps[i]
        # As seen then: a kept record is as it was; a record of the caller's own may be
        # the same object, changed in place since (its key holds what was seen).
        key = kept.keys[i]
        spec, status, deps = key if type(key) is tuple else _seen(kept.held[i])
        if now.spec is not spec and (
                now.spec.step != spec.step or decides_next(now.spec) != decides_next(spec)
                or now.spec.next_step_sequence_number != spec.next_step_sequence_number
                or now.spec.input_variables != spec.input_variables
                or now.spec.output_variable != spec.output_variable):
            return None
        if tuple(now.depends_on) != deps or (
                decides_next(now.spec) and now.status != status and
                "complete" in (now.status, status)):
            return None
    statuses = dict(old.statuses)
    for i in changed:
        r = steps[i]
        statuses[r.number] = SKIPPED if r.status == "pending" and \
            r.number not in old.reachable else r.status
    look = set(changed)
    for i in changed:
        look.update(kept.dependents.get(steps[i].number, ()))
    waiting = dict(old.waiting_on)
    ready = set(old.ready)
    for i in look:
        r = steps[i]
        ready.discard(r.number)
        waiting.pop(r.number, None)
        if statuses[r.number] == "pending":
            missing = unmet_dependencies(r, statuses)
            if missing:
                waiting[r.number] = missing
            else:
                ready.add(r.number)
    on_path = sorted((n for n in ready if n in kept.on_path), key=kept.on_path.__getitem__)
    first = set(on_path)
    ordered = on_path + sorted(n for n in ready if n not in first)
    return Schedule(old.reachable, old.main_path, statuses, tuple(ordered),
                    dict(sorted(waiting.items())))


def nothing_ready_reason(sched: Schedule, plan: StoredPlan | None = None) -> str:
    """Why no step is ready, in a sentence that says what to do ("" if one is ready).

    With ``plan``, a step that awaits the user's approval is named as such, and so is one
    whose code vote is held for them (``maker.executor.state.held_vote``)."""
    if sched.ready:
        return ""
    awaiting = [r.number for r in plan.steps if r.status == AWAITING] if plan else []
    if awaiting:
        n = awaiting[0]
        return (f"no step is ready: step {n} is done and awaits approval. To go on: "
                f"{decide_hint(n)}")
    open_steps = [n for n, s in sched.statuses.items() if s not in ("complete", SKIPPED)]
    if not open_steps:
        return "every step of the plan is complete (or skipped)"
    held_now = {r.number for r in plan.steps if held(r) is not None} if plan else set()
    running = [f"step {n} " + ("waits for you (its code vote was undecided)" if n in held_now
                               else "is in progress")
               for n in open_steps if sched.statuses[n] == "in-progress"]
    stuck = [f"step {n} is {sched.statuses[n]}" for n in open_steps
             if sched.statuses[n] in ("blocked", "failed")]
    waiting = [f"step {n} waits for " + ", ".join(f"step {d} ({s})" for d, s in deps.items())
               for n, deps in sched.waiting_on.items()]
    detail = "; ".join(running + stuck + waiting) or "no pending step can start"
    hint = ("decide the step that waits for you: `maker step reset N` and run it again, "
            "or `maker step fail N`" if held_now else
            "finish the step in progress with its handoff" if running else
            "reset a blocked or failed step with `maker step reset N`, or start one anyway "
            "with `maker step start N --force`")
    return f"no step is ready: {detail}. To go on: {hint}"


def next_steps(plan: StoredPlan, store: PlanStore) -> list[StepRecord]:
    """The steps that are ready to start, the one on the main path first."""
    sched = plan_schedule(store, plan)
    return [plan.get(n) for n in sched.ready]

