"""The user's approval gate: an accepted complete handoff waits for approval."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from maker.cli.main import cli
from maker.errors import StepError, TransitionError
from maker.executor.approval import approve_step, reject_step
from maker.executor.brief import build_brief
from maker.executor.lifecycle import start_step
from maker.executor.review import record_review
from maker.handoff.gate import accept_handoff
from maker.store.plan_store import PlanStore

from ._step_plans import handoff, linear


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    monkeypatch.delenv("MAKER_AUTOAPPROVE")
    for var in ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"):
        monkeypatch.setenv(var, "")
    monkeypatch.chdir(tmp_path)
    s = linear(tmp_path, 3)
    start_step(s, 1)
    return s


def test_complete_handoff_waits_for_approval(store: PlanStore) -> None:
    result = accept_handoff(store, handoff(1))
    assert result.status == "awaiting-approval"
    record = store.load().get(1)
    assert record.status == "in-progress" and record.meta["awaiting_approval"] is True
    assert store.read_active() is None  # the Stop hook lets the session stop
    assert store.handoff_path(1).exists()
    with pytest.raises(StepError, match="awaits the user's approval"):
        start_step(store, 1)
    with pytest.raises(StepError, match="awaits the user's approval first: `maker step "
                                        "approve 1`"):
        start_step(store, 2)


def test_approve_completes_and_unblocks_the_next_step(store: PlanStore) -> None:
    accept_handoff(store, handoff(1))
    record = approve_step(store, 1, by="alice")
    assert record.status == "complete" and record.meta["approved_by"] == "alice"
    assert "awaiting_approval" not in store.load().get(1).meta
    assert start_step(store, None).step == 2


def test_reject_sends_back_with_notes_in_the_next_brief(store: PlanStore) -> None:
    accept_handoff(store, handoff(1))
    result = reject_step(store, 1, "Use the existing cache, not a new one.")
    record = store.load().get(1)
    assert record.status == "pending"
    assert record.meta["revision_notes"] == ["Use the existing cache, not a new one."]
    assert result.archived is not None and Path(result.archived).exists()
    assert not store.handoff_path(1).exists()
    assert "Use the existing cache, not a new one." in build_brief(store, None, 1)


def test_only_a_step_awaiting_approval_can_be_approved(store: PlanStore) -> None:
    with pytest.raises(TransitionError, match="not awaiting approval"):
        approve_step(store, 1)
    with pytest.raises(TransitionError, match="not awaiting approval"):
        reject_step(store, 2)


def test_blocked_handoff_needs_no_approval(store: PlanStore) -> None:
    result = accept_handoff(store, handoff(1, status="blocked", blockers=["No API key."]))
    assert result.status == "blocked"
    assert store.load().get(1).status == "blocked"


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["step", "outcome", "1"], 0, "status: awaiting-approval"),
        (["step", "approve", "1"], 0, "approved: complete"),
        (["step", "approve", "2"], 1, "not awaiting approval"),
        (["step", "reject", "1", "--notes", "redo it; `rm -rf /` $(x)"], 0, "back to pending"),
        (["step", "approve"], 2, "Missing argument"),
    ],
)
def test_cli(store: PlanStore, args: list[str], code: int, fragment: str) -> None:
    accept_handoff(store, handoff(1, files_changed=["f0.py"]))
    result = CliRunner().invoke(cli, [*args, "--plans-dir", str(store.root)])
    assert result.exit_code == code, result.output
    assert fragment in result.output


def test_outcome_says_review_and_sentinel(store: PlanStore) -> None:
    accept_handoff(store, handoff(1, files_changed=[f"f{i}.py" for i in range(6)]))
    runner = CliRunner()
    out = runner.invoke(cli, ["step", "outcome", "1", "--plans-dir", str(store.root)]).output
    assert "review: required (6 files changed)" in out
    refused = runner.invoke(cli, ["step", "approve", "1", "--plans-dir", str(store.root)])
    assert refused.exit_code == 1 and "needs the independent review first" in refused.output
    record_review(store, store.load().get(1), "GREEN: fine.\nVERDICT: approve")
    runner.invoke(cli, ["step", "approve", "1", "--plans-dir", str(store.root)])
    out = runner.invoke(cli, ["step", "outcome", "1", "--plans-dir", str(store.root)]).output
    assert "sentinel: STEP_COMPLETE" in out


def test_status_and_plan_md_show_awaiting_approval(store: PlanStore) -> None:
    accept_handoff(store, handoff(1))
    assert "| awaiting-approval |" in store.overview_path.read_text(encoding="utf-8")
    out = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)]).output
    assert "awaiting-approval" in out
    assert "No step is ready: step 1 is done and awaits the user's approval. To go on: " \
           "`maker step approve 1`" in out


def test_a_large_step_waits_for_review_even_when_auto_approved(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAKER_AUTOAPPROVE", "1")
    small = accept_handoff(store, handoff(1, files_changed=["a.py", "b.py"]))
    assert small.status == "complete"
    start_step(store, 2)
    large = accept_handoff(store, handoff(2, files_changed=[f"f{i}.py" for i in range(5)]))
    assert large.status == "awaiting-approval"
    out = CliRunner().invoke(cli, ["step", "outcome", "2", "--plans-dir", str(store.root)])
    assert "launch maker:reviewer; if its verdict is approve" in out.output


def test_status_shows_what_a_hand_edit_broke_across_steps(store: PlanStore) -> None:
    path = store.load().get(2).path
    path.write_text(path.read_text().replace("next: 3", "next: 1"))  # a loop 1 → 2 → 1
    result = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert result.exit_code == 0
    assert "The plan's files have 1 problem(s), hand edits perhaps" in result.output
    assert "never reaches an end" in result.output or "loop" in result.output


def test_a_step_cannot_be_reset_under_a_running_step_that_uses_it(store: PlanStore) -> None:
    from maker.executor.lifecycle import reset_step

    accept_handoff(store, handoff(1))
    approve_step(store, 1)
    start_step(store, 2)  # reads step 1's output
    with pytest.raises(StepError, match=r"step 2 \(Step number 2\) is in progress and depends "
                                        r"on step 1: reset step 2 first"):
        reset_step(store, 1)
    reset_step(store, 2)
    assert reset_step(store, 1).previous_status == "complete"
