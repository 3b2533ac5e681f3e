"""/maker:step where the project has a verification command, and where the step touched
enough files for an independent review, with the real Claude Code CLI and plugin.

A `complete` handoff is refused until `maker verify --step N` has recorded a passing
run for the step (a handoff cannot just claim `exit_code: 0`); the executor runs it
through Bash even though the step's own tools do not include Bash. A step whose
handoff lists five or more changed files sends the main agent to `maker:reviewer`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.plugin import PLUGIN_ROOT, Run, feedback, git_trap, step, write_plan
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    after_feedback,
    executor_flow,
    executor_writes,
    handoff,
    main_launches_executor,
    main_reports_outcome,
    main_runs_outcome,
    plugin_env,
    tool,
)
from maker.verify.detect import ENV_VARS
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, ToolUseBlock
from maker_scripted.turns import hook_feedback, working_dir

pytestmark = pytest.mark.e2e

CHECK = "test -f hello.txt"
GOOD_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt.", files=["hello.txt"])


def runs_verify_after_the_gate_asks(request: RecordedRequest) -> Reply:
    text = request.last_user_text
    assert hook_feedback(text) is not None, text
    assert "no verification run is recorded for this step" in text
    assert "run `maker verify --step 0`" in text
    return tool("Bash", command="maker verify --step 0", description="Verify step 0")


def test_a_complete_handoff_needs_a_recorded_passing_verification(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), main_reports_outcome())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")],
                  GOOD_0,                              # claims complete, verified nothing
                  runs_verify_after_the_gate_asks,     # then really verifies
                  GOOD_0)                              # and hands off again

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env=plugin_env(extra={"TEST_CMD": CHECK}))

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    # The brief told the executor how to verify.
    brief = fake_api.requests_for(EXECUTOR)[1].tool_results[0].text
    assert "maker verify --step 0" in brief
    # `maker verify` ran the project's command for real and recorded it.
    verify_result = fake_api.requests_for(EXECUTOR)[-1].tool_results[0]
    assert not verify_result.is_error, verify_result.text
    evidence = json.loads((project / "plans/.maker/evidence/step-00.json").read_text())
    assert [(c["command"], c["exit_code"]) for c in evidence["commands"]] == [(CHECK, 0)]
    # The accepted handoff carries the recorded run, not a claim.
    accepted = (project / "plans/handoffs/00-write-hello-txt.md").read_text()
    assert f"command: {CHECK}" in accepted and "exit_code: 0" in accepted
    assert step(project, 0).status == "complete"
    assert len(feedback(fake_api, EXECUTOR)) == 1


def test_a_failing_verification_keeps_the_step_open(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), main_reports_outcome())
    # The executor verifies before writing the file: the check fails, and a complete
    # handoff is still refused, until a passing run is recorded.
    executor_flow(
        fake_api,
        [tool("Bash", command="maker verify --step 0", description="Verify step 0")],
        GOOD_0,
        after_feedback(handoff(0, {"files": []}, status="blocked", summary="The check fails.",
                               blockers=["hello.txt is missing: the check fails."]),
                       "the recorded verification did not pass: `test -f hello.txt` exited with 1"),
    )

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env=plugin_env(extra={"TEST_CMD": CHECK}))

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_BLOCKED")
    record = step(project, 0)
    assert record.status == "blocked"
    assert record.meta["reasons"] == ["hello.txt is missing: the check fails."]


def main_launches_reviewer(request: RecordedRequest) -> Reply:
    outcome = request.tool_results[0].text
    assert "review: required (6 files changed)" in outcome, outcome
    assert "status: awaiting-approval" in outcome  # even under the `auto` policy
    assert "launch maker:reviewer" in outcome
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt="Review maker step 0. Handoff summary: wrote six files.",
                run_in_background=False)


def main_ends_with(sentinel: str) -> Callable[[RecordedRequest], Reply]:
    """The reviewer returned: maker has decided the step by the `auto` policy, and its
    verdict names the line to end with; the model runs nothing."""

    def turn(request: RecordedRequest) -> Reply:
        assert not request.tool_results[0].is_error, request.tool_results[0].text
        assert f"end your reply with the line {sentinel}" in request.all_text
        return Reply.text(f"The reviewer decided.\n\n{sentinel}")

    return turn


FILES = [f"f{i}.txt" for i in range(6)]


def writes_the_six_files(request: RecordedRequest) -> Reply:
    """After the brief, one message writing all six files: maker counts what it measured,
    not what the handoff claims."""
    assert any("# Step " in r.text for r in request.tool_results), "expected the brief"
    return Reply.of(*(ToolUseBlock("Write", {"file_path": str(working_dir(request) / name),
                                             "content": "x\n"}) for name in FILES))


WRITES = [writes_the_six_files]


def main_is_told_a_person_decides(request: RecordedRequest) -> Reply:
    """The reviewer's RED findings past ``max_review_attempts`` (0 here): not sent back;
    maker's verdict leaves the step to a person, with them."""
    assert "awaits a person's decision" in request.all_text, request.all_text[-3000:]
    assert "max_review_attempts: 0" in request.all_text
    return Reply.text("The reviewer found RED issues; you decide.\n\nSTEP_AWAITING_APPROVAL")


