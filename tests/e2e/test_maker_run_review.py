"""Review routing in `maker run`, end to end (the real CLI command, claude-agent-sdk and
the bundled Claude Code CLI, against the scripted Messages API): the files maker
measured decide, a change across two declared boundaries is reviewed (and a handoff
that leaves a measured file out is refused), ``STEP_SKIP_REVIEW=1`` never calls the
reviewer and leaves a large step to a person, and ``--approve never`` on a large step
stops for the person, whose ``maker step approve N`` then works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.maker_run import EXECUTOR, oriented_then, orients, run_maker, writes
from harness.plugin import step, write_plan
from maker.cli.main import cli
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e

FILES = ["hello.txt", "a.txt", "b.txt", "c.txt", "d.txt"]


def approve(project: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> Result:
    """A person's `maker step approve N` at a terminal (no STEP_SKIP_REVIEW there)."""
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("STEP_SKIP_REVIEW", raising=False)
    monkeypatch.setattr("maker.cli._common.is_terminal", lambda: True)  # a person's terminal
    return CliRunner().invoke(cli, ["step", "approve", str(n), "--plans-dir",
                                    str(project / "plans")])


def test_a_change_across_two_boundaries_is_reviewed_and_an_under_report_refused(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    store = write_plan(project)  # policy auto
    (store.root / "settings.yaml").write_text("boundaries: [hello.txt, docs]\n")

    def corrects(request: RecordedRequest) -> Reply:
        said = request.last_user_text
        assert "maker refused your previous handoff" in said
        assert "files_changed: leaves out 1 file(s) this step changed" in said
        assert "docs/notes.md" in said
        return Reply.text(handoff(0, {"files": ["hello.txt"]},
                                  files=["hello.txt", "docs/notes.md"]))

    def reviews(request: RecordedRequest) -> Reply:
        said = request.last_user_text
        assert "Why a review is required: the change crosses architectural boundaries: " \
               "`hello.txt`, `docs` (2 file(s) changed, measured by maker)" in said
        return Reply.text("GREEN: both files are right.\nVERDICT: approve")

    fake_api.script(EXECUTOR, orients(0), oriented_then(writes("hello.txt", "docs/notes.md")),
                    Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
                    corrects, Reply.text(handoff(1, {"ok": True})))
    fake_api.script("reviewer", reviews)

    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stderr[-2000:]
    fake_api.assert_done()
    assert step(project, 0).meta["approved_by"] == "policy:auto (reviewer approved)"
    assert store.read_handoff(0)["files_measured"] == ["docs/notes.md", "hello.txt"]
    kinds = [(c.kind, c.step) for c in Ledger(store).calls()]
    assert kinds == [("executor", 0), ("executor", 0), ("reviewer", 0), ("executor", 1)]


@pytest.mark.parametrize("policy", ["auto", "never"])
def test_skip_review_never_calls_the_reviewer_and_a_person_decides_a_large_step(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path,
        monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    """Under `auto` the reviewer would decide the step; under `never` it would review it
    before the person: with the skip, neither, and the person's approval then works."""
    store = write_plan(project, policy=policy)
    fake_api.script(EXECUTOR, orients(0), oriented_then(writes(*FILES)),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)),
                    Reply.text(handoff(1, {"ok": True})))

    run = run_maker(fake_api, project, claude_home, "--approve", policy,
                    extra={"STEP_SKIP_REVIEW": "1"})

    assert run.returncode == 4, run.stderr[-2000:]  # a person decides, not the policy
    assert "STEP_SKIP_REVIEW=1: no review; a person decides" in run.stderr + run.stdout
    assert fake_api.requests_for("reviewer") == []
    assert step(project, 0).status == "awaiting-approval"
    assert step(project, 0).meta["review_skipped"] == "STEP_SKIP_REVIEW=1"

    decided = approve(project, 0, monkeypatch)  # nothing dead-ends
    assert decided.exit_code == 0, decided.output
    run = run_maker(fake_api, project, claude_home)
    assert run.returncode == (0 if policy == "auto" else 4), run.stderr[-2000:]
    fake_api.assert_done()
    assert step(project, 1).status == ("complete" if policy == "auto" else "awaiting-approval")
    assert [c.kind for c in Ledger(store).calls()] == ["executor", "executor"]


def test_approve_never_on_a_large_step_reviews_stops_for_the_person_who_approves(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    write_plan(project, policy="never")
    fake_api.script(EXECUTOR, orients(0), oriented_then(writes(*FILES)),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)))
    fake_api.script("reviewer", Reply.text("GREEN: fine.\nVERDICT: approve"))

    run = run_maker(fake_api, project, claude_home, "--approve", "never", "--events", "-")

    assert run.returncode == 4, run.stderr[-2000:]
    fake_api.assert_done()
    events = [json.loads(line)["event"] for line in run.stdout.splitlines() if line.strip()]
    assert events == ["StepStarted"]
    assert "maker step approve 0" in run.stderr + run.stdout
    decided = approve(project, 0, monkeypatch)
    assert decided.exit_code == 0, decided.output
    record = step(project, 0)
    assert (record.status, record.meta["approved_by"]) == ("complete", "person (terminal)")
    assert PlanStore(project / "plans").read_handoff(0)["files_measured"] == sorted(FILES)
