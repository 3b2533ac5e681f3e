"""What each hook does, as plain functions over ``HookInput``.

- SubagentStop, planner: the final message is the plan YAML. Lint it; write plans/
  or block with every problem, at most ``MAX_ATTEMPTS`` times.
- SubagentStop, step executor: the final message is the handoff. Accept it through
  the gate or block with every problem; after ``MAX_ATTEMPTS`` rejected handoffs the
  step is recorded ``failed`` with the reasons and the agent may stop.
- Stop: while a step is in progress without an accepted handoff, block (bounded the
  same way; then the step is recorded ``failed``): ``maker.hooks.stop``.
- SubagentStop, reviewer: record its verdict for the step awaiting approval.
- PreToolUse: inside the step executor, deny what ``maker.tools.guard`` refuses (writes
  into plans/, Bash that would move the plan's state or touch maker's files) and tools
  outside the step's list; the planner's and the reviewer's Bash run read-only
  commands only.
- SessionStart: give the session the plan's state, so a resumed or compacted
  session knows where it is.
- UserPromptSubmit: save the raw text of a ``/maker:`` prompt before Claude Code
  expands the command (see ``maker.store.requests``); carry out the user's
  ``/maker:approve``, ``/maker:reject`` and ``/maker:policy`` (``maker.hooks.decisions``).
- PostToolUse, AskUserQuestion: record the user's answer to maker's approval question.

Bounds stay well under Claude Code's own cap of 8 consecutive blocks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.hooks import verdicts
from maker.hooks.attempts import MAX_ATTEMPTS, bump, clear
from maker.hooks.common import (
    EXECUTOR_SUFFIX,
    PLANNER_SUFFIX,
    REVIEWER_SUFFIX,
    final_text,
    running_step,
    store_for,
)
from maker.hooks.protocol import HookInput, Output, allow, block, context, message
from maker.hooks.stop import on_stop
from maker.hooks.tool_use import on_post_tool_use, on_pre_tool_use

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

# The core is imported inside each handler, for what that event needs: a hook runs on
# every prompt, tool call and stop, and most of them need little of it.

__all__ = ["HANDLERS", "MAX_ATTEMPTS"]

# A planner's exploration can take a while; an older /maker:plan is another request.
_PLANNING_S = 4 * 3600


def _problem_list(problems: list[Any]) -> str:
    return "\n".join(f"- {p}" for p in problems)


# -- SubagentStop -----------------------------------------------------------------

def on_subagent_stop(hook: HookInput) -> Output:
    agent = hook.agent_type
    if agent.endswith(PLANNER_SUFFIX):
        return _planner_stop(hook)
    if agent.endswith(EXECUTOR_SUFFIX):
        return _executor_stop(hook)
    if agent.endswith(REVIEWER_SUFFIX):
        return _reviewer_stop(hook)
    return allow()


def _reviewer_stop(hook: HookInput) -> Output:
    """Record the independent review for the step that awaits approval."""
    from maker.executor.approval import is_awaiting
    from maker.executor.review import record_review

    store = store_for(hook)
    if not store.exists():
        return allow()
    waiting = [r for r in store.load().steps if is_awaiting(r)]
    if len(waiting) != 1:
        verdicts.record(hook, "not-recorded")
        return message("maker: the reviewer finished, but no single step awaits approval, "
                       "so its review was not recorded.")
    review = record_review(store, waiting[0], final_text(hook))
    from maker.errors import MakerError
    from maker.executor.approval import apply_review

    try:
        decided = apply_review(store, waiting[0], review.approves)
    except MakerError as exc:
        decided = f"not decided by the policy: {exc}"
    verdicts.record(hook, "recorded", step=review.step, verdict=review.verdict,
                    decided=decided)
    return message(f"maker: review of step {review.step} recorded (verdict: {review.verdict})"
                   + (f"; step {review.step} {decided}." if decided else "."))


def _planner_stop(hook: HookInput) -> Output:
    from maker.planner.linter import lint_text
    from maker.store.requests import load_request

    store = store_for(hook)
    key = hook.agent_id or hook.session_id
    plan, problems = lint_text(final_text(hook))
    if plan is not None and not problems:
        # The user's exact words, as saved before the command expanded; the
        # planner's echo of them is only the fallback.
        task = load_request(hook.session_id, "plan", max_age_s=_PLANNING_S) or plan.task
        from maker.errors import PlanExistsError

        before = set(store.archived()) if store.exists() else set()
        try:
            stored = store.write_plan(plan, task)
        except PlanExistsError as exc:
            verdicts.record(hook, "refused", reason=str(exc))
            return message(f"maker: the plan is valid but was not written: {exc}")
        clear(store, "planner", key)
        archived = sorted(set(store.archived()) - before)
        verdicts.record(hook, "written", root=str(store.root), steps=len(stored.steps),
                        archived=str(archived[-1]) if archived else None)
        kept = f"; the previous plan is archived in {archived[-1]}/" if archived else ""
        return message(f"maker: plan written to {store.root} ({len(stored.steps)} steps"
                       f"{kept}). Run /maker:status to see it, /maker:step to run the first "
                       "step.")
    count = bump(store, "planner", key)
    verdicts.record(hook, "rejected", attempts=count, problems=[str(p) for p in problems])
    if count >= MAX_ATTEMPTS:
        clear(store, "planner", key)
        return message(f"maker: the planner's answer was rejected {count} times; no plan "
                       f"was written. Last problems:\n{_problem_list(problems)}")
    return block(
        f"maker rejected the plan (attempt {count} of {MAX_ATTEMPTS}); nothing was "
        f"written. Fix every problem below and answer again with the whole corrected "
        f"plan YAML as your final message, nothing else:\n{_problem_list(problems)}")


def _keep_answer(store: PlanStore, step: int, text: str) -> Path:
    """Keep a refused final message, so that nothing the executor wrote is lost."""
    from maker.core.clock import file_stamp
    from maker.store.atomic import atomic_write

    stamp = file_stamp()
    path = store.state_dir / "refused" / f"step-{step:02d}-{stamp}.txt"
    atomic_write(path, text, durable=False)
    return path


def _executor_stop(hook: HookInput) -> Output:
    from maker.errors import HandoffRejectedError
    from maker.executor.accept import accept_handoff
    from maker.executor.lifecycle import fail_step

    store = store_for(hook)
    active = running_step(store)
    if not active:
        verdicts.record(hook, "no-step")
        return message("maker: the step executor stopped, but no step is in progress, so "
                       "its answer was not recorded. Start a step with `maker step start`.")
    step = int(active["step"])
    key = f"step{step}-{active.get('started_at', '')}"
    text = final_text(hook)
    from maker.hooks.voting import ballot_stop

    voted = ballot_stop(hook, store, step, text)  # a voting step: a ballot, not accepted
    if voted is not None:
        return voted
    try:
        result = accept_handoff(store, text)
    except HandoffRejectedError as exc:
        kept = _keep_answer(store, step, text)
        count = bump(store, "handoff", key)
        if count >= MAX_ATTEMPTS:
            reasons = [str(p) for p in exc.problems]
            fail_step(store, step, [f"handoff rejected {count} times (the last answer is "
                                    f"kept in {kept})", *reasons])
            clear(store, "handoff", key)
            verdicts.record(hook, "failed", step=step, attempts=count, reasons=reasons)
            return message(f"maker: step {step} FAILED: its handoff was rejected {count} "
                           f"times. Reasons:\n{_problem_list(reasons)}")
        verdicts.record(hook, "rejected", step=step, attempts=count,
                        problems=[str(p) for p in exc.problems])
        return block(
            f"maker rejected your handoff for step {step} (attempt {count} of "
            f"{MAX_ATTEMPTS}). Fix every problem below, then answer again with the "
            f"whole corrected handoff YAML as your final message, nothing else:\n"
            f"{_problem_list(exc.problems)}")
    clear(store, "handoff", key)
    verdicts.record(hook, "accepted", step=step, status=result.status)
    return message(f"maker: handoff for step {step} accepted ({result.status}).")


# -- UserPromptSubmit ---------------------------------------------------------------

def on_user_prompt_submit(hook: HookInput) -> Output:
    from maker.store.requests import parse_command, save_request

    save_request(hook.session_id, hook.text("prompt"), prompt_id=hook.text("prompt_id"),
                 transcript_path=hook.text("transcript_path"))
    parsed = parse_command(hook.text("prompt"))
    from maker.hooks.decisions import DECISION_COMMANDS

    if parsed is None or parsed[0] not in DECISION_COMMANDS:
        return allow()
    from maker.hooks.decisions import prompt_decision

    store = store_for(hook)
    if not store.exists():
        return context("UserPromptSubmit", "maker: there is no plan here, so there is "
                       "nothing to approve, reject or set a policy for.")
    return context("UserPromptSubmit", prompt_decision(store, *parsed))


# -- SessionStart -----------------------------------------------------------------

def on_session_start(hook: HookInput) -> Output:
    store = store_for(hook)  # (scripts/hook exports MAKER_SESSION_ID for the Bash tool)
    if not store.exists():
        return allow()
    if hook.text("source") in ("startup", "resume"):
        # This session's process is new: the executors it launched before died with it.
        from maker.executor.runs import forget_session_launches

        forget_session_launches(store, hook.session_id)
    from maker.executor.status_view import status_summary

    return context("SessionStart", status_summary(store))


HANDLERS = {
    "subagent-stop": on_subagent_stop,
    "stop": on_stop,
    "pre-tool-use": on_pre_tool_use,
    "session-start": on_session_start,
    "user-prompt-submit": on_user_prompt_submit,
    "post-tool-use": on_post_tool_use,
    "agent-launch": verdicts.on_agent_launch,
    "agent-return": verdicts.on_agent_return,
}
