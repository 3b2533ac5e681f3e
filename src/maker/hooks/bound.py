"""A maker subagent past its wall-clock bound, in the plugin (``subagent_timeout``).

The bound itself, and what failing a step for it means, are the core's
(``maker.executor.state.overrun``). Here it is enforced where the client lets a plugin act:

- SubagentStart (``on_subagent_start``): the bound starts (``records.first_seen``).
- PreToolUse (``maker.hooks.tool_use``): a maker subagent's call past its bound is refused
  and the subagent ended at once (``continue: false``), which the client honours for a
  subagent's hook: its turn stops and it is never asked again (``end_overrun``).
- A subagent that makes no call (it waits on the model, or in a long command) is ended
  by the person's client, not by a hook: an ``asyncRewake`` PostToolUse hook on its
  background launch (``agent-bound`` in hooks/hooks.json, ``on_agent_bound``) waits
  until its bound; if it still runs then, maker records it ended (its step failed) and
  the hook exits 2, which wakes the main agent to stop it with TaskStop.

- SubagentStop and SubagentHandback (``late_delivery``): an answer that comes past the
  bound is not gated, and nothing of it is recorded.

Either way the subagent's record says ``overran``, and the verdict the main agent gets
(now, or with the subagent's notification) says so.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from maker.hooks import records
from maker.hooks.common import store_for
from maker.hooks.protocol import HookInput, Output, allow, end_agent, message

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["end_overrun", "late_delivery", "on_agent_bound", "on_subagent_start"]

_LAUNCH_WAIT_S = 10.0  # for the launch's own hook to note when the subagent began
_POLL_S = 1.0


def on_subagent_start(hook: HookInput) -> Output:
    """A maker subagent starts (SubagentStart): its bound starts now (``first_seen``;
    a background launch's own hook may have noted it a moment before)."""
    if hook.agent_type.startswith("maker:"):
        records.first_seen(hook.agent_id, hook.agent_type)
    return allow()


def end_overrun(agent_id: str, agent_type: str, store: PlanStore, bound: float) -> Output:
    """Record that this subagent ran past ``bound`` (a step executor's step failed, if
    its run is still in progress) and end it: the PreToolUse answer that does."""
    reason, _ = _record_overrun(agent_id, agent_type, store, bound)
    return end_agent(f"maker: you ran past your time bound, so you are ended: {reason}. "
                     "Nothing more you do counts.")


def _record_overrun(agent_id: str, agent_type: str, store: PlanStore,
                    bound: float) -> tuple[str, bool]:
    """Why the subagent is ended, and whether this recorded it (not when its deliverable
    was gated first: that one stays)."""
    from maker.executor.state.overrun import fail_overrun, overrun_reason

    reason = overrun_reason(agent_type, bound)
    with records.delivering():  # (one deliverable: an answer gated meanwhile stays)
        data = records.read_record(agent_id)
        if data.get("final"):
            return reason, False
        run = data.get("run")
        step = data.get("review_step")
        failed = False
        if agent_type.endswith(":step-executor"):
            step = run[0] if isinstance(run, list) and run else None
            failed = store.exists() and fail_overrun(store, run, reason) is not None
        records.write(agent_id, {**data, "agent_type": agent_type, "outcome": "overran",
                                 "final": True, "at": time.time(), "reason": reason,
                                 "bound": bound, "step": step, "failed": failed})
    return reason, True


def late_delivery(hook: HookInput) -> Output:
    """A maker subagent's deliverable (its final message, its hand-back) that arrives
    past its bound: not gated, nothing of it recorded, and the subagent recorded as ended
    for it (a step executor's step failed); None within the bound."""
    from maker.executor.state.overrun import overran

    store = store_for(hook)
    bound = overran(store, records.first_seen(hook.agent_id, hook.agent_type))
    if not bound:
        return None
    reason, _ = _record_overrun(hook.agent_id, hook.agent_type, store, bound)
    return message(f"maker: {reason}; its answer came after that and was not recorded.")


def on_agent_bound(hook: HookInput) -> Output:
    """The ``asyncRewake`` hook on the main agent's background launch of a maker
    subagent: ``{"wake": what to do}`` once the subagent ran past its bound still
    running (the hook then exits 2, waking the main agent); nothing when it ended in
    time, has no bound, or its bound lies beyond what this hook may wait."""
    from maker.executor.state.overrun import subagent_bound
    from maker.hooks.wake import wait_s

    if hook.agent_id or hook.agent_type or _printing():
        return allow()
    tool_input = hook.raw.get("tool_input")
    agent = tool_input.get("subagent_type") if isinstance(tool_input, dict) else None
    response = hook.raw.get("tool_response")
    if not isinstance(agent, str) or not agent.startswith("maker:") \
            or not isinstance(response, dict) or response.get("status") != "async_launched":
        return allow()
    agent_id = str(response.get("agentId") or "")
    if not agent_id:
        return allow()
    store = store_for(hook)
    began = _began(agent_id)
    # Waited on the monotonic clock (a clock set back must not stretch the wait past the
    # hook's own timeout); the bound is read again at each look (a person may change it).
    waited = time.monotonic()
    while True:
        bound = subagent_bound(store)
        left = began + bound - time.time()
        if not bound or _over(agent_id) or time.monotonic() - waited + left > wait_s():
            return allow()  # (beyond the wait: its next call past the bound ends it)
        if left <= 0:
            break
        time.sleep(min(_POLL_S, left))
    if not _record_overrun(agent_id, agent, store, bound)[1]:
        return allow()  # (it delivered at the last moment: its own verdict comes)
    facts = records.take_record(agent_id)
    from maker.hooks.verdicts import verdict_text

    said = verdict_text(hook, agent, facts, "")
    return {"wake": f"the {agent} subagent (agent {agent_id}) ran past its time bound and "
                    f"still runs. Stop it now: call TaskStop with task_id \"{agent_id}\". "
                    f"maker's verdict: {said}"}


def _printing() -> bool:
    """Whether the client runs in print mode or under an SDK (``claude -p``: its
    ``CLAUDE_CODE_ENTRYPOINT`` is ``sdk-cli``, an interactive session's ``cli``). There a
    waiting ``asyncRewake`` hook keeps the session from the turn a background subagent's
    notification starts (seen with 2.1.332), and the subagent's next call ends it."""
    return os.environ.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk")


def _began(agent_id: str) -> float:
    """When the subagent began, as its launch's own hook notes it (the two hooks of the
    launch run at once: this one only reads); now, if that note does not come."""
    deadline = time.monotonic() + _LAUNCH_WAIT_S
    while True:
        began = records.read_record(agent_id).get("began")
        if isinstance(began, (int, float)) and not isinstance(began, bool):
            return float(began)
        if time.monotonic() > deadline:
            return time.time()
        time.sleep(0.1)


def _over(agent_id: str) -> bool:
    """Whether maker saw the subagent end: its deliverable gated, or the client's
    notification of its end (whatever it delivered)."""
    data = records.read_record(agent_id)
    return bool(data.get("final") or data.get("told") or data.get("ended"))
