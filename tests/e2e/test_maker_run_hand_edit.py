"""`maker run` end to end (the real CLI, SDK and bundled Claude Code against the
scripted API) keeps its plan between loads and reads all of plans/ at least once a
second; a person's edit of a later step made mid-run reaches that step and is kept, and
PLAN.md after the run is what a fresh read renders."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.maker_run import EXECUTOR, oriented_then, orients, run_maker, write_hello
from harness.plugin import write_plan
from maker.executor.state.lifecycle import refresh_overview
from maker.store import changes
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e


def test_a_hand_edit_of_a_later_step_mid_run_reaches_it_and_is_kept(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, policy="never")
    later = next((project / "plans" / "steps").glob("01-*.md"))

    def edits_step_1(request: RecordedRequest) -> Reply:  # while step 0 runs
        later.write_text(later.read_text().replace("report ok true or false",
                                                   "report ok as I asked"))
        time.sleep(changes.FULL_EVERY + 0.2)  # (the engine may not see it before)
        return orients(0)(request)

    fake_api.script(EXECUTOR, edits_step_1, oriented_then(write_hello),
                    Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
                    Reply.text(handoff(1, {"ok": True})))
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert "report ok as I asked" in fake_api.requests_for(EXECUTOR)[-1].last_user_text
    assert "report ok as I asked" in later.read_text()
    shown = (project / "plans" / "PLAN.md").read_text()
    fresh = PlanStore(project / "plans")
    refresh_overview(fresh, fresh.load(), force=True)
    assert shown == fresh.overview_path.read_text()
