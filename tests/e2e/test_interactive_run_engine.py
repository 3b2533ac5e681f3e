"""``/maker:run`` with its steps in maker's engine, as people run it: the real Claude Code
CLI, interactive, in a pseudo-terminal with its defaults (auto mode). The person types
``/maker:run`` once; the main agent runs one background task a stretch (``maker loop
stretch``), and maker's hook gives the next action when its notification arrives. The
step executors are sessions of the engine (claude-agent-sdk, the bundled CLI), against
the same scripted API: no subagent of the main session, and so no frame of one in it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.background import TIMEOUT
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.run_loop import STARTED, EngineExecutor, RunMain, chain_plan
from harness.scenarios import find_plugin_root
from maker.engine.ledger import Ledger
from maker.executor.state.stretch import stretch_runs
from maker.store.plan_store import PlanStore
from maker.store.run_file import read_run
from maker_scripted.classify import MAIN
from maker_scripted.terminal import Terminal
from maker_scripted.turns import EXECUTOR, tool

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


def typed_again(terminal: Terminal, api: RecordingAPI, main: RunMain,
                command: str = "/maker:run") -> None:
    """The person types the run again after it stopped, and it ends with RUN_DONE."""
    main.ended = None
    if not api.remaining().get(MAIN):  # (unless the main agent scripted its next turn)
        api.script(MAIN, main)
    terminal.submit(command)
    ended(terminal, api, main, "RUN_DONE")


def at_the_first_question(interactive: StartInteractive, api: RecordingAPI,
                          project: Path) -> tuple[Terminal, RunMain]:
    """A 2-step plan under `never`, its run typed, and step 0's question on screen."""
    write_plan(project, chain_plan(2), policy="never")
    main = follow(api, 2, 1)
    terminal = interactive()
    terminal.submit("/maker:run")
    terminal.wait_for_text("Approve step 0", TIMEOUT)
    return terminal, main


def approved_to_the_end(terminal: Terminal, api: RecordingAPI, main: RunMain, project: Path,
                        steps: int) -> None:
    """The person types /maker:run again and approves each step's question: the run
    ends, each step complete and run once, its tokens as the scripted API reported."""
    main.ended = None
    if not api.remaining().get(MAIN):
        api.script(MAIN, main)
    terminal.submit("/maker:run")
    for n in range(steps):  # (a declined question stays in the scrollback: a live one)
        terminal.wait(lambda live=f"❯ 1. Approve step {n}": "Enter to select" in
                      terminal.text() and live in terminal.text(), f"step {n}'s question",
                      TIMEOUT)
        terminal.choose()
    ended(terminal, api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(steps)] == ["complete"] * steps
    assert len(api.requests_for(EXECUTOR)) == 3 * steps  # each step ran once
    spent_as_reported(project, api, steps)


def held_at_step_1(interactive: StartInteractive, api: RecordingAPI, project: Path
                   ) -> tuple[Terminal, RunMain, EngineExecutor, threading.Event]:
    """A 3-step plan under `auto`, its run typed, and step 1's executor held at work
    (until the test sets the event it returns)."""
    write_plan(project, chain_plan(3), policy="auto")
    held = threading.Event()
    executor = EngineExecutor(api, 3, hold={1: held})
    main = RunMain(api, lambda k: None, on_stretch=executor.stretch)
    api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run")
    terminal.wait(executor.holding.is_set, "step 1's executor at work", TIMEOUT)
    return terminal, main, executor, held


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
    # maker started the one stretch itself, and woke the main agent when it ended
    assert main.turns == ["started", "RUN_DONE"]
    assert "RUN_DONE" in screen
    mains = fake_api.requests_for(MAIN)
    # no subagent of the main session: no launch, no hand-back, no handoff in it
    assert not [r for r in mains if "Async agent launched" in r.all_text
                or "[Subagent hand-back]" in r.all_text or "for_next_agent" in r.all_text]
    run = read_run(PlanStore(project / "plans"))
    assert run["ended_at"] and run["mode"] == "engine"
    assert len(fake_api.requests_for(EXECUTOR)) == 30
    spent_as_reported(project, fake_api, 10)


