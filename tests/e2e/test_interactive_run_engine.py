"""``/maker:run`` with its steps in maker's engine, as people run it: the real Claude Code
CLI, interactive, in a pseudo-terminal with its defaults (auto mode). The person types
``/maker:run`` once; the main agent runs one background task a stretch (``maker loop
stretch``), and maker's hook gives the next action when its notification arrives. The
step executors are sessions of the engine (claude-agent-sdk, the bundled CLI), against
the same scripted API: no subagent of the main session, and so no frame of one in it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.background import TIMEOUT
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.run_loop import EngineExecutor, RunMain, chain_plan
from maker.engine.ledger import Ledger
from maker.store.plan_store import PlanStore
from maker.store.run_file import read_run
from maker_scripted.classify import MAIN
from maker_scripted.turns import EXECUTOR

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 240.0


def follow(api: RecordingAPI, steps: int, per_stretch: int | None) -> RunMain:
    executor = EngineExecutor(api, steps, per_stretch)
    main = RunMain(api, lambda k: None, on_stretch=executor.stretch)
    api.script(MAIN, main)
    return main


def ended(terminal, api: RecordingAPI, main: RunMain, line: str) -> str:  # type: ignore[no-untyped-def]
    def done() -> bool:
        failed = [r for r in api.requests if r.outcome == "error"]
        if failed:
            raise AssertionError(f"a scripted turn of {failed[0].agent!r} raised: "
                                 f"{failed[0].error!r}") from failed[0].error
        return main.ended == line and line in terminal.text()

    terminal.wait(done, f"the run ended with {line}", RUN_TIMEOUT)
    api.assert_done()
    return terminal.text()


def test_ten_steps_under_auto_run_in_one_stretch_outside_the_main_session(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(10), policy="auto")
    main = follow(fake_api, 10, None)
    terminal = interactive()
    terminal.submit("/maker:run")

    screen = ended(terminal, fake_api, main, "RUN_DONE")
    for n in range(10):
        record = step(project, n)
        assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
        assert (project / f"step{n}.txt").read_text() == f"step {n}\n"
    assert main.turns.count("stretch") == 1 and "ask" not in main.turns
    assert "RUN_DONE" in screen
    mains = fake_api.requests_for(MAIN)
    # no subagent of the main session: no launch, no hand-back, no handoff in it
    assert not [r for r in mains if "Async agent launched" in r.all_text
                or "[Subagent hand-back]" in r.all_text or "for_next_agent" in r.all_text]
    run = read_run(PlanStore(project / "plans"))
    assert run["ended_at"] and run["mode"] == "engine"
    # every executor's call is in the ledger, with the tokens the scripted API reported
    calls = [c for c in Ledger(PlanStore(project / "plans")).calls() if c.kind == "executor"]
    assert sorted({c.step for c in calls}) == list(range(10))
    assert len(fake_api.requests_for(EXECUTOR)) == 30
    reported = api_tokens(fake_api)
    for n in range(10):
        entry = run["steps"][str(n)]
        # (the total: the ledger does not yet keep input, output and cache apart)
        assert entry["tokens"] == sum(reported[n]), n
        assert entry["duration_ms"] > 0 and entry["status"] == "complete"


def api_tokens(api: RecordingAPI) -> dict[int, tuple[int, int]]:
    """Per step: the input and output tokens the scripted API reported to its executors
    (as ``fake_api`` counts them: a request's size in quarters, each reply's own)."""
    totals: dict[int, tuple[int, int]] = {}
    for request in api.requests_for(EXECUTOR):
        n = int(re.search(r"# Step (\d+):", request.all_text).group(1))  # type: ignore[union-attr]
        got = totals.get(n, (0, 0))
        totals[n] = (got[0] + max(1, len(json.dumps(request.body)) // 4),
                     got[1] + request.reply._output_tokens())  # type: ignore[union-attr]
    return totals


def test_under_never_each_question_ends_a_stretch_and_the_answer_starts_the_next(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(3), policy="never")
    main = follow(fake_api, 3, 1)
    terminal = interactive()
    terminal.submit("/maker:run")

    for n in range(3):
        terminal.wait_for_text(f"Approve step {n}", TIMEOUT)
        assert step(project, n).status == "awaiting-approval"
        # what the person approves, on their screen: not in the model's context
        assert f"Summary: Wrote step{n}.txt." in terminal.text()
        assert f"Files (maker measured): step{n}.txt" in terminal.text()
        terminal.choose()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert main.turns.count("ask") == 3 and main.turns.count("stretch") == 3
    for n in range(3):
        assert step(project, n).meta["approved_by"] == "user (AskUserQuestion)"
    assert not [r for r in fake_api.requests_for(MAIN) if "Files (maker measured)" in r.all_text]
