"""A step run beside others works in its own worktree: its Bash commands run there
without a `cd` the executor must remember (``maker.executor.protocol.limits``), and are checked
there; maker's own commands run where they are sent."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from harness.crash_wave_states import wave_ready
from maker.executor.protocol.limits import executor_limits
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verification_off: None
          ) -> PlanStore:
    """Steps 1 (a/**) and 2 (b/**), each with Bash, side by side; step 1 started in its
    worktree and oriented."""
    from maker.executor.parallel.worktree_step import start_in_worktree
    from maker.executor.protocol.orient import record_orient

    monkeypatch.chdir(tmp_path)
    store = wave_ready(tmp_path, tools=["Bash", "Read"])
    start_in_worktree(store, 1, None)
    record_orient(store, 1, "none")
    return store


def _limit(store: PlanStore, command: str, cwd: Path):  # type: ignore[no-untyped-def]
    record = store.load_step(1)
    return executor_limits(store, record, "Bash", {"command": command}, cwd=cwd,
                           workspace=worktree_of(store, record))


def test_a_command_sent_from_the_main_checkout_runs_in_the_worktree(store: PlanStore) -> None:
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    limit = _limit(store, "echo hi > a/out.txt", store.project)
    assert limit.refusal is None and limit.run is not None
    assert f"cd {shlex.quote(str(tree))} && echo hi > a/out.txt" in limit.run


def test_a_command_sent_from_the_worktree_runs_as_sent(store: PlanStore) -> None:
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    limit = _limit(store, "echo hi > a/out.txt", tree)
    assert limit.refusal is None and "cd " not in (limit.run or "")


def test_the_main_checkout_stays_refused_from_the_worktree(store: PlanStore) -> None:
    limit = _limit(store, f"echo hi > {store.project}/a/x.txt", store.project)
    assert limit.refusal is not None


def test_makers_own_commands_run_where_they_are_sent(store: PlanStore) -> None:
    limit = _limit(store, "maker land 1", store.project)
    assert "cd " not in (limit.run or "")
