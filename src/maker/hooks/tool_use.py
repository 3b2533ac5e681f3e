"""The hooks around a tool call: what an agent may do (PreToolUse), and the user's
answer to maker's approval question (PostToolUse on AskUserQuestion).

- The step executor: the step's own tool list (``maker.tools.guards.permissions``) and
  ``maker.tools.guards.guard`` (no writes into plans/, no Bash that moves the plan's state or
  touches maker's files).
- The planner and the reviewer: their Bash runs read-only commands only.
- Any other agent, the main one included: no answering maker's approval question
  itself, no running a person's decisions, no writing maker's files.

maker's own plumbing is allowed outright (``maker.hooks.plumbing``), so that it costs a
person no prompt; everything else an agent does is asked as the person's permission
mode says.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from maker.hooks import records
from maker.hooks.bound import end_overrun
from maker.hooks.common import (
    EXECUTOR_SUFFIX,
    REVIEWER_SUFFIX,
    active_marker,
    bash_command,
    executor_marker,
    store_for,
)
from maker.hooks.deliver import is_maker_agent, on_handback
from maker.hooks.plumbing import (
    PINNED_WHY,
    finds_own_maker,
    pinned_plumbing,
    plumbing_allow,
    stretch_allow,
    vouched,
)
from maker.hooks.protocol import (
    HookInput,
    Output,
    allow,
    allow_tool,
    context,
    deny_tool,
    rewrite_tool,
)

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["HANDBACK", "on_post_tool_use", "on_pre_tool_use"]

HANDBACK = "SubagentHandback"
"""Auto mode's tool through which a subagent delivers its report (docs/internals.md, "How
it works")."""


# -- PreToolUse -------------------------------------------------------------------

def on_pre_tool_use(hook: HookInput) -> Output:
    """Any agent's tool call. For maker's own subagents a check that cannot be made
    refuses the call (their limits hold); for the others it lets it through, visibly
    (``run_hook``): a hook never wedges the user's own work."""
    if not is_maker_agent(hook.agent_type):
        return _any_agent_tool(hook)
    try:
        ended = _past_bound(hook)
    except Exception as exc:  # fail closed for maker's own subagents
        return _unchecked(exc)
    if ended is not None:
        return ended
    if hook.text("tool_name") == HANDBACK:  # its deliverable: gated, never tool-limited
        return on_handback(hook)
    if hook.text("tool_name") == "AskUserQuestion" and _makers_question(hook):
        return deny_tool("maker: maker's questions are the main agent's to ask and the "
                         "user's to answer; a subagent asks none of them. Hand off instead.")
    try:
        if hook.agent_type.endswith(EXECUTOR_SUFFIX):
            return _executor_tool(hook)
        return _read_only_tool(hook)
    except Exception as exc:  # fail closed for maker's own subagents
        return _unchecked(exc)


def _unchecked(exc: Exception) -> Output:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return deny_tool(f"maker could not check this tool call ({type(exc).__name__}: "
                     f"{first}), so it is refused. If it keeps happening, hand off with "
                     "status: blocked and this reason.")


def _past_bound(hook: HookInput) -> Output | None:
    """A maker subagent past ``subagent_timeout``: the call refused and the agent ended
    (a step executor's step recorded failed, if its run is still in progress); None
    within its bound."""
    from maker.executor.state.overrun import overran

    store = store_for(hook)
    bound = overran(store, records.first_seen(hook.agent_id, hook.agent_type))
    return end_overrun(hook.agent_id, hook.agent_type, store, bound) if bound else None


def _makers_question(hook: HookInput) -> bool:
    """Whether this AskUserQuestion call asks one of maker's questions (approval, a
    deviation, a blocked step)."""
    from maker.hooks.decisions import asks_makers_question

    return asks_makers_question(hook.raw.get("tool_input"))


def _executor_tool(hook: HookInput) -> Output:
    store = store_for(hook)
    if not store.state_dir.is_dir():  # (a step executor with no plan: its limits unknown)
        return deny_tool(f"maker: no plan is found for this step executor (looked in "
                         f"{store.root}), so its limits cannot be checked and this call is "
                         "refused. Hand off with status: blocked and this reason.")
    with store.lock():  # one consistent view of the marker and the step
        return _executor_check(hook, store)


