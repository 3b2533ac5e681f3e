"""What each hook does, as plain functions over ``HookInput``.

- SubagentStop, and PreToolUse of SubagentHandback: a maker subagent's deliverable
  (plan, handoff, review) through maker's gates: ``maker.hooks.deliver``.
- Stop: while a step is in progress without an accepted handoff, block (bounded; then
  the step is recorded ``failed``), unless its executor runs in the background:
  ``maker.hooks.stop``.
- PreToolUse: inside the step executor, deny what ``maker.tools.guards.guard`` refuses (writes
  into plans/, Bash that would move the plan's state or touch maker's files) and tools
  outside the step's list; the planner's and the reviewer's Bash run read-only
  commands only; maker's own plumbing costs no prompt: ``maker.hooks.tool_use``.
- PreToolUse and PostToolUse on the Agent tool: one executor per step, and maker's
  verdict when a subagent returns (or that it runs in the background):
  ``maker.hooks.verdicts``.
- SessionStart: give the session the plan's state, so a resumed or compacted
  session knows where it is.
- UserPromptSubmit: maker's verdict on a background subagent whose notification starts
  this turn (``maker.hooks.verdicts``; a notification decides nothing); save the raw
  text of a ``/maker:`` prompt before Claude Code expands the command (see
  ``maker.store.requests``); carry out the user's ``/maker:approve``, ``/maker:reject``
  and ``/maker:policy`` (``maker.hooks.decisions``).
- PostToolUse, AskUserQuestion: record the user's answer to maker's approval question.

Bounds stay well under Claude Code's own cap of 8 consecutive blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.errors import MakerError
from maker.hooks import verdicts
from maker.hooks.bound import on_agent_bound, on_subagent_start
from maker.hooks.common import store_for
from maker.hooks.deliver import on_subagent_stop
from maker.hooks.protocol import HookInput, Output, allow, context
from maker.hooks.stop import on_stop
from maker.hooks.tool_use import on_post_tool_use, on_pre_tool_use
from maker.hooks.wake import is_wake, on_stretch_wake

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

# The core is imported inside each handler, for what that event needs: a hook runs on
# every prompt, tool call and stop, and most of them need little of it.

__all__ = ["HANDLERS"]

# -- UserPromptSubmit ---------------------------------------------------------------

def on_user_prompt_submit(hook: HookInput) -> Output:
    from maker.hooks.notifications import on_notification, parse_notification, stretch_ended

    notified = parse_notification(hook.text("prompt"))
    if notified is None and is_wake(hook.text("prompt")):
        # maker's own wake: its engine stopped. Never a person's decision either.
        return stretch_ended(hook, wake=True)
    if notified is not None:
        # A background subagent ended: maker's verdict on it, in the turn its
        # notification starts. Never a person's decision, whatever its text says.
        return on_notification(hook, *notified)
    from maker.store.requests import DECISION_COMMANDS, parse_command, save_request

    save_request(hook.session_id, hook.text("prompt"), prompt_id=hook.text("prompt_id"),
                 transcript_path=hook.text("transcript_path"))
    parsed = parse_command(hook.text("prompt"))
    if parsed is not None and parsed[0] not in DECISION_COMMANDS + ("run",):
        return _unseen(hook)
    if parsed is None or parsed[0] not in DECISION_COMMANDS:
        return allow()
    from maker.hooks.decisions import prompt_decision

    store = store_for(hook)
    if not store.exists():
        return context("UserPromptSubmit", "maker: there is no plan here, so there is "
                       "nothing to approve, reject or set a policy for.")
    told = prompt_decision(store, *parsed, hook.session_id, hook.text("prompt_id"))
    from maker.executor.state.run import live_run

    if parsed[0] in ("approve", "reject") and live_run(store):
        from maker.executor.loop.words import typed_in_run

        told = typed_in_run(store, told)
    return context("UserPromptSubmit", told)


def _unseen(hook: HookInput) -> Output:
    """A ``/maker:`` prompt while a run drives the plan: the verdicts that never reached
    the main agent (a lost notification), said with it."""
    store = store_for(hook)
    if not store.exists():
        return allow()
    from maker.executor.state.run import live_run

    if not live_run(store):
        return allow()
    from maker.executor.loop.words import unseen

    seen = unseen(store)
    if not seen:
        return allow()
    return context("UserPromptSubmit", "maker: since the last verdict you saw, in the run:\n"
                   + "\n".join(f"- {s}" for s in seen) + "\n`/maker:run` goes on from here.")


# -- SessionStart -----------------------------------------------------------------

def on_session_start(hook: HookInput) -> Output:
    store = store_for(hook)  # (scripts/hook exports MAKER_SESSION_ID for the Bash tool)
    if not store.exists():
        return allow()
    if hook.text("source") in ("startup", "resume"):
        # This session's process is new: the executors it launched before died with it.
        from maker.executor.votes.runs import forget_session_launches

        forget_session_launches(store, hook.session_id)
    from maker.executor.loop.status_view import status_summary

    said = status_summary(store)
    if hook.text("source") == "compact":
        said += _run_after_compaction(hook, store)
    out = context("SessionStart", said)
    weaker = _weaker_protection(store)
    return {**out, "systemMessage": weaker} if out and weaker else out


def _run_after_compaction(hook: HookInput, store: PlanStore) -> str:
    """After the client compacted this session: when a ``/maker:run`` of this session
    goes on, what the run's command said (it may be summarised away), and the run's one
    next action from ``plans/``; "" otherwise."""
    from maker.executor.state.run import live_run

    run = live_run(store)
    if not run or run.get("session_id") != hook.session_id:
        return ""
    from maker.executor.loop.next_action import loop_lock, next_action

    with loop_lock(store):
        action = next_action(store, hook.session_id, hook.text("prompt_id"))
    return ("\n\nThis session was compacted while maker's /maker:run goes on (run "
            f"{run.get('id')}). maker drives it: carry out each `Next:` line maker gives "
            "and nothing else (a `maker loop stretch` in the background; AskUserQuestion "
            "with the `ask:` line exactly; end the turn when told), and never decide for "
            "the user. Now:\n" + action.said)


def _weaker_protection(store: PlanStore) -> str:
    """The person's notice, once a session, when the executor's Bash is held by less
    than the kernel boundary; "" when it is."""
    from maker.store.settings import load_settings
    from maker.tools.box.boundary import weaker_notice

    try:
        said = weaker_notice(load_settings(store.root).boundary)
    except MakerError:
        return ""  # (the summary names the broken settings file)
    return f"maker: {said}." if said else ""


HANDLERS = {
    "subagent-stop": on_subagent_stop,
    "stop": on_stop,
    "pre-tool-use": on_pre_tool_use,
    "session-start": on_session_start,
    "user-prompt-submit": on_user_prompt_submit,
    "post-tool-use": on_post_tool_use,
    "agent-launch": verdicts.on_agent_launch,
    "agent-return": verdicts.on_agent_return,
    "stretch-wake": on_stretch_wake,
    "agent-bound": on_agent_bound,
    "subagent-start": on_subagent_start,
}
