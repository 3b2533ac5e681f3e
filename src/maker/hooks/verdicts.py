"""maker's verdict reaches the main agent, and one executor runs a step at a time.

A SubagentStop hook's ``reason`` reaches only the subagent, and its ``systemMessage``
only the user. So each SubagentStop handler records its outcome here (``record``),
keyed by the subagent's ``agent_id``, and when the Agent tool returns to the main
agent a PostToolUse hook (``on_agent_return``) reads it back (the tool response's
``agentId`` is that same id) and adds maker's verdict as ``additionalContext``: what
happened and why, what to tell the user, and the sentinel to end with.

The records live in the plugin's data dir, not under plans/: a rejected plan must
not create plans/ (whose presence wakes every later hook). Agent ids are unique.

PreToolUse on the Agent tool (``on_agent_launch``) refuses a background executor
(its SubagentStop, the gate, may never fire) and a second executor for a step whose
executor has not returned (``maker.executor.runs``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from maker.hooks.protocol import HookInput, Output, allow, context, deny_tool

__all__ = ["on_agent_launch", "on_agent_return", "record"]

_MAX_AGE_S = 24 * 3600
_SENTINELS = {"complete": "STEP_COMPLETE", "failed": "STEP_FAILED", "blocked": "STEP_BLOCKED"}


def _tool_input(hook: HookInput) -> dict[str, Any]:
    value = hook.raw.get("tool_input")
    return value if isinstance(value, dict) else {}


def _subagent(hook: HookInput) -> str:
    value = _tool_input(hook).get("subagent_type")
    return value if isinstance(value, str) else ""


def _verdict_path(agent_id: str) -> Path:
    from maker.core.paths import data_dir

    safe = "".join(c for c in agent_id if c.isalnum() or c in "-_")[:100] or "no-agent"
    return data_dir() / "verdicts" / f"{safe}.json"


def record(hook: HookInput, outcome: str, **facts: Any) -> None:
    """Record what maker did with this subagent's final message (SubagentStop)."""
    if not hook.agent_id:
        return
    from maker.store.atomic import atomic_write

    path = _verdict_path(hook.agent_id)
    data = {"agent_type": hook.agent_type, "outcome": outcome, "at": time.time(), **facts}
    atomic_write(path, json.dumps(data, ensure_ascii=False, default=str), durable=False)
    for old in path.parent.glob("*.json"):
        try:
            if old.stat().st_mtime < time.time() - _MAX_AGE_S:
                old.unlink()
        except OSError:
            pass


def _take(agent_id: str) -> dict[str, Any]:
    if not agent_id:
        return {}
    path = _verdict_path(agent_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(hook: HookInput) -> Any:
    from maker.core.paths import find_plans_dir
    from maker.store.plan_store import PlanStore

    return PlanStore(find_plans_dir(cwd=Path(hook.cwd) if hook.cwd else None))


# -- PreToolUse on the Agent tool --------------------------------------------------------


def on_agent_launch(hook: HookInput) -> Output:
    """Refuse a background executor, and a second executor while one runs the step."""
    if not _subagent(hook).endswith(":step-executor") or hook.agent_type:
        return allow()
    from maker.executor.runs import relaunch_instruction, start_launch

    store = _store(hook)
    active = store.read_active()
    step = active.get("step") if isinstance(active, dict) else None
    if not isinstance(step, int):
        return allow()
    if _tool_input(hook).get("run_in_background") is True:
        return deny_tool(f"maker: a step executor runs in the foreground, so that maker's "
                         f"gate sees its handoff: {relaunch_instruction(step)}.")
    refusal = start_launch(store, hook.text("tool_use_id"), hook.session_id,
                           hook.text("prompt_id"))
    return deny_tool(refusal) if refusal else allow()


# -- PostToolUse on the Agent tool: the verdict ------------------------------------------


def on_agent_return(hook: HookInput) -> Output:
    """Tell the main agent maker's verdict on the maker subagent that just returned."""
    agent = _subagent(hook)
    if not agent.startswith("maker:") or hook.agent_type:
        return allow()
    response = hook.raw.get("tool_response")
    response = response if isinstance(response, dict) else {}
    facts = _take(str(response.get("agentId") or ""))
    if agent.endswith(":planner"):
        text = _planner_verdict(facts)
    elif agent.endswith(":step-executor"):
        text = _executor_verdict(hook, facts)
    elif agent.endswith(":reviewer"):
        text = _reviewer_verdict(hook, facts)
    else:
        return allow()
    return context("PostToolUse", f"maker's verdict: {text}")


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


def _executor_verdict(hook: HookInput, facts: dict[str, Any]) -> str:
    from maker.executor.runs import end_launches, relaunch_instruction

    store = _store(hook)
    step = facts.get("step")
    if not isinstance(step, int):
        active = store.read_active()
        step = active.get("step") if isinstance(active, dict) else None
    if store.exists():
        end_launches(store, step if isinstance(step, int) else None,
                     hook.text("tool_use_id") or None)
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


def _reviewer_verdict(hook: HookInput, facts: dict[str, Any]) -> str:
    if facts.get("outcome") != "recorded" or not isinstance(facts.get("step"), int):
        return ("the reviewer returned, but its review was not recorded (no single step "
                "awaits approval). Tell the user; `maker status` shows the plan.")
    from maker.executor.outcome import outcome

    step = int(facts["step"])
    now = outcome(_store(hook), step)
    if facts.get("decided"):
        sentinel = "STEP_REJECTED" if str(facts["decided"]).startswith("rejected") \
            else now.get("sentinel") or _SENTINELS.get(now["status"]) or "STEP_BLOCKED"
        return (f"the review of step {step} is recorded (verdict: {facts.get('verdict')}), "
                f"and step {step} was {facts['decided']}. Show the user its findings, and "
                f"end your reply with the line {sentinel}.")
    return (f"the review of step {step} is recorded (verdict: {facts.get('verdict')}). "
            f"Show the user its findings. Next: {now['next']}.")
