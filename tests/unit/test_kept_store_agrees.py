"""Whatever maker does to a plan, and however, a store that keeps its plan
between loads (the engine's) loads what a fresh store loads, derives the same handoff
heads, previous handoff and schedule: changes through this store, another store, a
forked process, a nested transaction, one undone by an exception, one killed and
recovered, a new plan (the old archived), ``maker plan adopt``; the token replaced by a
symlink, a folder, a FIFO, garbage or a huge file, or ``.maker`` removed; and, once the
window has passed, hand edits (a step, a handoff, a handoff of no step)."""

from __future__ import annotations

import os
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.crash import die_before_change
from harness.step_plans import handoff, make_step, write
from maker.core.models import Plan, PlanStep
from maker.errors import MakerError
from maker.executor.acceptance import approval
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.previous_work import _key, previous_handoff
from maker.executor.state import lifecycle
from maker.executor.state.schedule import plan_schedule
from maker.store import changes
from maker.store.plan_store import PlanStore

TOKEN = Path(".maker") / "generation"


def _steps() -> list[PlanStep]:
    """1 → 2 (conditional: 3 or 4); 3 and 4 → 5 (a join needing 3 and 4); 6 reads 3."""
    return [make_step(1, 2), make_step(2, -2, conditional=True),
            make_step(3, 5, depends_on=[1]), make_step(4, 5, inputs=["step_1_output.result"]),
            make_step(5, 6, depends_on=[3, 4]),
            make_step(6, -1, inputs=["step_3_output.result"], depends_on=[3])]


def loaded(store: PlanStore) -> Any:
    try:
        plan = store.load()
    except MakerError as exc:
        return ("problem", type(exc).__name__, str(exc))
    return (plan.task, plan.created_at,
            [(r.number, r.path.name, r.status, r.spec, r.depends_on, r.meta) for r in plan.steps])


def derived(store: PlanStore) -> Any:
    try:
        plan = store.load()
    except MakerError:
        return None
    return (store.handoff_heads(_key), [previous_handoff(store, k) for k in range(1, 7)],
            plan_schedule(store, plan))


