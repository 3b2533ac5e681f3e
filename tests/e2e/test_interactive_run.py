"""``/maker:run`` as people run it: the real Claude Code CLI, interactive, in a
pseudo-terminal with its defaults (auto mode; every subagent in the background, handing
back through SubagentHandback). The person types ``/maker:run`` and answers maker's
questions; the scripted main agent does only what maker's ``Next:`` line says
(tests/harness/run_loop.py), so every step that follows another is maker's code at work.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.background import IDLE, TIMEOUT
from harness.claude_fixtures import StartInteractive
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.run_loop import RunExecutor, RunMain, chain_plan
from maker.store.plan_store import PlanStore
from maker.store.run_file import read_run
from maker_scripted.classify import MAIN

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 180.0


def committed(project: Path) -> None:
    (project / "README.md").write_text("the project\n")
    for cmd in ("git config user.email a@b", "git config user.name a", "git add -A",
                "git commit -qm base"):
        subprocess.run(cmd, shell=True, cwd=project, check=True)


def follow(api: RecordingAPI) -> tuple[RunMain, RunExecutor]:
    executor = RunExecutor(api)
    main = RunMain(api, executor.launch)
    api.script(MAIN, main)
    return main, executor


def run_ended(terminal, api: RecordingAPI, main: RunMain, line: str,  # type: ignore[no-untyped-def]
              timeout: float = RUN_TIMEOUT) -> str:
    """Wait until the main agent ended the run with ``line`` and the client is idle."""
    def ended() -> bool:
        failed = [r for r in api.requests if r.outcome == "error"]
        if failed:
            raise AssertionError(f"a scripted turn of {failed[0].agent!r} raised: "
                                 f"{failed[0].error!r}") from failed[0].error
        screen = terminal.text()
        return main.ended == line and line in screen and IDLE not in screen

    terminal.wait(ended, f"the run ended with {line}", timeout)
    api.assert_done()
    return terminal.text()


def typed_prompts(api: RecordingAPI) -> list[str]:
    """What the person typed into the main session, in order (notifications and tool
    results left out)."""
    seen = []
    for request in api.requests_for(MAIN):
        text = request.latest_text
        if "<command-name>/maker:" in text and text not in seen:
            seen.append(text)
    return seen


def test_a_six_step_plan_with_a_wave_runs_to_the_end_from_one_command(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    committed(project)
    write_plan(project, chain_plan(6, [(2, 3)]), policy="auto")
    main, executor = follow(fake_api)
    terminal = interactive()
    terminal.submit("/maker:run --parallel 2 --subagents")

    screen = run_ended(terminal, fake_api, main, "RUN_DONE")
    for n in range(6):
        record = step(project, n)
        assert record.status == "complete" and record.meta["approved_by"] == "policy:auto"
        assert (project / f"step{n}.txt").read_text() == f"step {n}\n"
    assert step(project, 2).meta.get("landed_files") == ["step2.txt"]  # (its worktree)
    assert step(project, 3).meta.get("landed_files") == ["step3.txt"]
    assert "launch 2" in main.turns and main.turns.count("ask") == 0
    assert len(typed_prompts(fake_api)) == 1  # the person typed once
    run = read_run(PlanStore(project / "plans"))
    assert run["ended_at"] and sorted(run["steps"], key=int) == [str(n) for n in range(6)]
    assert "maker: the plan is done" in fake_api.requests_for(MAIN)[-1].latest_text
    assert "RUN_DONE" in screen
    # The handoffs never entered the main session: gated, stored, named in a line.
    assert not [r for r in fake_api.requests_for(MAIN) if "for_next_agent" in r.all_text]


def test_under_never_the_person_answers_one_question_per_step(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(3), policy="never")
    main, _ = follow(fake_api)
    terminal = interactive()
    terminal.submit("/maker:run --subagents")

    for n in range(3):
        terminal.wait_for_text(f"Approve step {n}", TIMEOUT)
        assert step(project, n).status == "awaiting-approval"
        terminal.choose()  # the first option: approve this step
    run_ended(terminal, fake_api, main, "RUN_DONE")
    assert main.turns.count("ask") == 3
    for n in range(3):
        assert step(project, n).meta["approved_by"] == "user (AskUserQuestion)"
    assert len(typed_prompts(fake_api)) == 1


def test_approving_the_rest_by_policy_at_step_1_finishes_without_another_question(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(4), policy="never")
    main, _ = follow(fake_api)
    terminal = interactive()
    terminal.submit("/maker:run --subagents")

    terminal.wait_for_text("Approve step 0", TIMEOUT)
    terminal.choose()
    terminal.wait_for_text("Approve 1 and the rest", TIMEOUT)
    highlighted = "❯ 2. Approve 1 and the rest"
    terminal.wait(lambda: _moved_down(terminal, highlighted), "the second answer highlighted")
    terminal.choose()
    run_ended(terminal, fake_api, main, "RUN_DONE")
    assert main.turns.count("ask") == 2
    assert step(project, 1).meta["approved_by"] == "user (AskUserQuestion)"
    for n in (2, 3):
        assert step(project, n).meta["approved_by"] == \
            "policy:auto (the user's choice for this run)"
    policy = (project / "plans/.maker/policy.json")
    assert not policy.exists() or json.loads(policy.read_text()).get("name") != "auto"
    assert read_run(PlanStore(project / "plans"))["policy"] is None  # ended with the run


def test_a_lost_notification_does_not_stall_the_plan(
        claude_binary: Path, fake_api: RecordingAPI, project: Path, claude_home: Path,
        tmp_path: Path) -> None:
    """The client drops step 0's notification (here: a copy of the plugin whose
    UserPromptSubmit hook never sees a notification): the main agent gets no verdict and
    ends its turn. The next `/maker:run` says what step 0 did, and goes on."""
    from harness.install import plugin_checkout
    from harness.scenarios import plugin_env
    from maker_scripted.terminal import start_claude

    plugin = plugin_checkout(tmp_path / "plugin")
    drop = plugin / "scripts" / "drop-notifications"
    drop.write_text("#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n"
                    "  *'<task-notification>'*|*'[Subagent hand-back]'*) "
                    "exit 0 ;;\nesac\nprintf '%s' \"$input\" | exec \"$(dirname \"$0\")/hook\" "
                    "user-prompt-submit\n")
    drop.chmod(0o755)
    hooks = json.loads((plugin / "hooks/hooks.json").read_text())
    (hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]) = \
        '"${CLAUDE_PLUGIN_ROOT}/scripts/drop-notifications"'
    (plugin / "hooks/hooks.json").write_text(json.dumps(hooks))
    write_plan(project, chain_plan(2), policy="auto")
    main, _ = follow(fake_api)
    terminal = start_claude(fake_api, project=project, home=claude_home, plugin_dirs=[plugin],
                            env=plugin_env(), claude=claude_binary)
    try:
        for n in range(2):  # each notification is lost: /maker:run picks the run up
            terminal.submit("/maker:run --subagents")
            terminal.wait(lambda: step(project, n).status == "complete"  # noqa: B023
                          and main.turns[-1:] == ["noted"] and IDLE not in terminal.text(),
                          f"step {n} done, and its notification's turn over", TIMEOUT)
            assert step(project, n + 1).status == "pending" if n < 1 else True
        terminal.submit("/maker:run --subagents")
        run_ended(terminal, fake_api, main, "RUN_DONE")
    finally:
        terminal.close()
    resumed = [r.latest_text for r in fake_api.requests_for(MAIN)
               if "resumed: " in r.latest_text]
    assert len(resumed) == 2
    assert "Since the last verdict you saw:\n- step 0 (Write step0.txt): complete" in resumed[0]
    assert "Since the last verdict you saw:\n- step 1 (Write step1.txt): complete" in resumed[1]
    assert step(project, 1).status == "complete"


def test_a_killed_client_resumes_from_plans(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    import threading

    write_plan(project, chain_plan(3), policy="auto")
    held = threading.Event()
    executor = RunExecutor(fake_api, hold={1: held})
    main = RunMain(fake_api, executor.launch)
    fake_api.script(MAIN, main)
    first = interactive()
    first.submit("/maker:run --subagents")
    first.wait(lambda: step(project, 1).status == "in-progress" and not held.is_set()
               and executor.hold == {}, "step 1's executor at work", TIMEOUT)
    first.close()  # killed mid-step
    executor.abandoned.set()
    held.set()  # (its executor answers a client that is gone, and scripts nothing more)
    assert step(project, 1).status == "in-progress"
    second = interactive()
    second.submit("/maker:run --subagents")
    run_ended(second, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert (project / "step1.txt").read_text() == "step 1\n"


def test_a_deviation_mid_run_asks_the_person_and_the_run_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    write_plan(project, chain_plan(3), policy="auto")
    executor = RunExecutor(fake_api, deviate={1: ("step0.txt is named differently",
                                                  "Write step1.txt next to it")})
    main = RunMain(fake_api, executor.launch)
    fake_api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run --subagents")

    terminal.wait_for_text("Approve revised step 1", TIMEOUT)  # the run stopped and asks
    assert step(project, 0).status == "complete" and step(project, 2).status == "pending"
    assert not (project / "step1.txt").exists()  # nothing edited before the decision
    terminal.choose()  # the person approves the revised step
    run_ended(terminal, fake_api, main, "RUN_DONE")
    record = step(project, 1)
    assert record.status == "complete" and (project / "step1.txt").exists()
    asked = [r.latest_text for r in fake_api.requests_for(MAIN)
             if "a major deviation" in r.latest_text]
    assert "What changed: step0.txt is named differently." in asked[0]
    assert main.turns.count("ask") == 1 and len(typed_prompts(fake_api)) == 1


def test_a_deviation_the_person_decides_later_and_run_goes_on(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """The person leaves the deviation's question (Esc), decides with `/maker:approve 1`
    when they are ready, and `/maker:run` goes on from there."""
    write_plan(project, chain_plan(3), policy="auto")
    executor = RunExecutor(fake_api, deviate={1: ("the layout changed", "Write step1.txt")})
    main = RunMain(fake_api, executor.launch)
    fake_api.script(MAIN, main)
    terminal = interactive()
    terminal.submit("/maker:run --subagents")

    terminal.wait_for_text("Approve revised step 1", TIMEOUT)
    terminal.choose("escape")  # not now
    terminal.wait(lambda: IDLE not in terminal.text() and "Declined to answer" in
                  terminal.text(), "the question declined, the client idle", TIMEOUT)
    assert step(project, 1).status == "in-progress" and not (project / "step1.txt").exists()
    terminal.submit("/maker:approve 1")
    terminal.wait(lambda: IDLE not in terminal.text() and main.turns[-1:] == ["noted"]
                  and len(typed_prompts(fake_api)) == 2, "the approval told", TIMEOUT)
    terminal.submit("/maker:run --subagents")
    run_ended(terminal, fake_api, main, "RUN_DONE")
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    assert len(typed_prompts(fake_api)) == 3


def _moved_down(terminal, highlighted: str) -> bool:  # type: ignore[no-untyped-def]
    """One Down, until it took (the client draws a question before its list takes keys)."""
    import time

    if highlighted in terminal.text():
        return True
    terminal.press("down")
    time.sleep(0.5)
    return highlighted in terminal.text()
