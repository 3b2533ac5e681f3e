"""Votes on what code does, as people run them: ``/maker:run`` (or ``/maker:step``) typed
once in the real Claude Code CLI, interactive, in a pseudo-terminal with its defaults (auto
mode). The
step's samples are sessions of maker's engine (its stretch, in the background), each in a
worktree of its own; only the model is scripted, the code and the tests are real. Two
right samples outvote an off-by-one, and the smallest right diff lands."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.claude_fixtures import StartInteractive
from harness.code_votes import (
    OFF_BY_ONE,
    RIGHT,
    RIGHT_LONGER,
    TEST_LOW,
    TEST_OFF,
    TEST_RIGHT,
    clamp_project,
    code_plan,
    samples,
)
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.run_loop import RunMain, answer_until_ended
from maker.store.plan_store import PlanStore
from maker_scripted.classify import MAIN
from maker_scripted.turns import EXECUTOR

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 240.0


def _typed(interactive: StartInteractive, fake_api: RecordingAPI, project: Path, typed: str,
           end: str, policy: str = "auto") -> RunMain:
    """``typed`` in the client, the clamp step's four samples scripted for the engine's
    stretch (two right texts, an off-by-one, a right one with a test that proves
    nothing), until the main agent ends with ``end`` (under ``policy`` never, the person
    approves the step when asked); the right code landed, by a vote of 3 to 1. The
    scripted main agent, for what it did."""
    clamp_project(project)
    write_plan(project, code_plan(), policy)
    variants = [(RIGHT_LONGER, TEST_LOW, ""), (OFF_BY_ONE, TEST_OFF, ""),
                (RIGHT, TEST_RIGHT, ""), (RIGHT_LONGER, TEST_RIGHT, "")]
    sessions = samples(variants)
    main = RunMain(fake_api, lambda k: None, on_stretch=lambda: fake_api.script(
        EXECUTOR, *[sessions] * (3 * len(variants))))
    fake_api.script(MAIN, main)
    terminal = interactive(env={"TEST_CMD": f"{sys.executable} -m pytest -q "
                                            "-p no:cacheprovider"})
    terminal.submit(typed)

    def done() -> bool:
        failed = [r for r in fake_api.requests if r.outcome == "error"]
        if failed:
            raise AssertionError(f"a scripted turn of {failed[0].agent!r} raised: "
                                 f"{failed[0].error!r}") from failed[0].error
        return main.ended == end and end in terminal.text()

    if policy == "never":
        assert answer_until_ended(terminal, main, RUN_TIMEOUT) == 1
    terminal.wait(done, f"the main agent ended with {end}", RUN_TIMEOUT)
    fake_api.assert_done()
    assert step(project, 0).status == "complete"
    assert (project / "src" / "calc.py").read_text() == RIGHT
    vote = PlanStore(project / "plans").read_handoff(0)["vote"]
    assert (vote["samples"], [t["votes"] for t in vote["tally"]]) == (4, [3, 1])
    return main


def test_a_code_step_typed_in_maker_run_is_voted_on_by_what_it_does(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    main = _typed(interactive, fake_api, project, "/maker:run", "RUN_DONE")
    assert main.turns.count("stretch") + main.turns.count("started") == 1


def test_a_code_step_typed_in_maker_step_is_voted_on_in_maker_engine(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """``/maker:step 0`` of the same step: no subagent answers it once; maker's engine
    votes on it in the background, and the main agent ends its turn, then is woken once,
    to end with STEP_COMPLETE."""
    main = _typed(interactive, fake_api, project, "/maker:step 0 keep the fix small",
                  "STEP_COMPLETE")
    assert main.turns == ["started", "STEP_COMPLETE"], main.turns
    executors = [r for r in fake_api.requests if r.agent == EXECUTOR]
    assert executors and all("keep the fix small" in r.all_text for r in executors)
    # (no subagent of the person's session answered it, with the brief its launch carries:
    # every executor was a session of the engine's)
    assert not [r for r in executors if '<maker-brief step="0">' in r.all_text]


def test_the_person_approves_a_voted_step_typed_in_maker_step(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """Under the policy never: the engine stops at the step's approval, the main agent is
    woken to ask the person, their answer ends the step. The main session holds three
    turns of the main agent for the whole vote."""
    main = _typed(interactive, fake_api, project, "/maker:step 0", "STEP_COMPLETE",
                  policy="never")
    assert main.turns == ["started", "ask", "STEP_COMPLETE"], main.turns
    assert step(project, 0).meta.get("approved_by") == "user (AskUserQuestion)"
