"""Every state change is all-or-nothing: killed before any of its file-system changes,
the next reader sees the whole old state or the whole new one.

Each state-changing operation runs in a forked child that dies (``os._exit``, as a
SIGKILL would leave it: no cleanup, no ``finally``) just before its N-th rename, unlink,
mkdir, rmdir or link, for N = 1, 2, … until the operation finishes without reaching N.
After each death the parent reads the plan as the next command would, and the tree of
``plans/`` must equal, byte for byte once timestamps are masked, either the tree before
the operation or the tree a clean run of it produces. (``benchmarks/crash_harness.py``
does the same to the real CLI with strace, at the syscall level, and with random kills.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.crash import run_killed
from harness.crash_states import awaiting, in_progress, snapshot, stopped
from harness.step_plans import (
    handoff,
    make_step,
)
from maker.core.models import Plan
from maker.executor.acceptance import approval
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.state import lifecycle
from maker.store.plan_store import PlanStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


OPERATIONS: dict[str, tuple[Callable[[Path], PlanStore], Callable[[PlanStore], object]]] = {
    "plan write": (stopped, lambda s: s.write_plan(
        Plan(reasoning="Again.", steps=[make_step(1, 2), make_step(2, -1)],
             task="Another thing"))),
    "step start": (stopped, lambda s: lifecycle.start_step(s, 2)),
    "handoff accept": (in_progress, lambda s: accept_handoff(
        s, handoff(2, discoveries=["Found x"]))),
    "handoff accept blocked": (in_progress, lambda s: accept_handoff(
        s, handoff(2, status="blocked", blockers=["No access to the database"]))),
    "approve": (awaiting, lambda s: approval.approve_step(s, 2, "user")),
    "reject": (awaiting, lambda s: approval.reject_step(s, 2, "Use the new schema")),
    "reset": (awaiting, lambda s: lifecycle.reset_step(s, 2)),
    "reset complete": (stopped, lambda s: lifecycle.reset_step(s, 1)),
    "fail": (in_progress, lambda s: lifecycle.fail_step(s, 2, ["It broke"])),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_kill_before_any_change_leaves_the_old_state_or_the_new(
        name: str, project: Path, tmp_path: Path) -> None:
    setup, op = OPERATIONS[name]
    old_store = setup(project)
    old = snapshot(old_store.root)
    op(old_store)
    new = snapshot(old_store.root)
    assert new != old, "the operation changed nothing: the test would prove nothing"

    kills, seen_old, seen_new = 0, 0, 0
    for n in range(1, 400):
        where = tmp_path / f"{name.replace(' ', '-')}-{n}"
        where.mkdir()
        os.chdir(where)
        store = setup(where)
        assert snapshot(store.root) == old
        if not run_killed(op, store, n):
            assert snapshot(store.root) == new
            break
        kills += 1
        PlanStore(store.root).settle()  # what the next command or hook does first
        after = snapshot(store.root)
        if after == old:
            seen_old += 1
        elif after == new:
            seen_new += 1
        else:
            keys = sorted(set(after) | set(old) | set(new))
            not_old = [k for k in keys if after.get(k) != old.get(k)]
            not_new = [k for k in keys if after.get(k) != new.get(k)]
            pytest.fail(f"{name}: killed before change {n}, the next reader sees a mixed "
                        f"state: unlike the old one in {not_old[:6]}, unlike the new one in "
                        f"{not_new[:6]}")
        store.load()  # and it reads without an error
    else:
        pytest.fail(f"{name} did not finish within 400 changes")
    assert kills >= 3, f"{name}: only {kills} kill points: the harness is not reaching it"
    assert seen_old >= 1


def test_an_exception_in_the_middle_of_a_change_undoes_it(project: Path) -> None:
    store = in_progress(project)
    old = snapshot(store.root)
    with pytest.raises(RuntimeError), store.lock():
        record = store.load().get(2)
        record.status = "failed"
        store.save_step(record)
        store.write_active(None)
        raise RuntimeError("boom")
    assert snapshot(store.root) == old


def test_a_journal_left_by_a_crash_is_undone_by_a_hook_that_only_reads(project: Path) -> None:
    store = in_progress(project)
    old = snapshot(store.root)
    assert run_killed(lambda s: lifecycle.fail_step(s, 2, ["x"]), store, 4)
    assert (store.root / ".maker" / "txn").exists()
    assert PlanStore(store.root).read_active() is not None  # settles first
    assert not (store.root / ".maker" / "txn").exists()
    assert snapshot(store.root) == old