def spent_as_reported(project: Path, api: RecordingAPI, steps: int,
                      cut: frozenset[int] = frozenset()) -> None:
    """Every executor's call is in the ledger, and each step's entry in the run has the
    tokens the scripted API reported for it, step by step (``cut``: steps with a session
    its budget cut mid-answer, whose last answer's output is counted as far as the CLI
    read it)."""
    run = read_run(PlanStore(project / "plans"))
    calls = [c for c in Ledger(PlanStore(project / "plans")).calls() if c.kind == "executor"]
    assert sorted({c.step for c in calls}) == list(range(steps))
    reported = api_tokens(api)
    for n in range(steps):
        entry = run["steps"][str(n)]
        if n in cut:
            assert entry["input_tokens"] == reported[n][0], n
            assert 0 < entry["output_tokens"] <= reported[n][1], n
            continue
        assert (entry["input_tokens"], entry["output_tokens"]) == reported[n], n
        assert entry["tokens"] == sum(reported[n]) and entry["calls"] == sessions(api, n)
        assert entry["duration_ms"] > 0 and entry["status"] == "complete"


def sessions(api: RecordingAPI, n: int) -> int:
    """How many executor sessions step ``n`` had (a session's first request holds no
    answer of its own yet)."""
    return sum(1 for r in api.requests_for(EXECUTOR) if f"# Step {n}:" in r.all_text
               and not any(m.get("role") == "assistant" for m in r.messages))


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
    write_plan(project, chain_plan(10), policy="never")
    main = follow(fake_api, 10, 1)
    terminal = interactive()
    terminal.submit("/maker:run")

    for n in range(10):
        terminal.wait_for_text(f"Approve step {n}", TIMEOUT)
        assert step(project, n).status == "awaiting-approval"
        # what the person approves, on their screen: not in the model's context
        assert f"Summary: Wrote step{n}.txt." in terminal.text()
        assert f"Files (maker measured): step{n}.txt (+1 -0)" in terminal.text()
        assert "The diff: `git diff " in terminal.text()
        terminal.choose()
    ended(terminal, fake_api, main, "RUN_DONE")
    # each stretch started by maker (the typed command, then each answer's hook), each
    # end a wake: no Bash call, no launch result, no task notification in the session
    assert main.turns == ["started", "ask"] * 10 + ["RUN_DONE"]
    assert not [r for r in fake_api.requests_for(MAIN) if "Command running in background"
                in r.all_text]
    for n in range(10):
        assert step(project, n).meta["approved_by"] == "user (AskUserQuestion)"
    spent_as_reported(project, fake_api, 10)
    assert not [r for r in fake_api.requests_for(MAIN) if "Files (maker measured)" in r.all_text]


def test_approving_the_rest_at_step_1_finishes_in_one_more_stretch(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(4), policy="never")
    executor = EngineExecutor(fake_api, 4, 1)
    main = RunMain(fake_api, lambda k: None, on_stretch=executor.stretch)
    fake_api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run")

    terminal.wait_for_text("Approve step 0", TIMEOUT)
    terminal.choose()
    terminal.wait_for_text("Approve 1 and the rest", TIMEOUT)
    executor.per_stretch = None  # (the rest runs in the next stretch)
    terminal.press("down")
    terminal.wait(lambda: "❯ 2. Approve 1 and the rest" in terminal.text(),
                  "the second answer highlighted")
    terminal.choose()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert main.turns.count("ask") == 2 and main.turns.count("started") == 3
    for n in (2, 3):
        assert step(project, n).status == "complete"
        assert step(project, n).meta["approved_by"].startswith("policy:auto")
    spent_as_reported(project, fake_api, 4)


def test_a_deviation_mid_run_asks_the_person_and_the_run_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(3), policy="auto")
    executor = EngineExecutor(fake_api, 3, deviate={1: ("step0.txt is named differently",
                                                        "Write step1.txt next to it")})
    main = RunMain(fake_api, lambda k: None, on_stretch=executor.stretch)
    fake_api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run")

    terminal.wait_for_text("Approve revised step 1", TIMEOUT)
    assert step(project, 0).status == "complete" and step(project, 2).status == "pending"
    assert not (project / "step1.txt").exists()  # nothing edited before the decision
    terminal.choose()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert main.turns.count("ask") == 1 and main.turns.count("started") == 2
    assert sessions(fake_api, 1) == 2  # (the one that found the step out of date, then)
    spent_as_reported(project, fake_api, 3)


