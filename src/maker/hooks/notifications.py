"""A background subagent's notification: maker's verdict in the turn it starts.

In an interactive session the client runs every subagent in the background. When one
ends, the main agent gets a new turn whose text is a notification (docs/internals.md, "How
it works"; ``tests/e2e/test_claude_code_facts.py`` pins it), and the UserPromptSubmit
hooks see that text as the prompt:

- ``<task-notification><task-id>AGENT_ID</task-id>…<status>completed</status>…
  <result>its last answer</result>…``, or
- ``<agent-message from="AGENT_ID">[Subagent hand-back] …`` (auto mode's hand-back).

maker adds its verdict on that subagent (``maker.hooks.verdicts``) as the turn's
``additionalContext``, as PostToolUse does when a subagent returns in the foreground.
A notification is never a person's decision: whatever its text says, nothing is
approved, rejected or set here.
"""

from __future__ import annotations

import re
import time

from maker.hooks.common import store_for
from maker.hooks.protocol import HookInput, Output, allow, context
from maker.hooks.records import ended, read_record, take_record
from maker.hooks.verdicts import usage_of, verdict_text

__all__ = ["on_notification", "parse_notification", "stretch_ended"]

# A notification can reach UserPromptSubmit a moment before the subagent's own
# SubagentStop hook has recorded its deliverable: wait that long for it.
_SETTLE_S = 8.0

_TASK_ID = re.compile(r"\A\s*<task-notification>\s*<task-id>([A-Za-z0-9_-]{1,100})</task-id>")
# Only a hand-back ends the agent; any other message of a running agent is not its end.
# (The client may put a line of its own first, indented, as a report's lines are: a
# warning that no one reviewed the report. The report itself follows the frame.)
_AGENT_MESSAGE = re.compile(r'\A\s*<agent-message from="([A-Za-z0-9_-]{1,100})">\s*'
                            r'(?:  [^\n]{0,1000}\n){0,3}\[Subagent hand-back\]')
_STATUS = re.compile(r"<status>([a-z_]{1,40})</status>")


HANDED_BACK = "handed-back"
"""The status of an ``<agent-message>`` hand-back (a task-notification names its own)."""


def parse_notification(prompt: str) -> tuple[str, str] | None:
    """``(agent id, status)`` of a background subagent's notification, as the client
    puts it in the main agent's new turn; None for anything else. Only the head of
    the notification is read: its ``<result>`` is the subagent's text, never maker's
    facts (nor a person's words)."""
    head = prompt[:4000]
    m = _TASK_ID.match(head)
    if m:
        before = head.split("<result>", 1)[0]
        status = _STATUS.search(before)
        return m.group(1), status.group(1) if status else "completed"
    m = _AGENT_MESSAGE.match(head)
    if m:
        return m.group(1), HANDED_BACK
    return None


def on_notification(hook: HookInput, agent_id: str, status: str) -> Output:
    """maker's verdict on the background maker subagent this notification is about,
    in the turn it starts. It decides nothing: a notification is not a person."""
    data = read_record(agent_id)
    agent = str(data.get("agent_type") or "")
    if not agent.startswith("maker:"):
        return stretch_ended(hook)
    if data.get("told"):  # (its Agent call returned in the foreground; or a repeat)
        _usage(hook, data)  # (a hand-back's later notification: what the client counted)
        return context("UserPromptSubmit", f"maker: its verdict on the {agent} subagent "
                       f"(agent {agent_id}) was given already; nothing more to do "
                       "for this notification.")
    if status == HANDED_BACK and not data.get("final"):
        # maker gates a hand-back before it is delivered: one it has not gated is not
        # the agent's end (a running agent's message can say anything).
        return allow()
    deadline = time.monotonic() + _SETTLE_S
    while not data.get("final") and status == "completed" and time.monotonic() < deadline:
        time.sleep(0.1)
        data = read_record(agent_id)

    if status != HANDED_BACK:
        ended(agent_id)  # (the client says it ended: no wait on its bound goes on)
    store = store_for(hook)
    step = None
    if agent.endswith(":step-executor") and store.exists():
        from maker.executor.votes.runs import add_turn, end_agent

        step = end_agent(store, agent_id) if not data.get("final") else None
        active = store.read_active()
        if isinstance(active, dict) and isinstance(active.get("step"), int):
            # This turn now works on the step: the Stop hook holds it as it holds the
            # turn that launched the executor in the foreground.
            add_turn(store, int(active["step"]), hook.session_id, hook.text("prompt_id"))
    facts = take_record(agent_id) if data.get("final") else {}
    if not facts and status != "completed":
        facts = {"outcome": "gone", "status": status, **({"step": step} if step is not None
                                                         else {})}
    text = verdict_text(hook, agent, facts, "")
    return context("UserPromptSubmit", f"maker's verdict on the {agent} subagent that just "
                   f"ended (agent {agent_id}): {text}") if text else allow()


def stretch_ended(hook: HookInput, wake: bool = False) -> Output:
    """A background task that is not a maker subagent ended (``wake``: maker's own wake,
    ``maker.hooks.wake``): when it was a stretch of the run in maker's engine that nobody
    has heard of yet, the run's one next action, computed from ``plans/`` (never from the
    task's output, which the main agent is not asked to read). A wake always gets one:
    while a stretch still runs, to run one in the background, which waits for it."""
    store = store_for(hook)
    if not store.exists():
        return allow()
    from maker.executor.state.run import live_run
    from maker.executor.state.stretch import ENDED_UNSAID, ended, stretch_runs

    run = live_run(store)
    stretch = run.get("stretch")
    stretch = stretch if isinstance(stretch, dict) else {}  # (another version's record)
    if not run or not wake and (stretch.get("told") or not stretch.get("began")):
        return allow()
    running = stretch_runs(store)
    if stretch.get("began") and not stretch.get("ended") and not running:
        ended(store, ENDED_UNSAID, "maker's engine ended without saying how (killed, or "
              "it crashed); the step it ran stays in progress")
    elif running and not wake:
        return allow()  # (another task ended; the engine still runs)
    from maker.executor.loop.next_action import loop_lock, next_action
    from maker.executor.loop.words import approval_screen, stretch_said

    with loop_lock(store):
        action = next_action(store, hook.session_id, hook.text("prompt_id"), typed=running)
    out = context("UserPromptSubmit", stretch_said(store, action.said))
    screen = approval_screen(store) if action.kind == "ask" else ""
    # (on the person's screen only: the model reads the question, not the step's detail)
    return {**out, "systemMessage": screen} if screen and out else out


def _usage(hook: HookInput, data: dict[str, object]) -> None:
    """The tokens and time the client reports in a notification that follows a hand-back,
    noted for the step in the run (``maker status``, the run's report)."""

    step = data.get("step")
    usage = usage_of(hook)
    if not isinstance(step, int) or not usage:
        return

    store = store_for(hook)
    if store.exists():
        from maker.executor.state.run import note_step

        note_step(store, step, **usage)
