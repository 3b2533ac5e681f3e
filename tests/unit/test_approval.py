"""The approval gate: an accepted complete handoff waits for a person, or for the
approval policy a person set; the model can neither approve nor answer for the user."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import handoff, linear
from maker.cli.main import cli
from maker.errors import StepError, TransitionError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import (
    approval_question,
    approve_step,
    read_policy,
    reject_step,
    set_policy,
)
from maker.executor.acceptance.review import record_review
from maker.executor.launch.brief import build_brief
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verification_off: None
          ) -> PlanStore:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("maker.cli._common.is_terminal", lambda: True)  # a person is there
    s = linear(tmp_path, 3, policy="never")
    start_step(s, 1)
    return s


def test_complete_handoff_waits_for_approval(store: PlanStore) -> None:
    assert read_policy(store).name == "never"  # the default: a person approves
    result = accept_handoff(store, handoff(1))
    assert result.status == "awaiting-approval"
    record = store.load().get(1)
    assert record.status == "awaiting-approval"  # a status of its own, not a flag
    assert store.read_active() is None  # the Stop hook lets the session stop
    assert store.handoff_path(1).exists()
    with pytest.raises(StepError, match="step 1 .* is done and awaits approval first"):
        start_step(store, 1)
    with pytest.raises(StepError, match=r"awaits approval first: the user types "
                                        r"`/maker:approve 1`"):
        start_step(store, 2)


def test_approve_completes_and_unblocks_the_next_step(store: PlanStore) -> None:
    accept_handoff(store, handoff(1))
    record = approve_step(store, 1, by="alice")
    assert record.status == "complete" and record.meta["approved_by"] == "alice"
    assert start_step(store, None).step == 2


def test_no_environment_variable_approves(store: PlanStore,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAKER_AUTOAPPROVE", "1")
    assert accept_handoff(store, handoff(1)).status == "awaiting-approval"


def test_the_auto_policy_approves_a_small_step_and_records_it(store: PlanStore) -> None:
    set_policy(store, "auto", "person (terminal)")
    assert accept_handoff(store, handoff(1, files_changed=["a.py"])).status == "complete"
    record = store.load().get(1)
    assert record.meta["approved_by"] == "policy:auto"
    out = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)]).output
    assert "approval policy: auto" in out
    assert "Approval policy: auto (set by person (terminal))" in \
        store.overview_path.read_text(encoding="utf-8")


def test_an_unknown_or_broken_policy_keeps_the_gate_shut(store: PlanStore) -> None:
    with pytest.raises(StepError, match="'yes' is not an approval policy"):
        set_policy(store, "yes", "x")
    (store.state_dir / "policy.json").write_text('{"name": "always"}')
    assert read_policy(store).name == "never"
    (store.state_dir / "policy.json").write_text("{")
    assert accept_handoff(store, handoff(1)).status == "awaiting-approval"


@pytest.mark.parametrize("env", ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"])
@pytest.mark.parametrize("args", [["step", "approve", "1"], ["step", "reject", "1"],
                                  ["policy", "auto"]])
def test_a_person_decides_only_outside_claude_code(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch, env: str, args: list[str]) -> None:
    accept_handoff(store, handoff(1))
    monkeypatch.setenv(env, "1")
    result = CliRunner().invoke(cli, [*args, "--plans-dir", str(store.root)])
    assert result.exit_code == 2
    assert "does not run inside Claude Code" in result.output
    assert store.load().get(1).status == "awaiting-approval"
    assert read_policy(store).name == "never"


def test_the_approval_question_is_maker_s_own(store: PlanStore) -> None:
    question = approval_question(1, "Step number 1")["questions"][0]
    assert question["question"] == "maker: approve step 1 (Step number 1)?"
    assert [o["label"] for o in question["options"]] == ["Approve step 1", "Reject step 1"]
    assert len(question["header"]) <= 12


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
        approve_step(store, 1, "user")
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
    assert "No step is ready: step 1 is done and awaits approval. To go on: the user " \
           "types `/maker:approve 1`" in out


def test_a_large_step_waits_for_review_even_under_the_auto_policy(store: PlanStore) -> None:
    from maker.executor.acceptance.review_loop import apply_review

    set_policy(store, "auto", "person (terminal)")
    small = accept_handoff(store, handoff(1, files_changed=["a.py", "b.py"]))
    assert small.status == "complete"
    start_step(store, 2)
    large = accept_handoff(store, handoff(2, files_changed=[f"f{i}.py" for i in range(5)]))
    assert large.status == "awaiting-approval"
    out = CliRunner().invoke(cli, ["step", "outcome", "2", "--plans-dir", str(store.root)])
    assert "launch maker:reviewer" in out.output
    record = store.load().get(2)
    review = record_review(store, record, "RED: no tests\nVERDICT: changes-needed")
    decided = apply_review(store, record, review)
    assert decided.kind == "sent-back"
    assert "sent back to implementation" in decided.text
    record = store.load().get(2)  # back to implementation: in progress, findings kept
    assert record.status == "in-progress"
    assert record.meta["revision_notes"] == ["The independent reviewer's findings:\n"
                                             "RED: no tests"]


def test_under_the_never_policy_the_reviewer_does_not_decide(store: PlanStore) -> None:
    from maker.executor.acceptance.review_loop import apply_review

    accept_handoff(store, handoff(1, files_changed=[f"f{i}.py" for i in range(5)]))
    record = store.load().get(1)
    review = record_review(store, record, "VERDICT: approve")
    assert apply_review(store, record, review).kind == "person"
    assert store.load().get(1).status == "awaiting-approval"


def test_under_the_reviewer_policy_its_verdict_approves(store: PlanStore) -> None:
    from maker.executor.acceptance.review_loop import apply_review

    set_policy(store, "reviewer", "person (terminal)")
    accept_handoff(store, handoff(1))
    record = store.load().get(1)
    review = record_review(store, record, "VERDICT: approve")
    assert apply_review(store, record, review).kind == "approved"
    record = store.load().get(1)
    assert record.status == "complete"
    assert record.meta["approved_by"] == "policy:reviewer (reviewer approved)"


def test_status_shows_what_a_hand_edit_broke_across_steps(store: PlanStore) -> None:
    path = store.load().get(2).path
    path.write_text(path.read_text().replace("next: 3", "next: 1"))  # a loop 1 → 2 → 1
    result = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert result.exit_code == 0
    assert "The plan's files have 1 problem(s), hand edits perhaps" in result.output
    assert "never reaches an end" in result.output or "loop" in result.output


def test_a_step_cannot_be_reset_under_a_running_step_that_uses_it(store: PlanStore) -> None:
    from maker.executor.state.lifecycle import reset_step

    accept_handoff(store, handoff(1))
    approve_step(store, 1, "user")
    start_step(store, 2)  # reads step 1's output
    with pytest.raises(StepError, match=r"step 2 \(Step number 2\) is in progress and depends "
                                        r"on step 1: reset step 2 first"):
        reset_step(store, 1)
    reset_step(store, 2)
    assert reset_step(store, 1).previous_status == "complete"


def test_a_step_marked_complete_by_writing_its_file_is_refused(store: PlanStore) -> None:
    from maker.errors import PlanFileError

    accept_handoff(store, handoff(1))
    path = store.load().get(1).path
    forged = path.read_text().replace("status: awaiting-approval", "status: complete")
    path.write_text(forged.replace("---\n", "---\napproved_by: user\n"
                                   "approved_at: '2026-01-01T00:00:00Z'\n", 1))
    with pytest.raises(PlanFileError, match="status: complete, but maker holds no approval"):
        store.load()
    out = CliRunner().invoke(cli, ["step", "start", "2", "--plans-dir", str(store.root)])
    assert out.exit_code == 1 and "maker holds no approval" in out.output


def test_an_approval_sealed_for_one_step_does_not_pass_for_another(store: PlanStore) -> None:
    from maker.errors import PlanFileError

    accept_handoff(store, handoff(1))
    approve_step(store, 1, "user")
    one = store.load().get(1)
    two = store.load().get(2)
    text = two.path.read_text().replace("status: pending", "status: complete")
    seal_lines = "".join(f"{k}: '{one.meta[k]}'\n" for k in
                         ("approved_by", "approved_at", "approval_seal"))
    two.path.write_text(text.replace("---\n", "---\n" + seal_lines, 1))
    with pytest.raises(PlanFileError, match="02-step-number-2.md: status: complete"):
        store.load()


def test_nothing_completes_a_step_without_an_approval(store: PlanStore) -> None:
    from maker.executor.state.lifecycle import set_status

    with pytest.raises(TransitionError, match="becomes complete only by an approval"):
        set_status(store, 1, "complete")
    assert store.load().get(1).status == "in-progress"


def test_a_plan_approved_on_another_machine_is_adopted_by_a_person(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from maker.errors import PlanFileError

    accept_handoff(store, handoff(1))
    approve_step(store, 1, "alice")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "bobs-machine"))  # another key
    with pytest.raises(PlanFileError, match="approved on another machine"):
        store.load()
    monkeypatch.setenv("CLAUDECODE", "1")
    refused = CliRunner().invoke(cli, ["plan", "adopt", "--plans-dir", str(store.root)])
    assert refused.exit_code == 2 and "does not run inside Claude Code" in refused.output
    monkeypatch.delenv("CLAUDECODE")
    adopted = CliRunner().invoke(cli, ["plan", "adopt", "--plans-dir", str(store.root)])
    assert adopted.exit_code == 0, adopted.output
    assert "step 1 (Step number 1): approval adopted (alice (adopted by person " \
           "(terminal)))" in adopted.output
    assert store.load().get(1).status == "complete"


def test_a_decision_needs_a_person_at_a_terminal(store: PlanStore,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    accept_handoff(store, handoff(1))
    monkeypatch.setattr("maker.cli._common.is_terminal", lambda: False)
    for args in (["step", "approve", "1"], ["policy", "auto"], ["plan", "adopt"]):
        out = CliRunner().invoke(cli, [*args, "--plans-dir", str(store.root)])
        assert out.exit_code == 2 and "run it in a terminal" in out.output, args
    assert store.load().get(1).status == "awaiting-approval"
