"""Step lifecycle: start (one at a time, dependencies, --force), fail, reset, transitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import (
    branching,
    complete,
    linear,
)
from maker.errors import DependencyError, StepError, StepNotFoundError, TransitionError
from maker.executor.state.lifecycle import (
    ALLOWED_TRANSITIONS,
    fail_step,
    reset_step,
    set_status,
    start_step,
)
from maker.store.plan_store import PlanStore

pytestmark = pytest.mark.usefixtures("project")


def status_of(store: PlanStore, n: int) -> str:
    return store.load().get(n).status


def test_start_with_no_number_takes_the_first_ready_step(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    result = start_step(store, session_id="sess-1")
    assert result.step == 1 and not result.restarted and not result.forced
    record = store.load().get(1)
    assert record.status == "in-progress"
    assert record.meta["started_at"] == result.started_at
    assert record.meta["started_by"] == "sess-1"
    active = store.read_active()
    assert active is not None
    assert active["step"] == 1 and active["session_id"] == "sess-1"
    assert active["started_at"] == result.started_at and active["attempts"] == {}
    assert "in-progress" in store.overview_path.read_text(encoding="utf-8")


def test_starting_a_step_builds_no_brief(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`maker step begin` prints no brief (the executor reads it with `maker context N`):
    starting a step must not build one only to throw it away."""
    import maker.executor.launch.brief as brief

    def built(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("start_step built a brief")

    monkeypatch.setattr(brief, "build_brief", built)
    store = linear(tmp_path, 2)
    assert start_step(store, 1).step == 1
    assert start_step(store, 1).restarted


def test_unmet_dependencies_are_refused_and_listed(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    with pytest.raises(DependencyError) as err:
        start_step(store, 3)
    assert err.value.missing == {2: "pending"}
    assert "step 2 (pending)" in str(err.value) and "--force" in str(err.value)
    assert status_of(store, 3) == "pending"
    assert store.read_active() is None


def test_force_overrides_and_is_recorded(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    result = start_step(store, 3, force=True)
    assert result.forced and result.overridden == {2: "pending"}
    meta = store.load().get(3).meta
    assert meta["forced"] is True
    assert meta["forced_over"] == ["step 2 was pending"]
    assert "forced: true" in store.load().get(3).path.read_text(encoding="utf-8")


def test_force_without_need_records_nothing(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    result = start_step(store, 1, force=True)
    assert not result.forced
    assert "forced" not in store.load().get(1).meta


def test_one_step_at_a_time(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    start_step(store, 2)
    with pytest.raises(StepError, match=r"step 2 \(Step number 2\) is already in progress"):
        start_step(store, 4)
    with pytest.raises(StepError, match="maker step reset 2"):
        start_step(store, 3, force=True)


def test_restarting_the_step_in_progress_is_idempotent(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    first = start_step(store, 1, session_id="a")
    path = store.load().get(1).path
    before = path.read_text(encoding="utf-8")
    again = start_step(store, 1, session_id="a")
    assert again.restarted and again.started_at == first.started_at
    assert path.read_text(encoding="utf-8") == before
    # Another session cannot take the step over; a shell may read the brief again.
    with pytest.raises(StepError, match=r"in progress in another Claude Code session \(a\)"):
        start_step(store, 1, session_id="b")
    assert start_step(store, 1).restarted
    active = store.read_active()
    assert active is not None and active["session_id"] == "a"
    # With no number, the step in progress is the one resumed.
    assert start_step(store).step == 1


def test_restart_rewrites_a_lost_active_marker(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    start_step(store, 1)
    store.write_active(None)
    start_step(store, 1)
    active = store.read_active()
    assert active is not None and active["step"] == 1


@pytest.mark.parametrize("status", ["complete", "blocked", "failed"])
def test_finished_steps_need_a_reset(tmp_path: Path, status: str) -> None:
    store = linear(tmp_path, 2)
    complete(store, 1, status=status)
    with pytest.raises(TransitionError) as err:
        start_step(store, 1)
    text = str(err.value)
    assert f"from {status} to in-progress" in text and "maker step reset 1" in text


def test_nothing_ready(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    complete(store, 1, status="failed")
    with pytest.raises(StepError, match="no step is ready: step 1 is failed"):
        start_step(store)
    complete(store, 1)
    complete(store, 2)
    with pytest.raises(StepError, match="every step of the plan is complete"):
        start_step(store)


def test_unknown_step(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    with pytest.raises(StepNotFoundError, match="no step 9"):
        start_step(store, 9)


def test_a_skipped_step_needs_force(tmp_path: Path) -> None:
    store = branching(tmp_path)
    complete(store, 1)
    complete(store, 2, {"next_step": 4, "reason": "r"})
    with pytest.raises(StepError, match=r"branch the plan did not take \(step 2 chose step 4\)"):
        start_step(store, 3)
    result = start_step(store, 3, force=True)
    assert result.forced
    assert store.load().get(3).meta["forced_over"] == ["step 3 was on a branch not taken"]


# -- transitions ------------------------------------------------------------------------

APPROVED = {"approved_by": "user", "approved_at": "2026-01-01T00:00:00Z"}
TRANSITIONS = [(a, b) for a in ALLOWED_TRANSITIONS for b in ALLOWED_TRANSITIONS if a != b]


@pytest.mark.parametrize(("src", "dst"), TRANSITIONS)
def test_transition_table(tmp_path: Path, src: str, dst: str) -> None:
    store = linear(tmp_path, 1)
    if src == "complete":
        complete(store, 1)
    else:
        record = store.load().get(1)
        record.status = src
        store.save_step(record)
    allowed = (src, dst) in {("pending", "in-progress"), ("in-progress", "complete"),
                             ("in-progress", "blocked"), ("in-progress", "failed"),
                             ("in-progress", "awaiting-approval"),
                             ("awaiting-approval", "complete")}
    if allowed:
        assert set_status(store, 1, dst, APPROVED).status == dst
        assert status_of(store, 1) == dst
    else:
        with pytest.raises(TransitionError) as err:
            set_status(store, 1, dst)
        assert f"from {src} to {dst}" in str(err.value)
        assert "allowed moves are" in str(err.value)
        assert status_of(store, 1) == src


def test_finishing_clears_the_active_marker(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    start_step(store, 1)
    set_status(store, 1, "complete", APPROVED)
    assert store.read_active() is None
    assert "finished_at" in store.load().get(1).meta


# -- fail -----------------------------------------------------------------------------


def test_fail_records_the_reasons(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    start_step(store, 1)
    record = fail_step(store, 1, ["handoff rejected 3 times", "output: missing `result`"])
    assert record.status == "failed"
    meta = store.load().get(1).meta
    assert meta["reasons"] == ["handoff rejected 3 times", "output: missing `result`"]
    assert "failed_at" in meta
    assert store.read_active() is None
    # Failing again replaces the reasons (the hooks may call it twice).
    fail_step(store, 1, "gave up")
    assert store.load().get(1).meta["reasons"] == ["gave up"]


def test_fail_needs_a_started_step(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    with pytest.raises(TransitionError, match="from pending to failed"):
        fail_step(store, 1, "nope")


def test_fail_with_blank_reasons(tmp_path: Path) -> None:
    store = linear(tmp_path, 1)
    start_step(store, 1)
    assert fail_step(store, 1, ["  "]).meta["reasons"] == ["no reason given"]


# -- reset ----------------------------------------------------------------------------


def test_reset_archives_the_handoff(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    start_step(store, 1)
    complete(store, 1, {"result": "first try"})
    handoff = store.handoff_path(1)
    assert handoff.exists()
    result = reset_step(store, 1)
    assert result.previous_status == "complete"
    assert result.archived_handoff is not None and result.archived_handoff.exists()
    assert result.archived_handoff.parent == store.handoffs_dir / "reset"
    assert "first try" in result.archived_handoff.read_text(encoding="utf-8")
    assert not handoff.exists()
    assert store.outputs() == {}
    record = store.load().get(1)
    assert record.status == "pending"
    assert "started_at" not in record.meta and record.meta["resets"] == 1
    # A second run's handoff is archived beside the first one, not over it.
    start_step(store, 1)
    complete(store, 1, {"result": "second try"})
    second = reset_step(store, 1).archived_handoff
    assert second is not None and second != result.archived_handoff
    assert len(list((store.handoffs_dir / "reset").iterdir())) == 2


def test_reset_clears_the_active_marker_and_forced(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    start_step(store, 2, force=True)
    reset_step(store, 2)
    assert store.read_active() is None
    meta = store.load().get(2).meta
    assert "forced" not in meta and "forced_over" not in meta
    assert status_of(store, 2) == "pending"


def test_reset_leaves_another_steps_marker(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    complete(store, 2, status="failed")
    start_step(store, 1)
    reset_step(store, 2)
    active = store.read_active()
    assert active is not None and active["step"] == 1


def test_reset_of_a_pending_step_changes_nothing(tmp_path: Path) -> None:
    store = linear(tmp_path, 1)
    result = reset_step(store, 1)
    assert result.previous_status == "pending" and result.archived_handoff is None
    assert "resets" not in store.load().get(1).meta


def test_reset_clears_every_key_of_the_attempt_and_keeps_the_history(tmp_path: Path) -> None:
    from maker.store.step_file import ATTEMPT_META, HISTORY_META, REVISION_META, RUN_META

    assert RUN_META == set(ATTEMPT_META) | set(HISTORY_META) | set(REVISION_META)
    assert not set(ATTEMPT_META) & set(HISTORY_META)
    assert not set(REVISION_META) & (set(ATTEMPT_META) | set(HISTORY_META))
    store = linear(tmp_path, 1)
    start_step(store, 1)
    record = store.load().get(1)
    record.status = "failed"
    record.meta.update({key: "x" for key in ATTEMPT_META + REVISION_META})
    record.meta["revision_notes"] = ["use the cache"]
    store.save_step(record)
    reset_step(store, 1)
    meta = store.load().get(1).meta
    assert not (set(ATTEMPT_META) | set(REVISION_META)) & set(meta)
    assert meta["resets"] == 1 and meta["revision_notes"] == ["use the cache"]
    # Starting again also begins a clean attempt, with the history kept.
    record = store.load().get(1)
    record.meta["approved_by"] = "stale"
    store.save_step(record)
    start_step(store, 1)
    meta = store.load().get(1).meta
    assert "approved_by" not in meta and meta["resets"] == 1
