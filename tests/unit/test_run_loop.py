"""``/maker:run``'s loop in code: from where ``plans/`` stands, the one next action
(``maker.executor.loop``), the run's sealed record, its short verdicts and its report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.crash_wave_states import wave_ready
from harness.run_steps import PROMPT, SESSION, begin, finish
from harness.step_plans import handoff, linear
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import APPROVE_REST_LABEL, read_policy, set_policy
from maker.executor.loop.actions import END_DONE, END_STOPPED
from maker.executor.loop.next_action import loop_lock, next_action
from maker.executor.loop.words import answered, executor_said, unseen
from maker.executor.rules.step_rules import STOP_REMINDERS
from maker.executor.state.lifecycle import fail_step
from maker.executor.state.run import begin_run, live_run, run_policy
from maker.hooks.decisions import answer_decision
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker.store.run_file import RUN_FILE, read_run


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verification_off: None
          ) -> PlanStore:
    monkeypatch.chdir(tmp_path)
    return linear(tmp_path, 10, policy="auto")


def test_a_run_starts_the_next_step_and_says_only_what_to_launch(store: PlanStore) -> None:
    said = begin(store)
    assert said == ('Next: launch maker:step-executor with the Agent tool and the prompt '
                    '"Execute maker step 1."')
    assert store.load_step(1).status == "in-progress"  # started in code, not by the model
    assert live_run(store)["session_id"] == SESSION


def test_each_verdict_names_the_next_launch_and_stays_the_same_size(store: PlanStore) -> None:
    begin(store)
    sizes = []
    for n in range(1, 10):
        verdict = finish(store, n, {"tokens": 1000 * n, "duration_ms": 2000})
        assert verdict.startswith(f"step {n} (Step number {n}): complete, approved by "
                                  "policy:auto. Summary: Did step")
        assert verdict.endswith(f'the prompt "Execute maker step {n + 1}."')
        sizes.append(len(verdict))
    assert max(sizes) < 400 and max(sizes) - min(sizes) <= 2  # (a digit more at step 10)
    last = finish(store, 10)
    assert last.endswith(f"end with the line {END_DONE}.")
    assert "maker: the plan is done" in last and "Steps in this run: 10 of 10" in last
    assert read_run(store)["ended_at"] and not live_run(store)


def test_under_never_the_question_offers_the_rest_of_the_run_by_policy(
        store: PlanStore) -> None:
    set_policy(store, "never", "person (terminal)")
    begin(store)
    verdict = finish(store, 1)
    assert "awaiting-approval" in verdict and "\nask: " in verdict
    question = json.loads(verdict.split("\nask: ", 1)[1])
    labels = [o["label"] for o in question["questions"][0]["options"]]
    assert labels == ["Approve step 1", "Approve 1 and the rest", "Reject step 1"]
    text = question["questions"][0]["question"]
    told = answer_decision(store, question, {"answers": {text: APPROVE_REST_LABEL.format(n=1)}},
                           SESSION, PROMPT)
    assert told is not None
    said = answered(store, told, SESSION, PROMPT)
    assert "chose policy auto for the rest of this run" in said
    assert said.endswith('"Execute maker step 2."') and "STEP_COMPLETE" not in said
    assert store.load_step(1).meta["approved_by"] == "user (AskUserQuestion)"
    assert run_policy(store) and read_policy(store).name == "auto"
    verdict = finish(store, 2)  # no question: the person's choice for this run
    assert "approved by policy:auto (the user's choice for this run)" in verdict
    assert verdict.endswith('"Execute maker step 3."')


def test_a_persons_policy_replaces_the_runs_choice(store: PlanStore) -> None:
    set_policy(store, "never", "person (terminal)")
    begin(store)
    from maker.executor.state.run import choose_policy

    choose_policy(store, "auto", "user (AskUserQuestion, at step 1)")
    assert read_policy(store).name == "auto"
    set_policy(store, "never", "user (typed /maker:policy)")
    assert run_policy(store) is None and read_policy(store).name == "never"


def test_a_run_record_written_by_hand_is_no_run(store: PlanStore) -> None:
    begin(store)
    path = store.state_dir / RUN_FILE
    forged = json.loads(path.read_text())
    forged["policy"] = {"name": "auto", "set_by": "the model"}
    path.write_text(json.dumps(forged))
    assert read_run(store) == {} and run_policy(store) is None
    assert read_policy(store).name == "auto"  # (the plan's own, set by a person)


def test_a_failed_step_stops_the_run_and_run_again_resumes_it(store: PlanStore) -> None:
    begin(store)
    run_id = live_run(store)["id"]
    fail_step(store, 1, ["the tests would not pass"])
    said = executor_said(store, {"outcome": "failed", "step": 1, "attempts": 3}, SESSION,
                         PROMPT, {})
    assert "step 1 (Step number 1) FAILED" in said
    assert "is failed: the tests would not pass" in said and said.endswith(f"{END_STOPPED}.")
    assert not live_run(store) and read_run(store)["stopped"]
    from maker.executor.state.lifecycle import reset_step

    reset_step(store, 1)
    again = begin(store)
    assert again.endswith('"Execute maker step 1."') and live_run(store)["id"] == run_id


def test_a_lost_launch_is_launched_again_when_the_person_types_run(store: PlanStore) -> None:
    from maker.executor.votes.runs import start_launch

    begin(store)
    assert start_launch(store, "toolu_1", SESSION, PROMPT) is None  # a foreground launch
    with loop_lock(store):  # a hook's view: the executor runs
        assert next_action(store, SESSION, PROMPT).kind == "wait"
    # The client was killed: a person types /maker:run in a new session.
    with loop_lock(store), store.lock():
        begin_run(store, "session-2", None)
    action = next_action(store, "session-2", "prompt-9", typed=True)
    assert action.kind == "launch" and action.said.endswith('"Execute maker step 1."')
    assert store.read_active()["session_id"] == "session-2"


def test_a_verdict_that_never_reached_the_main_agent_is_said_with_the_next_run(
        store: PlanStore) -> None:
    begin(store)
    accept_handoff(store, handoff(1, summary="Wrote the thing."))  # its notification lost
    seen = unseen(store)
    assert seen == ["step 1 (Step number 1): complete, approved by policy:auto. Summary: "
                    "Wrote the thing."]
    assert unseen(store) == []  # said once
    assert begin(store).endswith('"Execute maker step 2."')


def test_run_with_parallel_starts_a_wave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         verification_off: None) -> None:
    monkeypatch.chdir(tmp_path)
    store = wave_ready(tmp_path)
    said = begin(store, parallel=2)
    assert said == ("Next: launch 2 maker:step-executor subagents at once, one Agent call "
                    'each in one message, with the prompts "Execute maker step 1." and '
                    '"Execute maker step 2."')
    assert live_run(store)["parallel"] == 2
    assert {store.load_step(n).status for n in (1, 2)} == {"in-progress"}


def test_status_shows_the_run_and_each_steps_time_and_tokens(store: PlanStore) -> None:
    from click.testing import CliRunner

    from maker.cli.main import cli

    begin(store)
    finish(store, 1, {"tokens": 1000, "duration_ms": 2000})  # (as the client reported)
    out = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)]).output
    run_id = live_run(store)["id"]
    assert f"Run {run_id}: 1 of 10 steps complete; running." in out
    assert "  runs now: step 2" in out
    assert "  step 1: complete (2 s, 1000 tokens)" in out
    data = json.loads(CliRunner().invoke(
        cli, ["status", "--json", "--plans-dir", str(store.root)]).output)
    assert data["run"]["id"] == run_id and "seal" not in data["run"]
    from maker.executor.loop.status_view import status_summary

    assert f"Run {run_id}: 1 of 10 steps complete" in status_summary(store)


def test_a_stop_with_a_step_nothing_runs_is_reminded_then_stops_the_run_not_the_step(
        store: PlanStore) -> None:
    """The main agent ends its turn without launching the step the run started: reminded
    (bounded), then the run stops, and the step is kept as it is (never failed for what
    the main agent did not do)."""
    begin(store)

    def stop(active: bool) -> dict[str, str]:
        data = {"session_id": SESSION, "prompt_id": PROMPT, "cwd": os.getcwd(),
                "hook_event_name": "Stop", "stop_hook_active": active}
        return json.loads(run_hook("stop", HANDLERS["stop"], stdin=json.dumps(data)))

    for count in range(1, STOP_REMINDERS):  # (the last reminder is the stop that follows)
        out = stop(count > 1)
        assert out.get("decision") == "block", out
        assert out["reason"].startswith("maker: the run is not finished: step 1 (Step number "
                                        "1) is in progress and no executor runs it. Next: "
                                        "launch the maker:step-executor")
        assert out["reason"].endswith(f"(Reminder {count} of {STOP_REMINDERS}.)")
    out = stop(True)  # the STOP_REMINDERS-th stop of the chain: no block
    assert out["systemMessage"].startswith("maker: the run stopped: step 1")
    assert store.load_step(1).status == "in-progress" and not live_run(store)
    assert begin(store).endswith('"Execute maker step 1."')  # /maker:run goes on


def test_a_launch_said_once_is_not_said_again_until_it_was_made(store: PlanStore) -> None:
    """Two verdicts at once (a wave's executors, in the foreground): the second does
    not say again the launch the first said; once that launch was made and returned,
    the next verdict says it again (the step runs anew)."""
    from maker.executor.votes.runs import end_launches, start_launch

    begin(store)  # (a person's /maker:run: says to launch step 1)
    with loop_lock(store):
        assert next_action(store, SESSION, PROMPT).kind == "wait"  # said, not yet made
    assert start_launch(store, "toolu_1", SESSION, PROMPT) is None
    end_launches(store, 1, "toolu_1")  # it returned without an accepted handoff
    with loop_lock(store):
        action = next_action(store, SESSION, PROMPT)
    assert action.kind == "launch" and action.said.endswith('"Execute maker step 1."')


def test_a_hand_backs_later_notification_gives_the_steps_tokens_and_time(
        store: PlanStore) -> None:
    """In auto mode the verdict comes with the hand-back; the client's notification with
    what it counted comes after: maker notes its tokens and time for the step."""
    import os

    from maker.hooks import records
    from maker.hooks.handlers import HANDLERS
    from maker.hooks.protocol import run_hook

    begin(store)
    finish(store, 1)
    records.write("agent-1", {"agent_type": "maker:step-executor", "outcome": "accepted",
                              "final": True, "told": True, "step": 1})
    prompt = ("<task-notification><task-id>agent-1</task-id><status>completed</status>"
              "<result>its report was delivered</result><usage><subagent_tokens>6442"
              "</subagent_tokens><tool_uses>2</tool_uses><duration_ms>1436</duration_ms>"
              "</usage></task-notification>")
    data = {"session_id": SESSION, "cwd": os.getcwd(), "hook_event_name": "UserPromptSubmit",
            "prompt": prompt, "prompt_id": "p9"}
    run_hook("user-prompt-submit", HANDLERS["user-prompt-submit"], stdin=json.dumps(data))
    entry = live_run(store)["steps"]["1"]
    assert (entry["tokens"], entry["duration_ms"], entry["tool_uses"]) == (6442, 1436, 2)
