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

from typing import TYPE_CHECKING, Any

from maker.executor.state.attempts import bump, clear, keep_answer, refuse_handoff
from maker.hooks import records
from maker.hooks.bound import late_delivery
from maker.hooks.common import (
    EXECUTOR_SUFFIX,
    PLANNER_SUFFIX,
    REVIEWER_SUFFIX,
    executor_marker,
    final_text,
    reviewed_step,
    running_step,
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

if TYPE_CHECKING:
    pass

__all__ = ["is_maker_agent", "on_handback", "on_subagent_stop"]

# A planner's exploration can take a while; an older /maker:plan is another request.
_PLANNING_S = 4 * 3600
_AGAIN = ("deliver it again, whole and corrected, nothing else: as your final message, or "
          "as SubagentHandback's `message` if you have that tool")


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
    out = _executor_stop(hook, text)
    if records.delivered(hook.agent_id):  # its final answer: a background launch ends
        from maker.executor.votes.runs import end_agent

        store = store_for(hook)
        if store.exists():
            end_agent(store, hook.agent_id)
    return out


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

    store = store_for(hook)
    key = hook.agent_id or hook.session_id
    plan, problems = lint_text(text)
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
                       "step.")
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
        f"written. Fix every problem below in the plan YAML, then {_AGAIN}:\n"
        f"{_problem_list(problems)}")


def _executor_stop(hook: HookInput, text: str) -> Output:
    from maker.errors import HandoffRejectedError, PlanFileError
    from maker.executor.acceptance.accept import accept_handoff
    from maker.executor.rules.step_rules import settings

    store = store_for(hook)
    active = running_step(store)
    if not active:
        records.record(hook, "no-step")
        return message("maker: the step executor stopped, but no step is in progress, so "
                       "its answer was not recorded. Start a step with `maker step start`.")

    mine, why = executor_marker(hook, store, _named(text, active))
    if mine is None:
        records.record(hook, "no-step")
        return message(why)
    active = mine  # (a wave's executor: its own step)
    step = int(active["step"])
    from maker.store.active import run_of

    bound = records.bind_run(hook.agent_id, hook.agent_type, run_of(active))
    if bound is not None and bound != run_of(active):
        records.record(hook, "stale", step=bound[0])
        return message(f"maker: this step executor was launched for an earlier run of step "
                       f"{bound[0]}, which is over; its answer was not recorded.")
    deviated = _deviation_stop(hook, store, step)
    if deviated is not None:
        return deviated
    key = f"step{step}-{active.get('started_at', '')}"
    from maker.hooks.voting import ballot_stop

    voted = ballot_stop(hook, store, step, text)  # a voting step: a ballot, not accepted
    if voted is not None:
        return voted
    landing = _land_first(hook, store, step, text)  # (a worktree step's change, first)
    if landing is not None:
        return landing
    try:  # a person's bounds (gate_attempts, max_fix_attempts): plans/settings.yaml
        gate_bound = settings(store.root).gate_attempts
        result = accept_handoff(store, text)
    except PlanFileError as exc:  # (a broken settings file, say): said, never a wedge
        kept = keep_answer(store, step, text)
        records.record(hook, "unchecked", step=step, error=str(exc)[:500])
        return message(f"maker: the handoff for step {step} was not checked: {exc}\nIts "
                       f"answer is kept in {kept}. Fix that file, then run /maker:step "
                       f"{step} again.")
    except HandoffRejectedError as exc:
        count, reasons = refuse_handoff(store, step, key, text,
                                        [str(p) for p in exc.problems], gate_bound)
        if reasons is not None:  # the bound is spent: the step failed
            records.record(hook, "failed", step=step, attempts=count, reasons=reasons)
            return message(f"maker: step {step} FAILED: its handoff was rejected {count} "
                           f"times. Reasons:\n{_problem_list(reasons)}")
        records.record(hook, "rejected", final=False, step=step, attempts=count,
                        problems=[str(p) for p in exc.problems])
        return block(
            f"maker rejected your handoff for step {step} (attempt {count} of "
            f"{gate_bound}). Fix every problem below in the handoff YAML, then {_AGAIN}:\n"
            f"{_problem_list(exc.problems)}")
    clear(store, "handoff", key)
    records.record(hook, "accepted", step=step, status=result.status)
    return message(f"maker: handoff for step {step} accepted ({result.status}).")




def _land_first(hook: HookInput, store: Any, step: int, text: str) -> Output | None:
    """A worktree step's complete handoff: its change lands before the gate, within the
    time this hook may run (``maker.executor.parallel.land_gate``); what the executor is told
    when it did not, or None."""
    from maker.errors import MakerError
    from maker.executor.parallel.land_gate import land_before_accept

    wait_s = 18.0 if hook.text("hook_event_name") == "PreToolUse" else 90.0
    try:
        said = land_before_accept(store, step, text, wait_s)
    except MakerError as exc:
        said = (f"maker: step {step}'s change could not land: {exc}. Run `maker land "
                f"{step}` to see why, then deliver your handoff again.")
    if said is None:
        return None
    records.record(hook, "not-landed", final=False, step=step)
    return block(said)


def _named(text: str, active: dict[str, Any]) -> dict[str, Any]:
    """The marker, for an executor of a wave that never said which step it works for:
    as the step its handoff names reads (any other: unchanged)."""
    from maker.store.active import member, wave_of

    if not wave_of(active):
        return active

    for line in text.splitlines()[:40]:
        if line.startswith("step:") and line[5:].strip().isdigit():
            return member(active, int(line[5:].strip())) or active
    return active


def _deviation_stop(hook: HookInput, store: Any, step: int) -> Output | None:
    """The executor stopped on a major deviation (``maker orient N major``): nothing was
    edited, and a person decides, unless ``STEP_AUTOAPPROVE=1`` is set in maker's own
    environment (the person's, as the client passes it to its hooks; never a command
    the model runs): then the revised step is approved and the executor goes on with
    it. None when no deviation is pending (the usual handoff gate follows)."""
    from maker.errors import MakerError
    from maker.executor.protocol.orient import autoapproved, decide_deviation, pending_deviation

    try:
        dev = pending_deviation(store.load_step(step))
    except MakerError:
        return None
    if dev is None:
        return None
    if autoapproved():
        decide_deviation(store, step, True, "STEP_AUTOAPPROVE=1 (a person's setting)")
        return block(f"maker: STEP_AUTOAPPROVE=1 (set by a person for this session) approved "
                     f"the revised step {step}. Go on with it now: do the step as revised "
                     f"({str(dev.get('revised_task'))[:500]}), verify, and answer with the "
                     "handoff.")
    records.record(hook, "deviation", step=step)
    return message(f"maker: step {step} deviates from the plan (a major deviation); it "
                   "awaits a person's decision before any edit.")
