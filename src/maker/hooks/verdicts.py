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

The records themselves (and "gated once") are ``maker.hooks.records``; which verdict
(a run's word, or the subagent's own) is the core's (``maker.executor.loop.verdict_route``),
and so are its words and the reads behind them (``maker.executor.verdicts.verdict``).

PreToolUse on the Agent tool (``on_agent_launch``) refuses a second executor for a
step whose executor has not returned (``maker.executor.votes.runs``), any executor for a
step whose code vote is held for a person (``maker.executor.state.held_vote``), and the
reviewer when a person set ``STEP_SKIP_REVIEW=1``.
"""

from __future__ import annotations

import time
from typing import Any

from maker.errors import MakerError
from maker.hooks.common import store_for
from maker.hooks.protocol import HookInput, Output, allow, allow_tool, context, deny_tool
from maker.hooks.records import (
    bind_run,
    delivered,
    delivering,
    read_record,
    take_record,
    write,
)

__all__ = ["on_agent_launch", "on_agent_return", "verdict_text"]


def _tool_input(hook: HookInput) -> dict[str, Any]:
    value = hook.raw.get("tool_input")
    return value if isinstance(value, dict) else {}


def _subagent(hook: HookInput) -> str:
    value = _tool_input(hook).get("subagent_type")
    return value if isinstance(value, str) else ""


# -- PreToolUse on the Agent tool --------------------------------------------------------


def on_agent_launch(hook: HookInput) -> Output:
    """Refuse a second executor while one runs the step (in the foreground or not), any
    while its vote is held for a person or maker's engine runs it, and the reviewer when
    a person set ``STEP_SKIP_REVIEW=1``."""
    if _subagent(hook) == "maker:reviewer" and not hook.agent_type:
        from maker.executor.rules.step_rules import skip_review

        if skip_review():
            return deny_tool("maker: STEP_SKIP_REVIEW=1 is set (a person's setting): the "
                             "independent reviewer is never launched. Ask the user to decide "
                             "the step instead, with the `ask:` line maker gave.")
        return allow()
    if not _subagent(hook).endswith(":step-executor") or hook.agent_type:
        return allow()
    from maker.executor.votes.runs import start_launch

    store = store_for(hook)
    active = store.read_active()
    step = active.get("step") if isinstance(active, dict) else None
    if not isinstance(step, int):
        return allow()
    from maker.store.active import wave_of

    wave, named = wave_of(active), _prompt_step(hook)
    if wave and named not in wave:  # (several steps run at once: the prompt names one)
        return deny_tool(f"maker: steps {', '.join(map(str, wave))} run at once, each with "
                         "its own executor: launch each with the prompt `Execute maker step "
                         "N.` (N: one of them), one Agent call per step in one message.")
    refusal = _held(store, named if wave else step) or _engines(store, active or {}) or \
        start_launch(store, hook.text("tool_use_id"), hook.session_id, hook.text("prompt_id"),
                     named if wave else None)
    if refusal:
        return deny_tool(refusal)
    return _with_brief(hook, store, named if wave else step)


def _held(store: Any, step: int | None) -> str | None:
    """The refusal of an executor for a step whose code vote is held for a person
    (``maker.executor.state.held_vote``): it would vote again; None otherwise, and for a
    step file that cannot be read (the launch's brief says so)."""
    from maker.executor.state.held_vote import held

    try:
        why = held(store.load_step(step)) if step is not None else None
    except (MakerError, OSError):
        return None
    return None if why is None else (f"maker: {why}. Launch no executor for it; tell the "
                                     "user this: it is theirs to decide.")


def _engines(store: Any, active: dict[str, Any]) -> str | None:
    """The refusal of an executor while maker's engine runs the plan (a ``/maker:run`` in
    the engine, a ``/maker:step`` of a step whose code is voted on; its stretch runs, or
    its run is live): one executor would answer the step beside the engine's sessions.
    Once neither holds, a person's ``/maker:run --subagents`` may run it."""
    from maker.executor.state.run import ENGINE, run_mode
    from maker.executor.state.stretch import stretch_runs

    if run_mode(store) != ENGINE and not stretch_runs(store):
        return None
    step = active.get("step")
    return ("maker: maker's engine runs this step, outside this conversation (its code may "
            "be voted on by samples in worktrees of their own): launch no executor for it. "
            "End your turn in a sentence: maker wakes you when the engine stops (if it has "
            f"stopped, the user's /maker:step {step} or /maker:run takes the step up again).")


def _with_brief(hook: HookInput, store: Any, step: int | None) -> Output:
    """The launch, its prompt carrying the step's brief: the executor starts with all it
    needs, and the brief never passes through the main session (the client runs the
    changed prompt and keeps the main agent's own in its history). Without a brief (a
    step file that cannot be read), the launch as it is: the executor reads it with
    ``maker context N``."""
    if step is None:
        return allow()
    from maker.executor.launch.brief import BRIEF_TAG, build_brief

    try:
        brief = build_brief(store, None, step)
    except (MakerError, OSError):  # (a broken plan file: the executor's `maker context` says it)
        return allow()
    given = _tool_input(hook)
    prompt = str(given.get("prompt") or f"Execute maker step {step}.")
    return allow_tool(f"maker: step {step}'s brief, with its launch",
                      updated_input={**given, "prompt": f"{prompt}\n\n<{BRIEF_TAG} "
                                     f"step=\"{step}\">\n{brief}</{BRIEF_TAG}>"})


def _prompt_step(hook: HookInput, verb: str = "") -> int | None:
    """The step a launch prompt names (``Execute maker step N.``; with ``verb``, only
    after it: ``Review maker step N``)."""
    import re

    tool_input = hook.raw.get("tool_input")
    prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
    pattern = rf"\b{verb} maker step (\d{{1,6}})\b" if verb else r"\bmaker step (\d{1,6})\b"
    found = re.search(pattern, prompt) if isinstance(prompt, str) else None
    return int(found.group(1)) if found else None


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
    ``launch_id``: its Agent call, ended by this verdict in the foreground): the core's
    choice (``maker.executor.loop.verdict_route``), with what this event says."""
    from maker.executor.loop.verdict_route import Returned, verdict_for

    return verdict_for(store_for(hook), Returned(
        agent, facts, launch_id, hook.session_id, hook.text("prompt_id"), usage_of(hook)))


def usage_of(hook: HookInput) -> dict[str, int]:
    """The tokens, time and tool calls the client reports for the subagent that ended:
    a notification's last ``<usage>`` (after its ``<result>``, the subagent's own text),
    or the Agent call's response in the foreground."""
    import re

    found: dict[str, int] = {}
    prompt = hook.text("prompt")
    if prompt:
        tail = prompt.rsplit("</result>", 1)[-1][:2000]
        for key, name in (("subagent_tokens", "tokens"), ("total_tokens", "tokens"),
                          ("duration_ms", "duration_ms"), ("tool_uses", "tool_uses")):
            m = re.search(rf"<{key}>(\d{{1,12}})</{key}>", tail)
            if m:
                found[name] = int(m.group(1))
        return found
    response = hook.raw.get("tool_response")
    if isinstance(response, dict):
        for key, name in (("totalTokens", "tokens"), ("totalDurationMs", "duration_ms"),
                          ("totalToolUseCount", "tool_uses")):
            if isinstance(response.get(key), int):
                found[name] = int(response[key])
    return found


