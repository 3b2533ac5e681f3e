"""The schedule ``plan_schedule`` keeps and updates between calls equals a fresh
``schedule(plan, decision_outputs(store, plan))``, for any plan: conditional steps,
joins, branches not taken, dependencies on skipped steps, steps reading outputs."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.step_plans import complete, make_step, write
from maker.errors import StepError
from maker.executor.state.lifecycle import reset_step
from maker.executor.state.schedule import decision_outputs, plan_schedule, schedule
from maker.store import changes

_STATUSES = st.sampled_from(["pending", "in-progress", "awaiting-approval", "complete",
                             "blocked", "failed"])


@st.composite
def plans(draw: Any) -> list[Any]:
    count = draw(st.integers(2, 7))
    steps = []
    for n in range(1, count + 1):
        earlier = list(range(1, n))
        conditional = draw(st.booleans())
        nxt = draw(st.sampled_from([n + 1 if n < count else -1, -1, -2]
                                   + ([n + 2] if n + 2 <= count else [])))
        if conditional:
            nxt = -2
        reads = draw(st.lists(st.sampled_from(earlier), max_size=2, unique=True)) \
            if earlier else []
        deps = draw(st.lists(st.sampled_from(earlier), max_size=3, unique=True)) \
            if earlier else []
        steps.append(make_step(n, nxt, conditional=conditional,
                               inputs=[f"step_{r}_output.result" for r in reads],
                               depends_on=deps))
    return steps


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=plans(), kept=st.booleans(),
       ops=st.lists(st.tuples(st.sampled_from(["status", "saved", "decide", "reset", "reload",
                                               "deps"]),
                              st.integers(1, 7), _STATUSES, st.integers(-1, 8)),
                     min_size=1, max_size=15))
def test_the_kept_schedule_is_a_fresh_one_for_any_plan(
        tmp_path_factory: Any, steps: list[Any], kept: bool,
        ops: list[tuple[str, int, str, int]]) -> None:
    store = write(tmp_path_factory.mktemp("plan"), steps)
    if kept:
        store.full_read_every = changes.FULL_EVERY
    numbers = [s.step for s in steps]
    plan = store.load()
    for op, n, status, choice in ops:
        n = numbers[(n - 1) % len(numbers)]
        if op == "status":  # in memory, as a transition does before it saves
            plan.get(n).status = status
        elif op == "deps":  # in memory too
            plan.get(n).depends_on = [d for d in numbers if d < n and d % 2 == choice % 2]
        elif op == "saved":
            record = store.load().get(n)
            record.status = status if status != "complete" else "blocked"
            store.save_step(record)
            plan = store.load()
        elif op == "decide":  # a complete step's accepted output (chooses, if it decides)
            complete(store, n, output={"next_step": choice, "reason": "r", "result": "x"})
            plan = store.load()
        elif op == "reset":  # its handoff moves away (refused while a dependent runs)
            with contextlib.suppress(StepError):
                reset_step(store, n)
            plan = store.load()
        else:
            plan = store.load()
        assert plan_schedule(store, plan) == schedule(plan, decision_outputs(store, plan)), \
            (op, n, status, choice)


def test_a_dependency_added_in_memory_to_a_record_already_scheduled_counts(
        tmp_path_factory: Any) -> None:
    store = write(tmp_path_factory.mktemp("plan"), [make_step(1, 2), make_step(2, 3),
                                                    make_step(3, -1)])
    plan = store.load()

    def fresh() -> Any:
        return schedule(plan, decision_outputs(store, plan))

    plan.get(3).status = "pending"  # (the plan's own copy of step 3, scheduled)
    assert plan_schedule(store, plan) == fresh()
    plan.get(3).depends_on = [1]  # the same copy, changed again
    assert plan_schedule(store, plan) == fresh()
    plan.get(1).status = "in-progress"
    assert plan_schedule(store, plan) == fresh()
    assert plan_schedule(store, plan).waiting_on[3] == {1: "in-progress"}


def test_a_spec_replaced_in_memory_in_a_record_already_scheduled_counts(
        tmp_path_factory: Any) -> None:
    import dataclasses

    store = write(tmp_path_factory.mktemp("plan"), [make_step(1, 2), make_step(2, 3),
                                                    make_step(3, -1)])
    plan = store.load()
    plan.get(1).status = "pending"
    assert plan_schedule(store, plan) == schedule(plan, decision_outputs(store, plan))
    record = plan.get(1)
    record.spec = dataclasses.replace(record.spec, next_step_sequence_number=3)  # 2: skipped
    assert plan_schedule(store, plan) == schedule(plan, decision_outputs(store, plan))