def in_another_process(root: Path, op: str, n: int, choice: int,
                       die_before: int | None = None) -> None:
    """A maker operation in a forked child (another maker process), killed just before
    its ``die_before``-th file-system change when given (as test_crash kills)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (xdist)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            if die_before is not None:
                die_before_change(die_before)
            _maker_op(PlanStore(root), op, n, choice)
        except BaseException:
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)


def _maker_op(store: PlanStore, op: str, n: int, choice: int) -> None:
    out = {"next_step": choice, "reason": "r"} if n == 2 else None
    if op == "start":
        lifecycle.start_step(store, n, force=True)
    elif op == "accept":
        accept_handoff(store, handoff(n, output=out))
    elif op == "accept-large":  # (held for the reviewer, whatever the policy)
        accept_handoff(store, handoff(n, output=out, files_changed=[f"f{i}" for i in range(12)]))
    elif op == "blocked":
        accept_handoff(store, handoff(n, "blocked", blockers=["no access"]))
    elif op == "approve":
        approval.approve_step(store, n, "user")
    elif op == "reset":
        lifecycle.reset_step(store, n)
    elif op == "fail":
        lifecycle.fail_step(store, n, "no")
    elif op == "adopt":
        approval.adopt_approvals(store, "me")
    elif op == "replan":
        store.write_plan(Plan(reasoning="Again.", steps=_steps()[:3 + n % 4], task="Another"))


def _token(root: Path, base: Path, op: str) -> None:
    token = root / TOKEN
    if op == "no-maker":
        shutil.rmtree(root / ".maker", ignore_errors=True)
        return
    token.parent.mkdir(exist_ok=True)
    if token.is_dir() and not token.is_symlink():
        token.rmdir()
    elif os.path.lexists(token):
        token.unlink()
    if op == "tok-symlink":  # (to a file of this test's own)
        (base / "elsewhere").write_text(os.urandom(16).hex() + "\n")
        token.symlink_to(base / "elsewhere")
    elif op == "tok-dir":
        token.mkdir()
    elif op == "tok-fifo":
        os.mkfifo(token)
    elif op == "tok-garbage":
        token.write_bytes(os.urandom(40))
    elif op == "tok-huge":
        token.write_text("0" * 32 + "\n" + "x" * 100_000)


def _hand(root: Path, op: str, n: int) -> bool:
    """A hand edit; whether one was made."""
    if op == "hand-stray":  # a handoff of no step file
        (root / "handoffs").mkdir(exist_ok=True)
        (root / "handoffs" / f"0{n}-stray.md").write_text(
            f"---\nstep: {n}\naccepted_at: '2999-01-0{n}T00:00:00Z'\n---\nMine.\n")
        return True
    folder, old, new = (("steps", "title: Step", "title: Hand") if op == "hand-step" else
                        ("handoffs", "accepted_at: '", "accepted_at: '3"))
    for path in sorted((root / folder).glob(f"0{n}-*.md"))[:1]:
        path.write_text(path.read_text().replace(old, new))
        return True
    return False


_OPS = (["start", "accept"] * 3 + ["kept:start", "kept:accept", "approve", "reset", "fork",
                                    "nested"] * 2
        + ["accept-large", "blocked", "fail", "undone", "crash", "replan", "adopt",
           "tok-symlink", "tok-dir", "tok-fifo", "tok-garbage", "tok-huge", "no-maker",
           "window", "hand-stray", "hand-step", "hand-handoff"])


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(policy=st.sampled_from(["auto", "never"]),
       ops=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(1, 6), st.integers(1, 40)),
                    min_size=1, max_size=14))
def test_a_kept_store_agrees_with_a_fresh_one_whatever_maker_does(
        tmp_path_factory: pytest.TempPathFactory, policy: str,
        ops: list[tuple[str, int, int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        base = tmp_path_factory.mktemp("plan")
        root = write(base, _steps(), policy).root
        kept = PlanStore(root)
        kept.full_read_every = changes.FULL_EVERY
        later = [0.0]
        real = time.monotonic
        patch.setattr(time, "monotonic", lambda: real() + later[0])
        kept.load()
        hand_edited = False
        for op, n, k in ops:
            try:
                running = [r.number for r in PlanStore(root).load().steps
                           if r.status in ("in-progress", "awaiting-approval")]
            except MakerError:
                running = []
            if running and op not in ("start", "kept:start", "reset"):
                n = running[0]  # (what a handoff or an approval is for)
            choice = 3 if k % 2 else 4
            other = PlanStore(root)
            try:
                if op.startswith("kept:"):
                    _maker_op(kept, op[5:], n, choice)
                elif op == "undone":
                    with other.lock():
                        _maker_op(other, "start", n, choice)
                        raise RuntimeError("undone")
                elif op == "nested":  # another store's writes inside ours, read by ours
                    with kept.lock():
                        kept.load()
                        record = other.load().get(n)
                        record.meta["note"] = k
                        other.save_step(record)
                        kept.load()
                        if k % 2:
                            _maker_op(other, ("start", "accept", "reset")[k % 3], n, choice)
                            kept.load()
                        if k % 3 == 0:
                            raise RuntimeError("undone")
                elif op == "fork":
                    in_another_process(root, ("start", "accept", "reset")[k % 3], n, choice)
                elif op == "crash":
                    in_another_process(root, ("start", "accept", "reset", "replan")[k % 4], n,
                                       choice, die_before=k)
                elif op.startswith("tok-") or op == "no-maker":
                    _token(root, base, op)
                elif op == "window":
                    later[0] += changes.FULL_EVERY
                    hand_edited = False
                elif op.startswith("hand-"):
                    hand_edited = _hand(root, op, n) or hand_edited
                else:
                    _maker_op(other, op, n, choice)
            except (MakerError, RuntimeError):
                pass
            if not hand_edited:  # (a hand edit: only once the window has passed)
                fresh = PlanStore(root)
                assert loaded(kept) == loaded(fresh), (op, n, k)
                assert derived(kept) == derived(fresh), (op, n, k)