def test_a_client_killed_mid_step_resumes_from_plans_with_nothing_lost(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    first, main, executor, held = held_at_step_1(interactive, fake_api, project)
    first.close()  # killed mid-step
    # The stretch is maker's own process, in a session of its own: it goes on alone, and
    # nobody would hear it end. A new session's /maker:run starts a stretch that waits
    # for it, then goes on from plans/, and wakes the new session when it ends.
    orphan = stretch_runs(PlanStore(project / "plans"))
    assert step(project, 1).status == "in-progress"
    if not orphan:  # (a client that takes its tasks with it: step 1 begins again)
        fake_api.script(EXECUTOR, executor, executor)
    second = interactive()
    second.submit("/maker:run")
    second.wait(lambda: main.turns.count("started") == 2, "a stretch started to wait for it",
                TIMEOUT)
    held.set()
    ended(second, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert [(project / f"step{n}.txt").read_text() for n in range(3)] == \
        [f"step {n}\n" for n in range(3)]
    assert orphan  # (as the pinned client does it: the test says which path it proved)
    spent_as_reported(project, fake_api, 3)


def test_a_client_killed_at_a_question_asks_it_again_in_the_next_session(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    first, main = at_the_first_question(interactive, fake_api, project)
    first.close()  # killed with the question on screen
    assert step(project, 0).status == "awaiting-approval"
    approved_to_the_end(interactive(), fake_api, main, project, 2)


def test_a_person_who_sets_the_status_line_sees_the_run_beside_the_prompt(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path,
        claude_home: Path) -> None:
    """A plugin cannot set the status line (the client ignores a plugin's statusLine);
    a person can, to `maker status --line`: k of n, what runs, time and spend, while the
    engine runs and the main session sleeps (no model turn, nothing in its context)."""
    line = {"type": "command", "refreshInterval": 1,
            "command": f"{find_plugin_root() / 'bin' / 'maker'} status --line"}
    (claude_home / ".claude").mkdir(exist_ok=True)
    (claude_home / ".claude" / "settings.json").write_text(json.dumps({"statusLine": line}))
    terminal, main, executor, held = held_at_step_1(interactive, fake_api, project)
    terminal.wait(lambda: "maker: 1/3 · step 1 runs · " in terminal.text(),
                  "the run on the status line", TIMEOUT)
    asked = len(fake_api.requests_for(MAIN))
    held.set()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert len(fake_api.requests_for(MAIN)) == asked + 1  # (the wake's turn, no other)


def test_a_compaction_mid_run_and_the_run_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """The person compacts the session while the engine runs a step: maker's SessionStart
    hook tells the compacted session what the run is and what is next, and the run ends
    as it would have."""
    terminal, main, executor, held = held_at_step_1(interactive, fake_api, project)
    terminal.wait(lambda: STARTED in terminal.text(), "the launch turn over", TIMEOUT)
    before = len(fake_api.requests_for(MAIN))
    fake_api.script(MAIN, "Summary: a /maker:run is going on.")  # (the compaction's own)
    terminal.submit("/compact")
    terminal.wait(lambda: len(fake_api.requests_for(MAIN)) > before, "the compaction", TIMEOUT)
    held.set()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    after = [r for r in fake_api.requests_for(MAIN)[before + 1:]
             if "This session was compacted while maker's /maker:run goes on" in r.all_text]
    assert after, "the compacted session was told of the run"
    spent_as_reported(project, fake_api, 3)


def test_parallel_2_runs_a_wave_in_worktrees_and_lands_both(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    (project / "README.md").write_text("the project\n")
    for cmd in ("git config user.email a@b", "git config user.name a", "git add -A",
                "git commit -qm base"):
        subprocess.run(cmd, shell=True, cwd=project, check=True)
    write_plan(project, chain_plan(4, [(1, 2)]), policy="auto")
    main = follow(fake_api, 4, None)
    terminal = interactive()
    terminal.submit("/maker:run --parallel 2")

    ended(terminal, fake_api, main, "RUN_DONE")
    for n in range(4):
        assert step(project, n).status == "complete"
        assert (project / f"step{n}.txt").read_text() == f"step {n}\n"
    assert step(project, 1).meta.get("landed_files") == ["step1.txt"]  # (its worktree)
    assert step(project, 2).meta.get("landed_files") == ["step2.txt"]
    assert main.turns.count("started") == 1
    # the report is the last thing said, after every step's end
    last = fake_api.requests_for(MAIN)[-1].latest_text
    assert "maker: the plan is done" in last and "Steps in this run: 4 of 4" in last
    spent_as_reported(project, fake_api, 4)


def test_a_budget_reached_mid_run_stops_it_and_a_new_budget_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """Each step's calls cost about $0.16 as the client counts them here: a budget of
    $0.20 lets step 0 through and stops in step 1 (its session cut at what is left); the
    person gives a new budget and the run ends, every step complete once."""
    write_plan(project, chain_plan(3), policy="auto")
    executor = EngineExecutor(fake_api, 3)
    main = RunMain(fake_api, lambda k: None, on_stretch=executor.stretch)
    fake_api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run --max-budget-usd 0.2")
    terminal.wait(lambda: main.ended == "RUN_STOPPED" and "RUN_STOPPED" in terminal.text(),
                  "the run stopped by its budget", RUN_TIMEOUT)
    store = PlanStore(project / "plans")
    assert step(project, 0).status == "complete" and step(project, 1).status == "in-progress"
    stopped = read_run(store)["stopped"]["why"]
    assert "budget is spent" in stopped and "/maker:run --max-budget-usd X" in stopped
    spent = Ledger(store).total()
    assert 0.2 <= spent < 0.2 + 0.06  # (the last call is cut at what was left)

    # step 1 runs again from its start, whatever of its session was spent
    fake_api.script(EXECUTOR, *[executor] * (3 + 3 - sum(fake_api.remaining().values())))
    typed_again(terminal, fake_api, main, "/maker:run --max-budget-usd 1")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    spent_as_reported(project, fake_api, 3, cut=frozenset({1}))


def test_an_engine_killed_mid_step_stops_the_run_with_why_and_it_goes_on_after(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """The stretch is killed (SIGKILL to its process group, the executor's session with
    it: it records nothing). maker's wake sees its process gone and wakes the main agent
    all the same; maker says the engine ended without saying how, and stops the run
    there rather than start it again blind. The person's /maker:run goes on."""
    terminal, main, executor, held = held_at_step_1(interactive, fake_api, project)
    store = PlanStore(project / "plans")
    os.killpg(os.getpgid(int(read_run(store)["stretch"]["pid"])), signal.SIGKILL)
    terminal.wait(lambda: main.ended == "RUN_STOPPED" and "RUN_STOPPED" in terminal.text(),
                  "the run stopped, with why", TIMEOUT)
    assert "ended without saying how" in read_run(store)["stopped"]["why"]
    assert step(project, 1).status == "in-progress"
    held.set()
    fake_api.script(EXECUTOR, executor, executor)  # (step 1 again: 3 turns, 1 was left)
    typed_again(terminal, fake_api, main)
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3


def test_a_graceful_stop_finishes_the_step_that_runs_and_starts_nothing_more(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    terminal, main, executor, held = held_at_step_1(interactive, fake_api, project)
    terminal.wait(lambda: STARTED in terminal.text(), "the launch turn over", TIMEOUT)
    terminal.submit("/maker:run --stop")
    terminal.wait(lambda: main.turns[-1:] == ["noted"] and len(main.turns) >= 2,
                  "the stop told", TIMEOUT)
    assert read_run(PlanStore(project / "plans"))["stop_asked"]
    held.set()
    terminal.wait(lambda: main.ended == "RUN_STOPPED" and "RUN_STOPPED" in terminal.text(),
                  "the run stopped after step 1", TIMEOUT)
    assert [step(project, n).status for n in range(3)] == ["complete", "complete", "pending"]
    assert "/maker:run --stop" in read_run(PlanStore(project / "plans"))["stopped"]["why"]
    typed_again(terminal, fake_api, main)
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    spent_as_reported(project, fake_api, 3)


def test_esc_on_a_question_leaves_the_step_waiting_and_the_next_run_asks_again(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    terminal, main = at_the_first_question(interactive, fake_api, project)
    terminal.choose("escape")  # not now
    terminal.wait(lambda: "Enter to select" not in terminal.text()
                  and "esc to interrupt" not in terminal.text(), "the question left", TIMEOUT)
    assert step(project, 0).status == "awaiting-approval"
    approved_to_the_end(terminal, fake_api, main, project, 2)


def test_esc_while_the_engine_runs_does_not_stop_it_and_nothing_repeats(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """Esc interrupts the main agent's turn, not the background task: the stretch goes
    on, and its notification ends the run as it would have."""
    terminal, main, executor, held = held_at_step_1(interactive, fake_api, project)
    terminal.press("escape")  # (once: twice opens the client's rewind list)
    held.set()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert len(fake_api.requests_for(EXECUTOR)) == 9
    spent_as_reported(project, fake_api, 3)


def test_esc_on_the_launch_turn_leaves_the_engine_running_and_the_run_ends(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """Esc while the typed command's turn is still with the model: the client takes the
    turn back, but the stretch `/maker:run` started goes on, its wake comes, and the run
    ends as it would have, each step once."""
    write_plan(project, chain_plan(3), policy="auto")
    executor = EngineExecutor(fake_api, 3)
    main = RunMain(fake_api, lambda k: None, on_stretch=executor.stretch)
    entered, release = threading.Event(), threading.Event()

    def slow(request: Any) -> Any:  # (the model still thinking when the person presses Esc)
        entered.set()
        release.wait(60)
        return main(request)

    fake_api.script(MAIN, slow)
    terminal = interactive()
    terminal.submit("/maker:run")
    terminal.wait(entered.is_set, "the launch turn with the model", TIMEOUT)
    terminal.press("escape")
    # (the client rewinds a turn the model had not answered: the command is back in the
    # prompt, unsent; the stretch it started runs on)
    terminal.wait(lambda: "❯\xa0/maker:run" in terminal.text() and "esc to interrupt"
                  not in terminal.text(), "the turn taken back", TIMEOUT)
    release.set()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert len(fake_api.requests_for(EXECUTOR)) == 9
    spent_as_reported(project, fake_api, 3)


class ForegroundMain(RunMain):
    """The run's main agent, but it leaves run_in_background out of the stretch's call
    (found by a hostile review: the stretch then ended with no notification)."""

    def _turn(self, request):  # type: ignore[no-untyped-def]
        reply, what = super()._turn(request)
        if what == "stretch":
            return tool("Bash", command="maker loop stretch", description="maker run"), what
        return reply, what


def test_a_stretch_that_outlives_the_wake_is_waited_for_in_a_background_task(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """maker's wake waits for a stretch at most an hour (here, as a person can shorten
    it, 2 s): then it wakes the main agent, which runs `maker loop stretch` to wait for
    the one that runs; maker's hook puts that call in the background even when the
    model leaves run_in_background out, and the run ends as it would have."""
    write_plan(project, chain_plan(2), policy="never")
    held = threading.Event()
    executor = EngineExecutor(fake_api, 2, 1, hold={0: held})
    main = ForegroundMain(fake_api, lambda k: None, on_stretch=executor.stretch)
    fake_api.script(MAIN, main)
    terminal = interactive(env={"MAKER_WAKE_WAIT_S": "2"})
    terminal.submit("/maker:run")
    terminal.wait(lambda: "stretch" in main.turns, "the main agent's own stretch", TIMEOUT)
    held.set()
    for n in range(2):
        terminal.wait_for_text(f"Approve step {n}", TIMEOUT)
        terminal.choose()
    ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(2)] == ["complete"] * 2
    assert len(fake_api.requests_for(EXECUTOR)) == 6  # each step ran once
    launched = [r.latest_text for r in fake_api.requests_for(MAIN)
                if "Command running in background" in r.latest_text]
    assert launched and len(launched) == main.turns.count("stretch")  # (all in the background)
