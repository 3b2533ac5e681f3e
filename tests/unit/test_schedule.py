"""Derived statuses: reachability through conditional steps, skipped branches, readiness."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.step_plans import (
    branching,
    complete,
    linear,
    make_step,
    write,
)
from maker.executor.loop.status_view import status_summary, summary_rows
from maker.executor.state.schedule import (
    SKIPPED,
    next_steps,
    nothing_ready_reason,
    schedule,
)
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord, StoredPlan

pytestmark = pytest.mark.usefixtures("project")


def statuses(store: PlanStore) -> dict[int, str]:
    plan = store.load()
    return dict(schedule(plan, store.outputs(plan=plan)).statuses)


def ready(store: PlanStore) -> list[int]:
    return [r.number for r in next_steps(store.load(), store)]


def test_linear_plan_runs_in_order(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    assert ready(store) == [1]
    assert statuses(store) == {1: "pending", 2: "pending", 3: "pending"}
    complete(store, 1)
    assert ready(store) == [2]
    complete(store, 2)
    complete(store, 3)
    assert ready(store) == []
    sched = schedule(store.load(), store.outputs())
    assert "every step of the plan is complete" in nothing_ready_reason(sched)


def test_undecided_conditional_leaves_every_later_step_reachable(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    assert statuses(store) == {1: "complete", 2: "pending", 3: "pending", 4: "pending",
                               5: "pending"}
    assert ready(store) == [2]


def test_branch_not_taken_is_skipped_and_next_follows_the_choice(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    complete(store, 2, {"next_step": 4, "reason": "tests exist"})
    assert statuses(store)[3] == SKIPPED
    assert ready(store) == [4]
    complete(store, 4)
    # The join (5) does not wait for the skipped step 3: it does not read its output.
    assert ready(store) == [5]
    rows = {r.step: r for r in summary_rows(store.load(), store)}
    assert rows[3].status == SKIPPED and not rows[3].ready
    assert rows[5].ready


def test_other_branch(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    complete(store, 2, {"next_step": 3, "reason": "no tests"})
    assert statuses(store)[4] == SKIPPED
    assert ready(store) == [3]


def test_conditional_ending_the_plan_skips_the_rest(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    complete(store, 2, {"next_step": -1, "reason": "nothing to do"})
    assert [s for n, s in sorted(statuses(store).items()) if n > 2] == [SKIPPED] * 3
    assert ready(store) == []


def test_join_waits_for_a_skipped_step_whose_output_it_reads(tmp_path: Path) -> None:
    store = branching(tmp_path, join_reads=["step_3_output.result"])
    complete(store, 1)
    complete(store, 2, {"next_step": 4, "reason": "r"})
    complete(store, 4)
    plan = store.load()
    sched = schedule(plan, store.outputs(plan=plan))
    assert sched.ready == ()
    assert sched.waiting_on[5] == {3: SKIPPED}
    assert "step 5 waits for step 3 (skipped)" in nothing_ready_reason(sched)


def test_stored_status_is_never_hidden_by_skipped(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    complete(store, 3)  # done by hand before the conditional decided
    complete(store, 2, {"next_step": 4, "reason": "r"})
    assert statuses(store)[3] == "complete"


def test_main_path_step_comes_first(tmp_path: Path) -> None:
    # Main path 1 → 4 → 2 (undecided); 3 is reachable through 2 and needs only 1.
    store = write(tmp_path, [make_step(1, 4), make_step(2, -2, conditional=True, depends_on=[4]),
                             make_step(3, -1, depends_on=[1]),
                             make_step(4, 2, depends_on=[1])])
    complete(store, 1)
    assert ready(store) == [4, 3]


def test_a_step_no_path_leads_to_is_skipped(tmp_path: Path) -> None:
    # 1 → 3 → end; 2 hangs off 1 through depends_on only, and nothing leads to it.
    store = write(tmp_path, [make_step(1, 3), make_step(2, -1, depends_on=[1]),
                             make_step(3, -1, depends_on=[1])])
    complete(store, 1)
    assert ready(store) == [3]
    assert statuses(store)[2] == SKIPPED


def test_blocked_and_failed_rows_carry_their_reasons(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    record = store.load().get(1)
    record.status = "failed"
    record.meta["reasons"] = ["tests fail", "no network"]
    store.save_step(record)
    rows = summary_rows(store.load(), store)
    assert rows[0].reasons == ["tests fail", "no network"]
    assert rows[1].waiting_on == {1: "failed"}
    assert rows[1].to_dict()["waiting_on"] == {"1": "failed"}
    text = status_summary(store)
    assert "Failed: step 1" in text and "tests fail" in text


def test_status_summary_names_the_running_and_ready_steps(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    text = status_summary(store)
    assert "Build the thing" in text and "Ready: step 1" in text
    record = store.load().get(1)
    record.status = "in-progress"
    store.save_step(record)
    assert "In progress: step 1" in status_summary(store)


def test_status_summary_of_a_broken_plan_does_not_raise(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    path = store.load().get(2).path
    path.write_text("no front matter", encoding="utf-8")
    text = status_summary(store)
    assert "cannot be read" in text and path.name in text


def _record(n: int, nxt: int, conditional: bool) -> StepRecord:
    return StepRecord(make_step(n, nxt, conditional=conditional), "pending",
                      [n - 1] if n > 1 else [], Path(f"{n}.md"))


def test_schedule_stays_linear_on_big_plans_with_many_conditionals() -> None:
    n = 10_000
    steps = [_record(k, -2 if k % 2 else k + 1, conditional=bool(k % 2))
             for k in range(1, n + 1)]
    plan = StoredPlan("t", "r", "", steps)
    sched = schedule(plan, {})  # no recursion limit hit; its speed is benchmarked, not timed
    assert len(sched.reachable) == n
    assert sched.ready == (1,)


# -- the kept schedule (plan_schedule) against a fresh one --------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from maker.executor.state.schedule import decision_outputs, plan_schedule  # noqa: E402

_STATUSES = st.sampled_from(["pending", "in-progress", "awaiting-approval", "complete",
                             "blocked", "failed"])


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(["status", "saved", "decide", "reload"]),
                              st.integers(1, 6), _STATUSES, st.sampled_from([3, 4, -1])),
                    min_size=1, max_size=15))
def test_the_kept_schedule_is_the_schedule_of_the_plan_as_it_is(
        tmp_path_factory: pytest.TempPathFactory,
        ops: list[tuple[str, int, str, int]]) -> None:
    root = tmp_path_factory.mktemp("plan")
    store = write(root, [make_step(1, 2), make_step(2, -2, conditional=True),
                         make_step(3, 5), make_step(4, 5, inputs=["step_1_output.result"]),
                         make_step(5, 6, depends_on=[3]), make_step(6, -1)])
    store.full_read_every = 1.0  # (kept records, shared between loads)
    plan = store.load()
    for op, n, status, choice in ops:
        if op == "status":  # in memory, as a transition does before it saves
            plan.get(n).status = status
        elif op == "saved":
            record = store.load().get(n)
            record.status = status if status != "complete" else "blocked"
            store.save_step(record)
            plan = store.load()
        elif op == "decide":  # step 2 chooses (again): its accepted output moves
            complete(store, 2, output={"next_step": choice, "reason": "r"})
            plan = store.load()
        else:
            plan = store.load()
        kept = plan_schedule(store, plan)
        fresh = schedule(plan, decision_outputs(store, plan))
        assert kept == fresh, (op, n, status, choice)