def _executor_check(hook: HookInput, store: PlanStore) -> Output:
    from maker.errors import MakerError

    active = active_marker(store)
    if not active:
        if not store.exists():
            return deny_tool(f"maker: no plan is found for this step executor (looked in "
                             f"{store.root}); this call is refused. Hand off with status: "
                             "blocked and this reason.")
        # A step that failed, was reset or was finished while this executor ran: any
        # more work is dead work (and would cost the person a prompt for nothing).
        return deny_tool("maker: no step is in progress any more (it ended while you "
                         "worked: `maker status` in a shell shows why), so nothing more is "
                         "done for it. Stop now and hand off what you have.")

    mine, why = executor_marker(hook, store, active)
    if mine is None:
        return deny_tool(why)
    active = mine  # (a wave's executor: its own step)
    from maker.store.active import run_of

    bound = records.bind_run(hook.agent_id, hook.agent_type, run_of(active))
    if bound is not None and bound != run_of(active):
        return deny_tool(f"maker: you were launched for step {bound[0]}, whose run is over "
                         "(it ended, was begun again or taken over): nothing more is done "
                         "for it. Stop now.")
    try:
        record = store.load_step(int(active["step"]))
    except MakerError as exc:
        # Which tools the step allows is unknown: refusing keeps the step's limits, and
        # the executor can still hand off (blocked) with this reason.
        return deny_tool(f"maker cannot read the step in progress, so it cannot check this "
                         f"tool: {exc}. Hand off with status: blocked and this reason.")
    tool_input = hook.raw.get("tool_input")
    from maker.executor.protocol.limits import Limit, executor_limits
    from maker.store.workspace import worktree_of

    def plumbing(command: str) -> Limit | None:
        pinned = pinned_plumbing(command, record.number)
        if pinned is None:
            return None
        if vouched(pinned[1], hook.text("permission_mode")):
            return Limit(run=pinned[0], vouched=True, why=PINNED_WHY)
        # (asked as the mode says: as typed, unless a bare `maker` is not maker's own)
        return Limit() if finds_own_maker() else Limit(run=pinned[0])

    given = tool_input if isinstance(tool_input, dict) else {}
    limit = executor_limits(store, record, hook.text("tool_name"), given,
                            cwd=Path(hook.cwd or "."), workspace=worktree_of(store, record),
                            plumbing=plumbing)
    if limit.refusal:
        return deny_tool(limit.refusal)
    if limit.run is None:
        return allow()
    updated = {**given, "command": limit.run}
    if limit.vouched:
        return allow_tool(limit.why, updated_input=updated)
    return rewrite_tool(updated)


def _any_agent_tool(hook: HookInput) -> Output:
    """The main agent (and any agent not maker's) may not decide for the user: no
    answering maker's approval question itself, no running maker's decisions, no
    writing maker's files."""
    tool = hook.text("tool_name")
    if tool == "AskUserQuestion":
        from maker.hooks.decisions import prefilled_answer, stale_question

        reason = prefilled_answer(hook.raw.get("tool_input"))
        store = store_for(hook)
        if not reason and store.exists():
            reason = stale_question(store, hook.raw.get("tool_input"))
        return deny_tool(reason) if reason else allow()
    if tool == "Bash":
        stretch = stretch_allow(hook, bash_command(hook))
        if stretch:
            return stretch
        from maker.hooks.main_bash import main_bash

        return main_bash(hook)
    from maker.tools.guards.guard import WRITERS

    tool_input = hook.raw.get("tool_input")
    value = tool_input.get(WRITERS.get(tool, "")) if isinstance(tool_input, dict) else None
    if not isinstance(value, str) or not value:
        return allow()
    store = store_for(hook)
    written = Path(os.path.realpath(Path(hook.cwd or ".") / value))
    root = Path(os.path.realpath(store.root))
    if written == root or root in written.parents:
        return deny_tool(
            f"maker: {store.root} is maker's own record of the plan, written only by maker "
            "(its gate, and the user's decisions). Use the maker commands instead.")
    return allow()


def _read_only_tool(hook: HookInput) -> Output:
    """The planner and the reviewer look but never change anything: their Bash runs
    read-only commands (git as maker rewrites it) and, for the reviewer, maker's own
    verification (``maker.tools.guards.reader_bash``)."""
    if hook.text("tool_name") != "Bash":
        return allow()
    from maker.tools.guards.reader_bash import reader_bash

    command = bash_command(hook)
    pinned = plumbing_allow(hook, command)
    if pinned:
        return pinned
    reviewer = hook.agent_type.endswith(REVIEWER_SUFFIX)
    refusal, run = reader_bash(command, Path(hook.cwd or "."), may_verify=reviewer,
                               who="reviewer" if reviewer else "planner")
    return deny_tool(refusal) if refusal else _run_instead(hook, run)


def _run_instead(hook: HookInput, command: str | None) -> Output:
    """No opinion when ``command`` is None; else allowed, run as ``command``."""
    if command is None:
        return allow()
    tool_input = hook.raw.get("tool_input")
    return allow_tool("read-only git, run without the programs git's config names",
                      updated_input={**(tool_input if isinstance(tool_input, dict) else {}),
                                     "command": command})


# -- PostToolUse --------------------------------------------------------------------

def on_post_tool_use(hook: HookInput) -> Output:
    """The user's answer to maker's approval question (AskUserQuestion)."""
    if hook.text("tool_name") != "AskUserQuestion":
        return allow()
    if hook.agent_id or hook.agent_type:  # a subagent's question is never the user's word
        return allow()                    # on maker's gates (its PreToolUse refuses them)
    store = store_for(hook)
    if not store.exists():
        return allow()
    from maker.hooks.decisions import answer_decision

    prompt_id = hook.text("prompt_id")
    if not prompt_id:  # (the turn of the /maker:step that asked, as its hook saved it)
        from maker.store.requests import load_request_record

        saved = load_request_record(hook.session_id, "step", max_age_s=3600) or {}
        prompt_id = str(saved.get("prompt_id") or "")
    told = answer_decision(store, hook.raw.get("tool_input"), hook.raw.get("tool_response"),
                           hook.session_id, prompt_id)
    if not told:
        return allow()
    from maker.executor.state.run import live_run

    if live_run(store):
        from maker.hooks.wake import answered_in_run

        told = answered_in_run(hook, store, told, prompt_id)
    return context("PostToolUse", told)
