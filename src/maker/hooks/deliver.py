"""A subagent's deliverable, gated: the planner's plan, the step executor's handoff, the
reviewer's review, however the client carried it.

- SubagentStop (``on_subagent_stop``): the subagent's final message (from the input, or
  its transcript: ``maker.hooks.common.final_text``). A refusal blocks the subagent
  with every problem, so it corrects itself, within the bounds of
  ``maker.executor.rules.step_rules`` (the planner's: ``maker.planner.planner``).
- PreToolUse of SubagentHandback (``on_handback``): auto mode gives every subagent
  that tool and tells it that only what it sends there is delivered. Its ``message``
  is gated before it is delivered, and a refusal denies the call with every problem:
  after the call the subagent has ended, and a SubagentStop block would reach no one.

One deliverable is gated once (``records.delivered``): a later stop of the same
subagent (auto mode nudges one that answered in text to hand back too) changes nothing.
Each outcome is recorded for the main agent's verdict (``maker.hooks.verdicts``).
"""

from __future__ import annotations

import os
from typing import Any

from maker.executor.state.attempts import AGAIN, bump, clear
from maker.hooks import records
from maker.hooks.bound import late_delivery
from maker.hooks.common import (
    EXECUTOR_SUFFIX,
    PLANNER_SUFFIX,
    REVIEWER_SUFFIX,
    final_text,
    reviewed_step,
    store_for,
)
from maker.hooks.protocol import (
    HookInput,
    Output,
    allow,
    block,
    deny_tool,
    message,
    rewrite_tool,
)

__all__ = ["is_maker_agent", "on_handback", "on_subagent_stop"]

# A planner's exploration can take a while; an older /maker:plan is another request.
_PLANNING_S = 4 * 3600


def is_maker_agent(agent_type: str) -> bool:
    return agent_type.endswith((PLANNER_SUFFIX, EXECUTOR_SUFFIX, REVIEWER_SUFFIX))


def _problem_list(problems: list[Any]) -> str:
    return "\n".join(f"- {p}" for p in problems)


def on_subagent_stop(hook: HookInput) -> Output:
    if not is_maker_agent(hook.agent_type):
        return allow()
    return _deliver(hook, final_text(hook))


def on_handback(hook: HookInput) -> Output:
    """One of maker's subagents delivers through SubagentHandback: gate its message now."""
    tool_input = hook.raw.get("tool_input")
    text = tool_input.get("message") if isinstance(tool_input, dict) else None
    out = _deliver(hook, text if isinstance(text, str) else "")
    if out and out.get("decision") == "block":
        return deny_tool(str(out.get("reason")))
    gated = records.read_record(hook.agent_id)
    if not gated.get("final") or not isinstance(tool_input, dict):
        return out
    # Gated and stored: the main session gets a line naming it, never the whole of it.
    short = {**tool_input, "message": f"maker: {_stored(hook.agent_type, gated)}; maker's "
                                      "verdict says what follows."}
    # (no decision: the client still reviews the hand-back as its mode says)
    rewritten = rewrite_tool(short) or {}
    if out and "systemMessage" in out:
        rewritten["systemMessage"] = out["systemMessage"]
    return rewritten


def _stored(agent: str, gated: dict[str, Any]) -> str:
    """What became of a deliverable, in a few words (its hand-back's message)."""
    outcome = str(gated.get("outcome") or "")
    if agent.endswith(PLANNER_SUFFIX):
        return f"the plan: {outcome}"
    if agent.endswith(REVIEWER_SUFFIX):
        return f"the review of step {gated.get('step')}: {outcome}"
    return f"the handoff of step {gated.get('step')}: {outcome}, stored under plans/"


def _deliver(hook: HookInput, text: str) -> Output:
    with records.delivering():
        if records.delivered(hook.agent_id):
            # Its deliverable was gated already: through SubagentHandback, or at an
            # earlier stop (auto mode nudges one that answered in text to hand back too).
            return allow()
        return late_delivery(hook) or _gate(hook, text)


def _gate(hook: HookInput, text: str) -> Output:
    agent = hook.agent_type
    if agent.endswith(PLANNER_SUFFIX):
        return _planner_stop(hook, text)
    if agent.endswith(REVIEWER_SUFFIX):
        return _reviewer_stop(hook, text)
    return _executor_stop(hook, text)


