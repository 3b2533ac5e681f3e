"""maker's verdict reaches the main agent, and one executor runs a step at a time.

A SubagentStop hook's ``reason`` reaches only the subagent, and its ``systemMessage``
only the user. So each SubagentStop handler records its outcome here (``record``),
keyed by the subagent's ``agent_id``, and the main agent is told maker's verdict
(``additionalContext``: what happened and why, what to tell the user, the sentinel to
end with) when the subagent's work reaches it:

- in the foreground (``claude -p``, the SDK, fork mode off), when the Agent tool
  returns: PostToolUse on it (``on_agent_return``; the response's ``agentId`` is the
  same id);
- in the background (an interactive session: every subagent), when the client starts
  the main agent's next turn with the subagent's notification (``<task-notification>``
  or ``<agent-message from=…>``): UserPromptSubmit (``maker.hooks.notifications``). The Agent call
  itself returned at launch; its PostToolUse says only that the subagent runs
  (``status: async_launched``), never a verdict on unfinished work.

The records themselves (and "gated once") are ``maker.hooks.records``.

PreToolUse on the Agent tool (``on_agent_launch``) refuses a second executor for a
step whose executor has not returned (``maker.executor.runs``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from maker.hooks.common import store_for
from maker.hooks.protocol import HookInput, Output, allow, context, deny_tool
from maker.hooks.records import bind_run, delivered, read_record, run_of, take_record, write

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["on_agent_launch", "on_agent_return", "verdict_text"]

_SENTINELS = {"complete": "STEP_COMPLETE", "failed": "STEP_FAILED", "blocked": "STEP_BLOCKED"}


def _tool_input(hook: HookInput) -> dict[str, Any]:
    value = hook.raw.get("tool_input")
    return value if isinstance(value, dict) else {}


def _subagent(hook: HookInput) -> str:
    value = _tool_input(hook).get("subagent_type")
    return value if isinstance(value, str) else ""


# -- PreToolUse on the Agent tool --------------------------------------------------------


def on_agent_launch(hook: HookInput) -> Output:
    """Refuse a second executor while one runs the step (in the foreground or not)."""
    if not _subagent(hook).endswith(":step-executor") or hook.agent_type:
        return allow()
    from maker.executor.runs import start_launch

    store = store_for(hook)
    active = store.read_active()
    step = active.get("step") if isinstance(active, dict) else None
    if not isinstance(step, int):
        return allow()
    refusal = start_launch(store, hook.text("tool_use_id"), hook.session_id,
                           hook.text("prompt_id"))
    return deny_tool(refusal) if refusal else allow()


# -- PostToolUse on the Agent tool: the verdict, or that it runs ---------------------------


def on_agent_return(hook: HookInput) -> Output:
    """Tell the main agent maker's verdict on the maker subagent that just returned; or,
    for one launched in the background, that it runs and the verdict comes later."""
    agent = _subagent(hook)
    if not agent.startswith("maker:") or hook.agent_type:
        return allow()
    response = hook.raw.get("tool_response")
    response = response if isinstance(response, dict) else {}
    agent_id = str(response.get("agentId") or "")
    if response.get("status") == "async_launched" or response.get("isAsync") is True:
        return context("PostToolUse", _launched(hook, agent, agent_id))
    text = verdict_text(hook, agent, take_record(agent_id), hook.text("tool_use_id"))
    return context("PostToolUse", f"maker's verdict: {text}") if text else allow()


def verdict_text(hook: HookInput, agent: str, facts: dict[str, Any], launch_id: str) -> str:
    """maker's verdict on maker subagent ``agent`` from its record's ``facts`` (launch
    ``launch_id``: its Agent call, ended by this verdict in the foreground)."""
    if agent.endswith(":planner"):
        return _planner_verdict(facts)
    if agent.endswith(":step-executor"):
        return _executor_verdict(store_for(hook), facts, launch_id or None)
    if agent.endswith(":reviewer"):
        return _reviewer_verdict(store_for(hook), facts)
    return ""


def _launched(hook: HookInput, agent: str, agent_id: str) -> str:
    """A launch the client runs in the background: what is true now."""
    launch_id = hook.text("tool_use_id")
    if agent_id:
        data = read_record(agent_id)
        if not data:  # (its deliverable may be recorded already: a fast subagent)
            data = {"agent_type": agent, "outcome": "running", "final": False,
                    "at": time.time()}
        write(agent_id, {**data, "launch_id": launch_id})
    what = {"maker:planner": "The planner", "maker:reviewer": "The reviewer"}.get(
        agent, "The step executor")
    if agent.endswith(":step-executor"):
        store = store_for(hook)
        if store.exists():
            from maker.executor.runs import end_agent, launched_in_background

            step = launched_in_background(store, launch_id, agent_id)
            if step is not None:
                what = f"The step executor for step {step}"
                active = store.read_active()
                if isinstance(active, dict):
                    bind_run(agent_id, agent, run_of(active))
            if delivered(agent_id):
                end_agent(store, agent_id)
    return (f"maker: {what} was launched and runs in the background (agent {agent_id or '?'}). "
            "Nothing is decided yet: maker has not seen its answer, so do not report, "
            "guess or act on a result. End your turn now, telling the user it runs in the "
            "background and that they can keep working (or do other work that does not "
            "touch this step); maker's verdict arrives with the notification when it "
            "returns, and says what to do next.")


def _problems(items: Any) -> str:
    listed = [str(p) for p in items] if isinstance(items, list) else []
    return "\n".join(f"- {p}" for p in listed) or "- (none recorded)"


def _planner_verdict(facts: dict[str, Any]) -> str:
    outcome = facts.get("outcome")
    if outcome == "written":
        archived = facts.get("archived")
        where = (f" The previous plan was archived, not lost: it is in {archived}/."
                 if archived else "")
        return (f"plan written to {facts.get('root')} ({facts.get('steps')} steps).{where} "
                "Run `maker status` and show the user the plan: its steps, and what runs "
                "first (/maker:step).")
    if outcome == "refused":
        return (f"the planner's plan is valid but was NOT written: {facts.get('reason')} "
                "The plan under plans/ is still the old one: do not show it as the new plan. "
                "Tell the user that no new plan was saved, why, and what to do first.")
    if outcome == "rejected":
        return (f"NO plan was written: maker rejected the planner's answer "
                f"{facts.get('attempts')} times. maker's problems with its last answer:\n"
                f"{_problems(facts.get('problems'))}\nTell the user that no plan was written "
                "and quote these problems.")
    return ("the planner returned, but maker recorded no plan from it (its answer did not "
            "reach maker's SubagentStop hook), so no plan was written by this run. Tell the "
            "user, and run `maker status` to show what plans/ holds now.")


def _executor_verdict(store: PlanStore, facts: dict[str, Any], launch_id: str | None) -> str:
    from maker.executor.instructions import relaunch_instruction
    from maker.executor.runs import end_launches

    step = facts.get("step")
    if not isinstance(step, int):
        active = store.read_active()
        step = active.get("step") if isinstance(active, dict) else None
    if store.exists():
        if launch_id:
            end_launches(store, step if isinstance(step, int) else None, launch_id)
    if facts.get("outcome") == "stale":
        return (f"the step executor returned, but it was launched for an earlier run of "
                f"step {step} (it ended, was begun again or taken over), so its answer was "
                "not recorded. Tell the user; `maker status` shows the plan. End your reply "
                "with the line STEP_BLOCKED.")
    if facts.get("outcome") == "no-step" or not isinstance(step, int):
        return ("the step executor returned, but no step was in progress, so its answer was "
                "not recorded. Tell the user; `maker status` shows the plan. End your reply "
                "with the line STEP_BLOCKED.")
    from maker.executor.outcome import outcome

    now = outcome(store, step)
    head = f"step {step} ({now['title']})"
    if facts.get("outcome") == "ballot":
        from maker.hooks.voting import ballot_verdict

        said, whole = ballot_verdict(store, step, facts)
        if whole:
            return f"{head}: {said}"
        head, now = f"{head}, {said}", outcome(store, step)  # as the vote left it
    if facts.get("outcome") == "failed":
        return (f"{head} FAILED: maker rejected its handoff {facts.get('attempts')} times. "
                f"Reasons:\n{_problems(facts.get('reasons'))}\nTell the user that the step "
                "failed and why; `maker step reset "
                f"{step}` puts it back to try again. End your reply with the line STEP_FAILED.")
    if now["status"] == "in-progress":
        why = (f" maker's problems with its last answer:\n{_problems(facts.get('problems'))}\n"
               if facts.get("outcome") == "rejected" else " ")
        if facts.get("outcome") == "gone":
            why = (f" The client reports it {facts.get('status')}: it handed nothing off, and "
                   "the working tree may hold part of its work. ")
        return (f"{head}: the executor returned without an accepted handoff, so the step is "
                f"still in progress.{why}Next: {relaunch_instruction(step)}.")
    said = f"handoff accepted; status: {now['status']}."
    if now["summary"]:
        said += f" Summary: {now['summary']}"
    if now["reasons"]:
        said += "\nReasons:\n" + _problems(now["reasons"])
    sentinel = now.get("sentinel") or _SENTINELS.get(now["status"])
    if now["status"] == "awaiting-approval":
        review = (f"\nA review is required ({len(now['files_changed'])} files changed): "
                  "launch maker:reviewer with the handoff before asking for approval."
                  if now["review_required"] else "")
        return f"{head}: {said}{review}\nNext: {now['next']}."
    tell = {"complete": "Tell the user what the step did (the summary).",
            "failed": "Tell the user that the step failed, and why.",
            "blocked": "Tell the user what blocks the step."}.get(now["status"],
                                                                  "Tell the user.")
    return f"{head}: {said}\n{tell} End your reply with the line {sentinel or 'STEP_BLOCKED'}."


def _reviewer_verdict(store: PlanStore, facts: dict[str, Any]) -> str:
    if facts.get("outcome") != "recorded" or not isinstance(facts.get("step"), int):
        return ("the reviewer returned, but its review was not recorded (no single step "
                "awaits approval). Tell the user; `maker status` shows the plan.")
    from maker.executor.outcome import outcome

    step = int(facts["step"])
    now = outcome(store, step)
    if facts.get("decided"):
        sentinel = "STEP_REJECTED" if str(facts["decided"]).startswith("rejected") \
            else now.get("sentinel") or _SENTINELS.get(now["status"]) or "STEP_BLOCKED"
        return (f"the review of step {step} is recorded (verdict: {facts.get('verdict')}), "
                f"and step {step} was {facts['decided']}. Show the user its findings, and "
                f"end your reply with the line {sentinel}.")
    return (f"the review of step {step} is recorded (verdict: {facts.get('verdict')}). "
            f"Show the user its findings. Next: {now['next']}.")
