"""maker's wake (``maker.hooks.wake``): the ``asyncRewake`` hook that wakes the main agent
of a ``/maker:run`` when the stretch of maker's engine started for a person's answer (or
for the typed command) ends, and never for anything else.

The stretch's process is stood in for by this test: its lock held, its record written
as ``maker loop stretch`` writes it (``began``, ``ended``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import linear, step_spec, write
from maker.executor.acceptance.approval import approval_question
from maker.executor.state.run import ENGINE, SUBAGENTS, begin_run, live_run, note_stretch
from maker.executor.state.stretch import began, ended, holding_stretch
from maker.hooks import wake
from maker.hooks.protocol import HookInput
from maker.store.plan_store import PlanStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    plans = linear(tmp_path / "project", 3)
    with plans.lock():
        begin_run(plans, "sess-1", None, ENGINE)
    monkeypatch.setattr(wake, "_POLL_S", 0.02)
    monkeypatch.setattr(wake, "_LOOK_S", 0.1)
    monkeypatch.setattr(wake, "_MARK_WAIT_S", 2.0)
    return plans


def answer(store: PlanStore, tool_use_id: str = "toolu_1", question: Any = None) -> HookInput:
    asked = question if question is not None else approval_question(0, "Step 0", in_run=True)
    return HookInput("stretch-wake", {
        "hook_event_name": "PostToolUse", "session_id": "sess-1", "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id, "cwd": str(store.root.parent),
        "tool_input": {**asked, "answers": {}}})


def later(seconds: float, *then: Any) -> threading.Thread:
    """Do ``then`` (callables) in order, ``seconds`` from now, in a thread of its own."""
    def run() -> None:
        time.sleep(seconds)
        for step in then:
            step()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_wake_comes_when_the_stretch_started_for_the_answer_ends(store: PlanStore) -> None:
    at = time.time()
    note_stretch(store, wake_for="toolu_1", wake_at=at)
    with holding_stretch(store) as mine:  # (the stretch's process, at work)
        assert mine
        began(store)
        worker = later(0.3, lambda: ended(store, 0, "a step awaits the user's approval"))
        assert wake.on_stretch_wake(answer(store)) == {"wake": "the stretch ended."}
        worker.join()


def test_an_older_stretchs_end_is_not_this_ones(store: PlanStore) -> None:
    """A stretch started while another ran (a closed session's) waits for it: that one's
    end is written first, and must not wake the main agent for this one."""
    with holding_stretch(store) as mine:
        assert mine
        began(store)  # (the old stretch, begun before this answer)
        time.sleep(0.01)
        note_stretch(store, wake_for="toolu_1", wake_at=time.time())
        woke: list[Any] = []
        waiter = threading.Thread(target=lambda: woke.append(
            wake.on_stretch_wake(answer(store))), daemon=True)
        waiter.start()
        ended(store, 0, "the old one ended")
        time.sleep(0.3)
        assert not woke  # (still waiting: for the new one)
        began(store)  # (the new one, once it took the lock)
        ended(store, 0, "a step awaits the user's approval")
        waiter.join(5)
        assert woke == [{"wake": "the stretch ended."}]


def test_no_wake_when_the_answer_started_no_stretch(store: PlanStore) -> None:
    note_stretch(store, wake_for="toolu_1", wake_at=None)  # (the next action was a question)
    took = time.monotonic()
    assert not wake.on_stretch_wake(answer(store))
    assert time.monotonic() - took < 1


@pytest.mark.parametrize("hook", [
    lambda s: answer(s, question={"questions": [{"question": "Which colour?", "header": "C",
                                                 "multiSelect": False, "options": []}]}),
    lambda s: HookInput("stretch-wake", {**answer(s).raw, "agent_type": "maker:step-executor"}),
    lambda s: HookInput("stretch-wake", {**answer(s).raw, "tool_use_id": ""}),
    lambda s: HookInput("stretch-wake", {**answer(s).raw, "tool_name": "Bash"}),
], ids=["not-makers-question", "a-subagents-question", "no-tool-use-id", "another-tool"])
def test_anything_else_is_left_at_once(store: PlanStore, hook: Any) -> None:
    took = time.monotonic()
    assert not wake.on_stretch_wake(hook(store))
    assert time.monotonic() - took < 1


def test_a_run_of_subagents_has_no_wake(tmp_path: Path) -> None:
    plans = linear(tmp_path / "project", 2)
    with plans.lock():
        begin_run(plans, "sess-1", None, SUBAGENTS)
    took = time.monotonic()
    assert not wake.on_stretch_wake(answer(plans))
    assert time.monotonic() - took < 1


def test_a_stretch_killed_without_a_word_still_wakes_the_main_agent(store: PlanStore) -> None:
    note_stretch(store, wake_for="toolu_1", wake_at=time.time())
    with holding_stretch(store) as mine:
        assert mine
        began(store)
        woke: list[Any] = []
        waiter = threading.Thread(target=lambda: woke.append(
            wake.on_stretch_wake(answer(store))), daemon=True)
        waiter.start()
        time.sleep(0.3)
        assert not woke
    # (the lock freed with nothing recorded: as a SIGKILL leaves it)
    waiter.join(5)
    assert woke == [{"wake": "the stretch ended without saying how."}]


def test_a_stretch_that_never_took_its_lock_wakes_with_where_to_look(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wake, "_START_WAIT_S", 0.3)
    note_stretch(store, wake_for="toolu_1", wake_at=time.time())
    assert wake.on_stretch_wake(answer(store)) == {
        "wake": "the stretch did not start (plans/.maker/stretch.log says why)."}


def test_a_stretch_longer_than_the_wait_wakes_the_main_agent_to_wait_in_its_own(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAKER_WAKE_WAIT_S", "1")
    note_stretch(store, wake_for="toolu_1", wake_at=time.time())
    with holding_stretch(store) as mine:
        assert mine
        began(store)
        assert wake.on_stretch_wake(answer(store)) == {"wake": "the stretch still runs."}


@pytest.mark.parametrize(("asked", "got"), [
    ("10", 10.0), ("99999", wake.WAKE_WAIT_S), ("0", 1.0), ("nan", wake.WAKE_WAIT_S),
    ("soon", wake.WAKE_WAIT_S)])
def test_the_wait_can_only_be_shortened(monkeypatch: pytest.MonkeyPatch, asked: str,
                                        got: float) -> None:
    monkeypatch.setenv("MAKER_WAKE_WAIT_S", asked)
    assert wake.wait_s() == got


def test_a_later_answers_stretch_takes_the_wake_over(store: PlanStore) -> None:
    note_stretch(store, wake_for="toolu_1", wake_at=time.time())
    with holding_stretch(store) as mine:
        assert mine
        began(store)
        later(0.2, lambda: note_stretch(store, wake_for="toolu_2", wake_at=time.time()))
        assert not wake.on_stretch_wake(answer(store))


def _typed_stretch(plans: PlanStore, only: int | None = None) -> None:
    """What the typed command's line does (``maker loop begin``, or ``maker step begin``
    of one step), and its stretch, begun and ended, for the wake on prompt p-1."""
    with plans.lock():
        begin_run(plans, "sess-1", None, ENGINE, only=only)
    note_stretch(plans, wake_for="p-1", wake_at=time.time())
    with holding_stretch(plans) as mine:
        assert mine
        began(plans)
        ended(plans, 0, "the plan is done")


def test_the_typed_run_waits_for_its_run_to_begin(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The wake on a typed /maker:run starts with the prompt, before `maker loop begin`
    has begun the run: it waits for the run's mark for this prompt."""
    plans = linear(tmp_path / "project", 2)
    monkeypatch.setattr(wake, "_POLL_S", 0.02)
    typed = HookInput("stretch-wake", {"hook_event_name": "UserPromptSubmit",
                                       "session_id": "sess-1", "prompt": "/maker:run",
                                       "prompt_id": "p-1", "cwd": str(plans.root.parent)})

    later(0.3, lambda: _typed_stretch(plans))
    assert wake.on_stretch_wake(typed) == {"wake": "the stretch ended."}
    other = HookInput("stretch-wake", {**typed.raw, "prompt": "/maker:status"})
    assert not wake.on_stretch_wake(other)


