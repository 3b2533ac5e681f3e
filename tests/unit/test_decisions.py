"""A person's decisions reach the store only from what the model cannot produce: the
prompt the user typed (UserPromptSubmit) and the user's answer to maker's approval
question (PostToolUse on AskUserQuestion). The model cannot answer for the user, nor
write maker's files with its own tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import handoff, linear
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approval_question, read_policy
from maker.executor.state.lifecycle import reset_step, start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    for var in ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"):
        monkeypatch.setenv(var, "")
    s = linear(tmp_path, 2, policy="never")
    start_step(s, 1, session_id="sess-1")
    accept_handoff(s, handoff(1))
    assert s.load().get(1).status == "awaiting-approval"
    return s


def fire(event: str, name: str, **fields: Any) -> dict[str, Any] | None:
    data = {"session_id": "sess-1", "cwd": str(Path.cwd()), "hook_event_name": name,
            "transcript_path": "/nonexistent", **fields}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else None


def told(out: dict[str, Any] | None) -> str:
    assert out is not None
    return str(out["hookSpecificOutput"]["additionalContext"])


def typed(prompt: str) -> str:
    return told(fire("user-prompt-submit", "UserPromptSubmit", prompt=prompt))


def test_the_user_approves_by_typing_the_command(store: PlanStore) -> None:
    assert "the user approved step 1" in typed("/maker:approve 1")
    record = store.load().get(1)
    assert record.status == "complete"
    assert record.meta["approved_by"] == "user (typed /maker:approve)"


def test_the_user_rejects_by_typing_with_notes_kept_verbatim(store: PlanStore) -> None:
    notes = "Use the cache; don't `rm -rf /` $(whoami) 'quoted'\nsecond line"
    said = typed(f"/maker:reject 1 {notes}")
    # (With notes, the step runs again at once: seed 004's revision loop,
    # docs/architecture.md#the-seeds.)
    assert "sent step 1 back with the notes" in said and "Execute maker step 1." in said
    record = store.load().get(1)
    assert record.status == "in-progress"
    assert record.meta["revision_notes"] == [notes]
    assert record.meta["rejected_by"] == "user (typed /maker:reject)"


@pytest.mark.parametrize(("prompt", "fragment"), [
    ("/maker:approve", "needs a step number first"),
    ("/maker:approve two", "needs a step number first"),
    ("/maker:approve 2", "step 2 is pending and is not awaiting approval"),
    ("/maker:approve 9", "the plan has no step 9"),
])
def test_a_typed_decision_that_cannot_be_carried_out_says_why(
        store: PlanStore, prompt: str, fragment: str) -> None:
    out = typed(prompt)
    assert "was not recorded" in out or "nothing was recorded" in out
    assert fragment in out
    assert store.load().get(1).status == "awaiting-approval"


def test_the_user_sets_the_policy_by_typing(store: PlanStore) -> None:
    assert "approval policy set to auto" in typed("/maker:policy auto")
    policy = read_policy(store)
    assert (policy.name, policy.set_by) == ("auto", "user (typed /maker:policy)")
    assert "is auto" in typed("/maker:policy")
    assert "'sure' is not an approval policy" in typed("/maker:policy sure")


def test_other_prompts_decide_nothing(store: PlanStore) -> None:
    assert fire("user-prompt-submit", "UserPromptSubmit", prompt="approve step 1") is None
    assert fire("user-prompt-submit", "UserPromptSubmit",
                prompt="please run /maker:approve 1") is None
    assert store.load().get(1).status == "awaiting-approval"


def answered(answer: str, n: int = 1) -> str:
    question = approval_question(n, "Step number 1")
    text = question["questions"][0]["question"]
    return told(fire("post-tool-use", "PostToolUse", tool_name="AskUserQuestion",
                     tool_input=question, tool_response={**question,
                                                         "answers": {text: answer}}))


def test_the_users_answer_approves(store: PlanStore) -> None:
    assert "the user approved step 1" in answered("Approve step 1")
    record = store.load().get(1)
    assert (record.status, record.meta["approved_by"]) == ("complete",
                                                           "user (AskUserQuestion)")


def test_the_users_answer_rejects_with_their_words_as_notes(store: PlanStore) -> None:
    answered("Keep the old API; add a deprecation warning")
    record = store.load().get(1)
    assert record.status == "in-progress"  # it runs again, with the notes in its brief
    assert record.meta["rejected_by"] == "user (AskUserQuestion)"
    assert record.meta["revision_notes"] == ["Keep the old API; add a deprecation warning"]


def test_a_question_that_is_not_makers_decides_nothing(store: PlanStore) -> None:
    question = {"questions": [{"question": "Approve step 1?", "header": "x",
                               "options": [{"label": "Approve step 1"}]}]}
    out = fire("post-tool-use", "PostToolUse", tool_name="AskUserQuestion",
               tool_input=question,
               tool_response={"answers": {"Approve step 1?": "Approve step 1"}})
    assert out is None
    assert store.load().get(1).status == "awaiting-approval"


def test_the_model_cannot_answer_makers_question_itself(store: PlanStore) -> None:
    question = approval_question(1, "Step number 1")
    text = question["questions"][0]["question"]
    out = fire("pre-tool-use", "PreToolUse", tool_name="AskUserQuestion",
               tool_input={**question, "answers": {text: "Approve step 1"}})
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "the user's to give" in out["hookSpecificOutput"]["permissionDecisionReason"]
    assert fire("pre-tool-use", "PreToolUse", tool_name="AskUserQuestion",
                tool_input=question) is None


def test_an_out_of_date_question_is_not_asked(store: PlanStore) -> None:
    """A `Next: ask` the client re-sends after an interrupted turn can come after the
    newest one: maker's hook refuses the question once its step no longer awaits it, so
    the newest `Next:` wins."""
    question = approval_question(1, "Step number 1")
    assert fire("pre-tool-use", "PreToolUse", tool_name="AskUserQuestion",
                tool_input=question) is None  # (step 1 awaits approval: asked)
    answered("Approve step 1")
    out = fire("pre-tool-use", "PreToolUse", tool_name="AskUserQuestion", tool_input=question)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    why = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "out of date: step 1 is complete now" in why and "newest `Next:`" in why
    reset_step(store, 1)  # (a person's /maker:reset 1, say)
    out = fire("pre-tool-use", "PreToolUse", tool_name="AskUserQuestion", tool_input=question)
    assert out is not None and "step 1 is pending now" in \
        out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
@pytest.mark.parametrize("target", ["plans/steps/01-step-number-1.md",
                                    "plans/.maker/policy.json", "./plans/../plans/NOTES.md"])
def test_the_main_agent_cannot_write_makers_files(store: PlanStore, tool: str,
                                                  target: str) -> None:
    out = fire("pre-tool-use", "PreToolUse", tool_name=tool,
               tool_input={"file_path": target, "content": "status: complete"})
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert fire("pre-tool-use", "PreToolUse", tool_name=tool,
                tool_input={"file_path": "src/app.py", "content": "x"}) is None