def _reviewer_stop(hook: HookInput, text: str) -> Output:
    """Record the independent review for the step that awaits approval."""
    from maker.executor.acceptance.approval import is_awaiting
    from maker.executor.acceptance.review_loop import apply_review, refuse_review, take_review

    store = store_for(hook)
    if not store.exists():
        return allow()
    waiting = [r for r in store.load().steps if is_awaiting(r)]
    bound = records.read_record(hook.agent_id).get("review_step")  # (named at its launch)
    if not isinstance(bound, int):
        bound = reviewed_step(hook)  # (in the foreground: its prompt, in its transcript)
    if isinstance(bound, int):
        waiting = [r for r in waiting if r.number == bound]
        if not waiting:
            records.record(hook, "not-recorded", step=bound)
            return message(f"maker: the reviewer was launched for step {bound}, which no "
                           "longer awaits approval, so its review was not recorded.")
    if len(waiting) != 1:
        records.record(hook, "not-recorded")
        return message("maker: the reviewer finished, but no single step awaits approval, "
                       "so its review was not recorded.")
    refused = refuse_review(store, hook.agent_id or hook.session_id, text)
    if refused is not None:  # (its context fields: it answers again, nothing recorded)
        records.record(hook, "rejected", final=False, step=waiting[0].number,
                       review_step=waiting[0].number)  # (kept: the step it reviews)
        return block(f"{refused}\nDeliver it as your final message, or as "
                     "SubagentHandback's `message` if you have that tool.")
    review = take_review(store, waiting[0], text)
    from maker.errors import MakerError

    try:
        decided = apply_review(store, waiting[0], review, session_id=hook.session_id)
        kind, said = decided.kind, decided.text
    except MakerError as exc:
        kind, said = "person", f"not decided: {exc}"
    records.record(hook, "recorded", step=review.step, verdict=review.verdict,
                    decision=kind, decided=said)
    left_out = f" Its context fields were left out: {'; '.join(review.ignored)}" \
        if review.ignored else ""
    return message(f"maker: review of step {review.step} recorded (verdict: {review.verdict})"
                   f"; step {review.step}: {said}.{left_out}")


def _planner_stop(hook: HookInput, text: str) -> Output:
    from maker.planner.linter import lint_text
    from maker.store.requests import load_request
    from maker.verify.pytest_runs import code_vote_note, code_vote_problems

    store = store_for(hook)
    key = hook.agent_id or hook.session_id
    plan, problems = lint_text(text)
    if plan is not None and not problems:
        problems = code_vote_problems(plan.steps, store.project, dict(os.environ))
    if plan is not None and not problems:
        # The user's exact words, as saved before the command expanded; the
        # planner's echo of them is only the fallback.
        task = load_request(hook.session_id, "plan", max_age_s=_PLANNING_S) or plan.task
        from maker.errors import PlanExistsError

        before = set(store.archived()) if store.exists() else set()
        try:
            stored = store.write_plan(plan, task)
        except PlanExistsError as exc:
            records.record(hook, "refused", reason=str(exc))
            return message(f"maker: the plan is valid but was not written: {exc}")
        clear(store, "planner", key)
        archived = sorted(set(store.archived()) - before)
        records.record(hook, "written", root=str(store.root), steps=len(stored.steps),
                        archived=str(archived[-1]) if archived else None)
        kept = f"; the previous plan is archived in {archived[-1]}/" if archived else ""
        return message(f"maker: plan written to {store.root} ({len(stored.steps)} steps"
                       f"{kept}). Run /maker:status to see it, /maker:step to run the first "
                       f"step.{code_vote_note(plan.steps)}")
    from maker.planner.planner import DEFAULT_MAX_ATTEMPTS as bound

    count = bump(store, "planner", key)
    records.record(hook, "rejected", final=count >= bound, attempts=count,
                    problems=[str(p) for p in problems])
    if count >= bound:
        clear(store, "planner", key)
        return message(f"maker: the planner's answer was rejected {count} times; no plan "
                       f"was written. Last problems:\n{_problem_list(problems)}")
    return block(
        f"maker rejected the plan (attempt {count} of {bound}); nothing was "
        f"written. Fix every problem below in the plan YAML, then {AGAIN}:\n"
        f"{_problem_list(problems)}")


def _executor_stop(hook: HookInput, text: str) -> Output:
    """The step executor's answer: one call into the core (``arrive``), which does
    everything in order under one hold of the plan's lock; here only the record of its
    outcome (for maker's verdict) and the answer to the client."""
    from maker.executor.verdicts.arrival import arrive

    arrival = arrive(store_for(hook), text, _Arriving(hook))
    records.record(hook, arrival.outcome, final=arrival.final, **arrival.facts)
    return block(arrival.said) if arrival.again else message(arrival.said)


class _Arriving:
    """The step executor whose answer arrives, as the hook knows it (its record)."""

    def __init__(self, hook: HookInput) -> None:
        self.hook = hook
        self.agent_id = hook.agent_id
        # (a hand-back is gated within PreToolUse's time; a stop has longer)
        self.land_wait_s = 18.0 if hook.text("hook_event_name") == "PreToolUse" else 90.0

    def bound_run(self) -> list[Any] | None:
        bound = records.read_record(self.agent_id).get("run")
        return bound if isinstance(bound, list) and bound else None

    def bind(self, run: list[Any]) -> list[Any] | None:
        return records.bind_run(self.agent_id, self.hook.agent_type, run)