def _code_vote_plan(root: Path) -> PlanStore:
    return write(root, [step_spec(0, -1, primary_tools=["Read", "Write"], votes=2,
                                  writes=["src/"])])


def test_a_typed_maker_step_of_a_code_vote_waits_for_its_stretch_as_a_typed_run_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/maker:step`` of a step whose code the engine votes on (``maker step begin``
    starts its stretch), through ``scripts/hook``'s filter too; a plan with no such step
    waits for nothing."""
    from maker.executor.rules import vote_rules

    monkeypatch.setattr(vote_rules, "engine_here", lambda: True)
    plans = _code_vote_plan(tmp_path / "project")
    monkeypatch.setattr(wake, "_POLL_S", 0.02)
    typed = HookInput("stretch-wake", {"hook_event_name": "UserPromptSubmit",
                                       "session_id": "sess-1", "prompt": "/maker:step 0",
                                       "prompt_id": "p-1", "cwd": str(plans.root.parent)})

    later(0.3, lambda: _typed_stretch(plans, only=0))
    assert wake.on_stretch_wake(typed) == {"wake": "the stretch ended."}
    env = dict(os.environ, MAKER_PYTHON=sys.executable,
               CLAUDE_PROJECT_DIR=str(plans.root.parent))
    woke = subprocess.run([str(ROOT / "scripts" / "hook"), "stretch-wake"],
                          input=json.dumps(typed.raw), capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert (woke.returncode, woke.stderr.strip()) == (2, "the stretch ended."), woke
    monkeypatch.setattr(vote_rules, "engine_here", lambda: False)
    began_at = time.monotonic()
    assert not wake.on_stretch_wake(typed)  # (no engine: /maker:step starts no stretch)
    plain = linear(tmp_path / "plain", 2)
    assert not wake.on_stretch_wake(HookInput("stretch-wake", {
        **typed.raw, "cwd": str(plain.root.parent)}))
    monkeypatch.setattr(vote_rules, "engine_here", lambda: True)
    mixed = write(tmp_path / "mixed", [
        step_spec(0, 1, primary_tools=["Read", "Write"], votes=2, writes=["src/"]),
        step_spec(1, -1, primary_tools=["Read"])])
    assert not wake.on_stretch_wake(HookInput("stretch-wake", {  # (step 1 does not vote)
        **typed.raw, "prompt": "/maker:step 1", "cwd": str(mixed.root.parent)}))
    assert time.monotonic() - began_at < 1.0  # (none of the three waited for a mark)


def test_the_client_knows_the_wake_by_its_summary() -> None:
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    wakes = [h for event in ("PostToolUse", "UserPromptSubmit") for group in hooks[event]
             for h in group["hooks"] if h["command"].endswith(" stretch-wake")]
    assert len(wakes) == 2
    for hook in wakes:
        assert hook["asyncRewake"] is True and hook["timeout"] > wake.WAKE_WAIT_S
        assert hook["rewakeSummary"] == wake.WAKE_SUMMARY
    # (as the pinned client words the wake's turn)
    prompt = (f"<task-notification>\n<summary>{wake.WAKE_SUMMARY}</summary>\n"
              "</task-notification>\n<system-reminder>\nmaker: the stretch ended.\n\n"
              "</system-reminder>")
    assert wake.is_wake(prompt)
    assert not wake.is_wake("the engine stopped")
    assert not wake.is_wake("<task-notification>\n<task-id>b1</task-id>\n<summary>maker: "
                            "x</summary></task-notification>")


def test_through_scripts_hook_a_wake_exits_2_with_what_it_says(store: PlanStore) -> None:
    at = time.time()
    note_stretch(store, wake_for="toolu_1", wake_at=at)
    with holding_stretch(store) as mine:
        assert mine
        began(store)
        ended(store, 0, "a step awaits the user's approval")
    env = dict(os.environ, MAKER_PYTHON=sys.executable,
               CLAUDE_PROJECT_DIR=str(store.root.parent))
    woke = subprocess.run([str(ROOT / "scripts" / "hook"), "stretch-wake"],
                          input=json.dumps(answer(store).raw), capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert (woke.returncode, woke.stderr.strip(), woke.stdout) == (2, "the stretch ended.", "")
    note_stretch(store, wake_for="toolu_2", wake_at=None)
    quiet = subprocess.run([str(ROOT / "scripts" / "hook"), "stretch-wake"],
                           input=json.dumps(answer(store, "toolu_2").raw), capture_output=True,
                           text=True, env=env, timeout=60, check=False)
    assert (quiet.returncode, quiet.stderr, quiet.stdout) == (0, "", "")
    assert live_run(store)["stretch"]["wake_for"] == "toolu_2"


@pytest.mark.parametrize("raw", [
    '{"hook_event_name":"PostToolUse","tool_name":"AskUserQuestion", broken',
    '{"tool_name":"AskUserQuestion"}',
    '{"tool_name":"AskUserQuestion","x":' + "[" * 100_000 + "]" * 100_000 + "}",
])
def test_an_input_the_wake_cannot_read_wakes_nobody(store: PlanStore, raw: str) -> None:
    env = dict(os.environ, MAKER_PYTHON=sys.executable,
               CLAUDE_PROJECT_DIR=str(store.root.parent))
    done = subprocess.run([str(ROOT / "scripts" / "hook"), "stretch-wake"], input=raw,
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("stretch", ["garbage", [1], {"wake_for": "toolu_1", "wake_at": True},
                                     {"wake_for": "toolu_1", "wake_at": "soon"}])
def test_a_record_of_another_shape_neither_crashes_nor_wakes(store: PlanStore,
                                                             stretch: Any) -> None:
    from maker.store.run_file import read_run, write_run

    with store.lock():
        write_run(store, {**read_run(store), "stretch": stretch})
    took = time.monotonic()
    assert not wake.on_stretch_wake(answer(store))
    assert time.monotonic() - took < 5
