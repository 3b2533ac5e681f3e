"""The edge-case sweep as people run it: the real Claude Code CLI,
interactive, in a pseudo-terminal, with its defaults (auto mode, background subagents).
Step 0's executor hands back first without its sweep's record (refused, with the fix),
then an edge case for step 1 and a change of scope; maker writes
the edge case into step 1's own "Edge cases" section, the verdict shows the proposal, and
the person accepts it by typing `/maker:proposal accept 1`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from harness.background import finished, main_follows_notification
from harness.claude_fixtures import StartInteractive
from harness.maker_run import MAKER
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_reads_brief,
    executor_writes,
    handback,
    handoff,
    main_launches_executor,
    main_waits,
)
from maker_scripted import RecordedRequest, Reply

pytestmark = pytest.mark.e2e

EDGE = "hello.txt may end without a newline: compare its text stripped"
PROPOSAL = "Greet in French as well: a second file, salut.txt"
SWEPT_0 = yaml.safe_dump({**yaml.safe_load(handoff(
    0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
    files=["hello.txt"])), "edge_cases": [{"step": 1, "note": EDGE}],
    "proposals": [PROPOSAL],
    "sweep": {"considered": ["a missing final newline", "an empty file"],
              "found": [EDGE]}}, sort_keys=False)
UNSWEPT_0 = handoff(0, {"files": ["hello.txt"]}, summary="Wrote hello.txt; it says hello.",
                    files=["hello.txt"], sweep=None)


def sweeps_when_told(request: RecordedRequest) -> Reply:
    """The gate refused a handoff that never swept, with the fix: the executor sweeps."""
    refused = request.tool_results[-1]
    assert refused.is_error and "sweep: is missing" in refused.text, refused.text
    assert "look for the edge cases a green suite does not show" in refused.text
    return handback(SWEPT_0)


def main_tells_the_proposal(request: RecordedRequest) -> Reply:
    reply = main_follows_notification()(request)
    assert f"- proposal 1: {PROPOSAL}" in request.latest_text
    return reply


def test_the_sweep_annotates_the_later_step_and_the_person_accepts_a_proposal(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project)
    fake_api.script(MAIN, main_launches_executor(), main_waits(), main_tells_the_proposal)
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
                    handback(UNSWEPT_0), sweeps_when_told)
    terminal = interactive()
    terminal.submit("/maker:step 0")
    finished(terminal, fake_api, "STEP_COMPLETE")
    fake_api.assert_done()

    later = next((project / "plans" / "steps").glob("01-*.md")).read_text()
    assert f"## Edge cases\n\n- (from step 0) {EDGE}" in later
    shown = subprocess.run([*MAKER, "status"], cwd=project, capture_output=True, text=True,
                           check=True).stdout
    assert f"sweep: 2 case(s) considered; found: {EDGE}; annotated step 1; 1 proposal(s) " \
           "for you" in " ".join(shown.split()), shown
    assert step(project, 1).spec.task_description.startswith("Read the files step 0 wrote")

    def main_reports_the_proposal(request: RecordedRequest) -> Reply:
        said = "maker: the user accepted proposal 1 ("
        assert said in request.latest_text, request.latest_text[-500:]
        return Reply.text("You accepted proposal 1: later steps will read it in NOTES.md.")

    fake_api.script(MAIN, main_reports_the_proposal)
    terminal.submit("/maker:proposal accept 1")
    screen = finished(terminal, fake_api, "accepted proposal 1")
    fake_api.assert_done()
    notes = (project / "plans" / "NOTES.md").read_text()
    assert f"Scope change accepted by user (typed /maker:proposal) (proposed by step 0): " \
           f"{PROPOSAL}" in notes
    assert "accepted proposal 1" in screen
