"""Who works on the step in progress: takeover, the turn the Stop hook holds, one
executor at a time, the retry's brief, and maker's verdict for the main agent."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.queries import launched
from harness.step_plans import handoff, linear
from maker.cli.main import cli
from maker.executor.launch.brief import build_brief
from maker.executor.rules.instructions import relaunch_instruction
from maker.executor.state.lifecycle import start_step
from maker.executor.state.owner import OWNER_IDLE_S, owner_gone
from maker.executor.votes.runs import add_turn
from maker.hooks import verdicts
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import HookInput, run_hook
from maker.store.requests import save_request

ROOT = Path(__file__).resolve().parents[2]
EXECUTOR = "maker:step-executor"


@pytest.fixture()
def project(plugin_project: Path) -> Path:
    return plugin_project


def fire(event: str, data: dict[str, Any]) -> dict[str, Any] | None:
    data = {"session_id": "sess-1", "cwd": os.getcwd(), "hook_event_name": event, **data}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else None


def launch(prompt_id: str = "p1", tool_use_id: str = "t1",
           session: str = "sess-1") -> dict[str, Any] | None:
    return launched(fire("agent-launch", {
        "session_id": session, "prompt_id": prompt_id, "tool_name": "Agent",
        "tool_use_id": tool_use_id, "tool_input": {"subagent_type": EXECUTOR,
                                                   "prompt": "Execute maker step 1."}}))


def returned(agent: str, agent_id: str, tool_use_id: str = "t1") -> dict[str, Any] | None:
    return fire("agent-return", {"tool_name": "Agent", "tool_use_id": tool_use_id,
                                 "tool_input": {"subagent_type": agent},
                                 "tool_response": {"status": "completed", "agentId": agent_id}})


def stop(prompt_id: str, session: str = "sess-1") -> dict[str, Any] | None:
    return fire("stop", {"session_id": session, "prompt_id": prompt_id,
                         "stop_hook_active": False})


def denied(out: dict[str, Any] | None) -> str:
    assert out is not None
    hso = out["hookSpecificOutput"]
    assert hso["permissionDecision"] == "deny"
    return str(hso["permissionDecisionReason"])


# -- the owner is gone --------------------------------------------------------------


def test_an_owner_is_gone_when_its_transcripts_are_idle(tmp_path: Path) -> None:
    main = tmp_path / "A.jsonl"
    main.write_text("{}\n")
    old = time.time() - OWNER_IDLE_S - 60
    os.utime(main, (old, old))
    assert owner_gone(tmp_path, "A")
    agent = tmp_path / "A" / "subagents" / "agent-x.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_text("{}\n")  # its executor is still writing: the session is alive
    assert not owner_gone(tmp_path, "A")
    assert not owner_gone(tmp_path, "missing")  # no transcript here proves nothing
    assert not owner_gone(None, "A") and not owner_gone(tmp_path, "../A")


def test_a_new_session_takes_over_a_step_whose_owner_is_gone(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="A")
    folder = project / "transcripts"
    folder.mkdir()
    (folder / "A.jsonl").write_text("{}\n")
    save_request("B", "/maker:step", transcript_path=str(folder / "B.jsonl"))
    begin = ["step", "begin", "--session", "B"]
    assert CliRunner().invoke(cli, begin).output.startswith("REFUSED:")  # A is alive
    old = time.time() - OWNER_IDLE_S - 60
    os.utime(folder / "A.jsonl", (old, old))
    out = CliRunner().invoke(cli, begin).output
    assert out.startswith("STARTED: step 1 (Step number 1) taken over (session A, which had "
                          "it, has written nothing for over 15 minutes).")
    assert store.read_active()["session_id"] == "B"  # type: ignore[index]


def test_a_person_takes_a_step_over_from_a_shell(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="A")
    result = CliRunner().invoke(cli, ["step", "start", "1", "--take-over"],
                                env={"MAKER_SESSION_ID": "", "CLAUDE_CODE_SESSION_ID": ""})
    assert result.exit_code == 0, result.output
    assert store.read_active()["session_id"] is None  # type: ignore[index]
    # No session owns it now: any session's /maker:step resumes it without a refusal.
    assert start_step(store, 1, session_id="C").restarted


# -- the Stop hook holds only the turn that runs the step -------------------------------


def test_a_later_unrelated_turn_is_not_blocked(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    add_turn(store, 1, "sess-1", "p1")  # /maker:step 1 was prompt p1
    out = stop("p1")
    assert out is not None and out["decision"] == "block"
    for _ in range(5):  # the user asks something else, again and again
        assert stop("p2") is None
    assert store.load().get(1).status == "in-progress"


def test_a_turn_that_relaunches_the_executor_is_held(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    add_turn(store, 1, "sess-1", "p1")
    assert launch(prompt_id="p3") is None
    out = stop("p3")
    assert out is not None and out["decision"] == "block"
    assert relaunch_instruction(1) in out["reason"]


def test_the_stop_that_fails_a_step_tells_the_main_agent_the_sentinel(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    outs = [fire("stop", {"prompt_id": "p1", "stop_hook_active": i > 0}) for i in range(4)]
    reasons = [o["reason"] for o in outs if o and o.get("decision") == "block"]
    assert reasons[-1].startswith("maker's verdict: step 1 (Step number 1) FAILED: the "
                                  "session stopped without an accepted handoff.")
    assert reasons[-1].endswith("End your reply with the line STEP_FAILED.")
    assert outs[-1] is None and store.load().get(1).status == "failed"


# -- one executor per step -------------------------------------------------------------


def test_a_second_executor_is_refused_while_one_runs(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    assert launch(tool_use_id="t1") is None
    reason = denied(launch(tool_use_id="t2"))
    assert reason.startswith("maker: an executor for step 1 is already running")
    returned(EXECUTOR, "agent-1", tool_use_id="t1")  # it came back: the next may go
    assert launch(tool_use_id="t3") is None


def test_a_crashed_launch_is_void_once_its_session_restarts(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    assert launch(tool_use_id="t1") is None  # then the process was killed
    assert denied(launch(tool_use_id="t2"))
    fire("session-start", {"source": "resume"})
    assert launch(tool_use_id="t3") is None


def test_a_taken_over_steps_old_launch_does_not_count(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="A")
    assert launch(tool_use_id="t1", session="A") is None
    start_step(store, 1, session_id="B", take_over=True)
    assert launch(tool_use_id="t2", session="B") is None


def test_the_retrys_brief_says_the_tree_may_hold_the_earlier_edits(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    launch(tool_use_id="t1")
    assert "An earlier attempt was interrupted" not in build_brief(store, None, 1)
    fire("session-start", {"source": "resume"})
    launch(tool_use_id="t2")
    brief = build_brief(store, None, 1)
    assert "## An earlier attempt was interrupted" in brief and "`git status`" in brief


def test_the_prompts_name_no_launch_of_their_own() -> None:
    """/maker:step's and /maker:run's texts name no launch prompt: maker's own lines
    (``maker step begin``, the verdicts, ``maker loop begin``) give the one each time."""
    for name in ("step.md", "run.md"):
        assert "Execute maker step" not in (ROOT / "commands" / name).read_text()


# -- maker's verdict -----------------------------------------------------------------


def verdict_on(project: Path, policy: str = "auto", files: int = 0,
               reviewed: bool = False) -> str:
    """maker's verdict on step 1's executor, which handed off ``files`` changed files
    (under the approval ``policy``; with the reviewer's approval first, if ``reviewed``)."""
    start_step(linear(project, 2, policy=policy), 1, session_id="sess-1")
    changed = [f"f{i}.py" for i in range(files)]
    for name in changed:
        (project / name).write_text("x = 1\n")
    fire("subagent-stop", {"agent_id": "agent-1", "agent_type": EXECUTOR,
                           "last_assistant_message": handoff(1, files_changed=changed)})
    if reviewed:
        fire("subagent-stop", {"agent_id": "reviewer-1", "agent_type": "maker:reviewer",
                               "last_assistant_message": "GREEN: fine\nVERDICT: approve"})
    out = returned(EXECUTOR, "agent-1")
    assert out is not None
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def test_the_executors_verdict_names_the_outcome_and_the_sentinel(project: Path) -> None:
    text = verdict_on(project)
    assert text.startswith("maker's verdict: step 1 (Step number 1): handoff accepted; ")


def test_an_approval_verdict_carries_the_question_to_ask(project: Path) -> None:
    """The main agent asks the user with the verdict's own `ask:` line: it need not run
    `maker step outcome N` to fetch it."""
    from maker.executor.acceptance.approval import approval_question

    text = verdict_on(project, policy="never")
    assert "status: awaiting-approval" in text
    line = next(x for x in text.splitlines() if x.startswith("ask: "))
    assert json.loads(line[len("ask: "):]) == approval_question(1, "Step number 1")


def test_a_verdict_after_the_review_asks_and_does_not_ask_for_the_review_again(
        project: Path) -> None:
    """The review was recorded before the executor's verdict was built (background
    delivery): the verdict asks the question, and does not say a review is required."""
    text = verdict_on(project, policy="never", files=5, reviewed=True)
    assert "\nask: " in text and "A review is required" not in text


def test_a_verdict_without_a_record_still_tells_where_the_step_is(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    out = returned(EXECUTOR, "never-stopped")
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "still in progress" in text and relaunch_instruction(1) in text


def test_other_agents_get_no_verdict(project: Path) -> None:
    assert returned("Explore", "x") is None
    assert verdicts.on_agent_return(HookInput("agent-return", {})) is None