def _launched(hook: HookInput, agent: str, agent_id: str) -> str:
    """A launch the client runs in the background: what is true now."""
    launch_id = hook.text("tool_use_id")
    if agent_id:
        with delivering():  # (its start's hook may write the record at this moment)
            data = read_record(agent_id)
            if not data:  # (its deliverable may be recorded already: a fast subagent)
                data = {"agent_type": agent, "outcome": "running", "final": False,
                        "at": time.time()}
            reviews = _prompt_step(hook, "Review") if agent == "maker:reviewer" else None
            began = data.get("began")  # (the start of its bound: its launch)
            write(agent_id, {**data, "launch_id": launch_id,
                             "began": began if began is not None else time.time(),
                             **({"review_step": reviews} if reviews is not None else {})})
    what = {"maker:planner": "The planner", "maker:reviewer": "The reviewer"}.get(
        agent, "The step executor")
    if agent.endswith(":step-executor"):
        store = store_for(hook)
        if store.exists():
            from maker.executor.votes.runs import end_agent, launched_in_background

            step = launched_in_background(store, launch_id, agent_id)
            if step is not None:
                from maker.store.active import member, run_of

                what = f"The step executor for step {step}"
                active = store.read_active()
                active = member(active, step) or active  # (its own step of a wave)
                if isinstance(active, dict):
                    bind_run(agent_id, agent, run_of(active))
            if delivered(agent_id):
                end_agent(store, agent_id)
    from maker.executor.state.run import live_run

    here = store_for(hook)
    if here.exists() and live_run(here):
        return (f"maker: {what} runs in the background (agent {agent_id or '?'}). End your "
                "turn in one sentence; maker's verdict comes with its notification.")
    return (f"maker: {what} was launched and runs in the background (agent {agent_id or '?'}). "
            "Nothing is decided yet: maker has not seen its answer, so do not report, "
            "guess or act on a result. End your turn now, telling the user it runs in the "
            "background and that they can keep working (or do other work that does not "
            "touch this step); maker's verdict arrives with the notification when it "
            "returns, and says what to do next.")