@pytest.mark.parametrize(("verdict", "sentinel", "status"), [
    ("GREEN: the six files are as described.\nVERDICT: approve", "STEP_COMPLETE", "complete"),
    ("RED: f5.txt is empty.\nVERDICT: changes-needed", "STEP_AWAITING_APPROVAL",
     "awaiting-approval"),
], ids=["approved", "changes-needed-past-the-bound"])
def test_a_large_step_is_decided_by_the_independent_review(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path, verdict: str,
        sentinel: str, status: str) -> None:
    store = write_plan(project)
    if status != "complete":  # no round back to implementation: a person decides
        (store.root / "settings.yaml").write_text("max_review_attempts: 0\n")
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(),
                    main_launches_reviewer, main_ends_with(sentinel) if status == "complete"
                    else main_is_told_a_person_decides)
    executor_flow(fake_api, WRITES,
                  handoff(0, {"files": FILES}, summary="Wrote six files.", files=FILES))
    fake_api.script("reviewer", Reply.text(verdict))

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    fake_api.assert_done()
    (review,) = fake_api.requests_for("reviewer")
    assert "maker-agent: reviewer" in review.system_text
    # Its declared tools, as far as this client has them (2.1.330 has no Grep or Glob):
    # nothing that edits.
    assert {"Read", "Bash"} <= set(review.tool_names) <= {"Read", "Bash", "Grep", "Glob"}
    assert run.result is not None and run.result.endswith(sentinel)
    record = step(project, 0)
    assert record.status == status
    if status == "complete":
        assert record.meta["approved_by"] == "policy:auto (reviewer approved)"
    else:
        assert "review_rounds" not in record.meta


def test_a_detected_verification_command_is_what_the_gate_asks_for(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No *_CMD set at all (unset, not empty): maker detects the project's own check."""
    (project / "Makefile").write_text(f"test:\n\t{CHECK}\n")
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
    env = {k: v for k, v in plugin_env().items() if k not in ENV_VARS.values()}
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), main_reports_outcome())
    executor_flow(fake_api, [executor_writes("hello.txt", "hello\n")],
                  GOOD_0, runs_verify_after_the_gate_asks, GOOD_0)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], env=env)

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    brief = fake_api.requests_for(EXECUTOR)[1].tool_results[0].text
    assert "test (`make test`)" in brief
    evidence = json.loads((project / "plans/.maker/evidence/step-00.json").read_text())
    assert [(c["command"], c["exit_code"]) for c in evidence["commands"]] == [("make test", 0)]


def test_the_reviewers_git_diff_runs_no_program_the_repositorys_config_names(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    """`diff.external` names a program that writes a file: the reviewer's `git diff` (read
    only, so let through) runs as maker rewrote it, and shows the diff without it."""
    ran = git_trap(project)
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(),
                    main_launches_reviewer, main_ends_with("STEP_COMPLETE"))
    executor_flow(fake_api, WRITES,
                  handoff(0, {"files": FILES}, summary="Wrote six files.", files=FILES))

    def approves_what_the_diff_shows(request: RecordedRequest) -> Reply:
        shown = request.tool_results[0]
        assert not shown.is_error and "+two" in shown.text, shown.text
        return Reply.text("GREEN: as described.\nVERDICT: approve")

    fake_api.script("reviewer", tool("Bash", command="git diff", description="The diff"),
                    approves_what_the_diff_shows)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("STEP_COMPLETE")
    assert not ran.exists()
    subprocess.run(["git", "diff"], cwd=project, capture_output=True)  # as typed: it runs
    assert ran.exists()
