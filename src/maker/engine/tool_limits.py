"""The step executor's limits inside a headless SDK session (``maker run``).

The rules are the plugin's (``maker.executor.protocol.limits.executor_limits``: the step's tool
list and the guard, orient's gate, maker's own plumbing run by this run's maker, the
read-only git rewrite, the OS boundary around every other Bash command), plus one that
only a headless run needs: AskUserQuestion has no person to answer it, so it is
answered with :data:`NO_USER`. The SDK gets them through three of its own means, each holding
something the others do not (observed with claude-agent-sdk 0.2.187 and its bundled
Claude Code 2.1.330, ``tests/e2e/test_engine_tool_limits.py``):

- the PreToolUse hook (:func:`make_hooks`) sees EVERY tool call, before the
  permission rules, including calls ``allowed_tools`` auto-approves (a whole-tool
  entry such as ``Bash``); the SDK's types say subagents' calls too (with
  ``agent_id``; not exercised here). It holds the guard: ``touch plans/x`` by a step
  that lists Bash is refused only here. The model reads ``PreToolUse:<Tool> hook
  error: <reason>``. It fails closed (``on_failure="block"``; an error in the check is
  a refusal that says so).
- ``can_use_tool`` (:func:`make_can_use_tool`) sees only calls that need permission
  under ``permission_mode="default"``: tools not in ``allowed_tools``, and
  AskUserQuestion (always). It never runs under ``dontAsk`` or
  ``bypassPermissions``, and the SDK warns (``CanUseToolShadowedWarning``) that the
  step's whole-tool entries shadow it. Without it a headless session does not offer
  AskUserQuestion at all. It is the second net, with the same decision:
  a call the hook let through (or that a failing hook did not decide) that needs
  permission is still checked.
- ``disallowed_tools`` (:func:`disallowed_tools`) removes the built-in tools the step
  can never use from the model's context; a call to one is answered by the CLI
  ("No such tool available"), not by maker. Bash is never among them: every executor
  may run ``maker verify``.

Nothing here writes: a refusal is a message the model reads in its tool result.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from maker.executor.protocol.limits import Limit, Plumbing, executor_limits, is_plumbing
from maker.store.workspace import worktree_of
from maker.tools.guards.executor_rules import StepTools, executor_decision
from maker.tools.guards.permissions import ALWAYS_ALLOWED, permits
from maker.tools.guards.reader_bash import reader_bash, step_git_run
from maker.tools.registry import BUILTIN_TOOLS

if TYPE_CHECKING:
    from claude_agent_sdk import (
        HookContext,
        HookInput,
        HookJSONOutput,
        HookMatcher,
        PermissionResultAllow,
        PermissionResultDeny,
    )
    from claude_agent_sdk.types import HookEvent

    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["NO_USER", "decide", "disallowed_tools", "make_can_use_tool", "make_hooks",
           "reviewer_hooks", "session_limits"]

NO_USER = ("maker: no user is present; decide, or hand off blocked with the question "
           "(status: blocked, the question in blockers).")
"""The answer to AskUserQuestion in a headless run (the wording a person reads)."""

# Names older clients used: a deny rule on them could reach the current tool.
_OLD_NAMES = frozenset({"Task", "NotebookRead"})
_NEVER_REMOVED = frozenset({"Bash", "AskUserQuestion"}) | ALWAYS_ALLOWED


def decide(store: PlanStore, step: StepRecord | StepTools, tool: str,
           tool_input: Mapping[str, Any], *, cwd: Path,
           workspace: Path | None = None) -> Limit:
    """maker's answer on a call of the headless executor of ``step``.

    AskUserQuestion gets :data:`NO_USER`; every other call the rule both front ends
    share (``maker.executor.protocol.limits.executor_limits``), with ``maker orient N ...`` run by
    this run's own maker (a session's PATH need not have one). A step given as its spec
    alone (no record) gets the tools and the guard. An error while checking is a
    refusal naming it (the step's limits hold; the executor can still hand off blocked).
    """
    if tool == "AskUserQuestion":
        return Limit(NO_USER)
    try:
        number = getattr(step, "number", None)
        if not isinstance(number, int):  # (its spec alone: the tools, the guard, git)
            spec = _spec(step)
            reason = executor_decision(spec, tool, tool_input, cwd=cwd, plans_root=store.root,
                                       workspace=workspace)
            if reason or tool != "Bash":
                return Limit(reason)
            reason, run = step_git_run(spec.tools, str(tool_input.get("command") or ""), cwd)
            return Limit(reason, run, vouched=run is not None)
        record = store.load_step(number)
        return executor_limits(store, record, tool, tool_input, cwd=cwd,
                               workspace=workspace, plumbing=_own_maker(store, number))
    except Exception as exc:  # fail closed: the call is refused, visibly
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Limit(f"maker could not check this tool call ({type(exc).__name__}: {first}), "
                     "so it is refused. If it keeps happening, hand off with status: blocked "
                     "and this reason.")


def _own_maker(store: PlanStore, number: int) -> Plumbing:
    """maker's plumbing for the step (``maker orient N ...``, ``maker context N``,
    ``maker verify --step N``, ...), run by this run's own maker, never one on PATH."""
    def plumbing(command: str) -> Limit | None:
        if not is_plumbing(command, number):
            return None
        words = shlex.split(command)[1:]
        return Limit(run=" ".join(shlex.quote(w) for w in (
            sys.executable, "-m", "maker", *words, "--plans-dir", str(store.root))),
            vouched=True, why="maker's own plumbing")

    return plumbing


def make_can_use_tool(store: PlanStore, step: StepRecord | StepTools, *,
                      cwd: Path | None = None) -> Any:
    """The SDK's ``can_use_tool`` callback for ``step``'s session: a
    ``PermissionResultDeny`` with the reason, or ``PermissionResultAllow``.

    ``cwd`` is the session's working directory (default: the directory holding
    ``plans/``). Needs ``permission_mode="default"`` to be called at all.
    """
    space = _workspace(store, step)
    where = cwd or space or store.project

    async def can_use_tool(tool_name: str, tool_input: dict[str, Any], context: Any
                           ) -> PermissionResultAllow | PermissionResultDeny:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        given = tool_input if isinstance(tool_input, dict) else {}
        limit = decide(store, step, tool_name, given, cwd=where, workspace=space)
        if limit.refusal:
            return PermissionResultDeny(message=limit.refusal)
        return PermissionResultAllow(updated_input={**given, "command": limit.run}
                                     if limit.run is not None else None)

    return can_use_tool


def make_hooks(store: PlanStore, step: StepRecord | StepTools, *,
               cwd: Path | None = None) -> dict[str, list[HookMatcher]]:
    """The SDK ``hooks`` of ``step``'s session: one PreToolUse matcher (every tool)
    that denies with the reason and otherwise gives no opinion (``{}``), so the
    permission rules still apply; but the git of a step that may only read is allowed as
    maker rewrites it (``maker.tools.guards.reader_bash.step_git_run``, as in the plugin). The
    call's own ``cwd`` wins over ``cwd``."""
    from claude_agent_sdk import HookMatcher

    space = _workspace(store, step)
    default_cwd = cwd or space or store.project

    async def pre_tool_use(hook_input: HookInput, tool_use_id: str | None,
                           context: HookContext) -> HookJSONOutput:
        raw = cast(Mapping[str, Any], hook_input)
        tool_input = raw.get("tool_input")
        call_cwd = raw.get("cwd")
        given = tool_input if isinstance(tool_input, dict) else {}
        where = Path(call_cwd) if isinstance(call_cwd, str) and call_cwd else default_cwd
        tool = str(raw.get("tool_name") or "")
        limit = decide(store, step, tool, given, cwd=where, workspace=space)
        return _answer(limit.refusal, limit.run, given, vouched=limit.vouched)

    return {"PreToolUse": [HookMatcher(matcher=None, hooks=[pre_tool_use],
                                       on_failure="block")]}


def reviewer_hooks(cwd: Path) -> dict[HookEvent, list[HookMatcher]]:
    """The SDK ``hooks`` of the headless reviewer's session, whose Bash the plugin's rule
    holds too (``maker.tools.guards.reader_bash``): read-only commands, git as maker rewrites
    it (``updatedInput``), ``maker verify``; anything else is denied with the reason.
    The call's own ``cwd`` wins over ``cwd``."""
    from claude_agent_sdk import HookMatcher

    async def pre_tool_use(hook_input: HookInput, tool_use_id: str | None,
                           context: HookContext) -> HookJSONOutput:
        raw = cast(Mapping[str, Any], hook_input)
        tool_input = raw.get("tool_input")
        given = tool_input if isinstance(tool_input, dict) else {}
        call_cwd = raw.get("cwd")
        refusal, run = reader_bash(str(given.get("command") or ""),
                                   Path(call_cwd) if isinstance(call_cwd, str) and call_cwd
                                   else cwd, who="reviewer", may_verify=True)
        return _answer(refusal, run, given, vouched=True)

    return {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre_tool_use],
                                       on_failure="block")]}


def _answer(refusal: str | None, run: str | None, given: Mapping[str, Any], *,
            vouched: bool) -> HookJSONOutput:
    """A PreToolUse hook's answer: denied with ``refusal``; run as ``run`` (allowed
    outright when maker ``vouched`` for it, else still under the permission rules); or
    no opinion (``{}``: the permission rules still apply)."""
    if refusal:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": refusal}}
    if run is None:
        return {}
    out: dict[str, Any] = {"hookEventName": "PreToolUse",
                           "updatedInput": {**given, "command": run}}
    if vouched:
        out["permissionDecision"] = "allow"
    return cast("HookJSONOutput", {"hookSpecificOutput": out})


def session_limits(store: PlanStore, record: StepRecord) -> dict[str, Any]:
    """The options of ``record``'s executor session that hold its limits: all three
    means above, each for what it alone holds."""
    limits = {"hooks": make_hooks(store, record),
              "can_use_tool": make_can_use_tool(store, record),
              "disallowed_tools": disallowed_tools(record)}
    space = _workspace(store, record)
    if space is not None:  # (a step run beside others works in its worktree)
        limits["cwd"] = space
    return limits


def _workspace(store: PlanStore, step: StepRecord | StepTools) -> Path | None:
    meta = getattr(step, "meta", None)
    return worktree_of(store, cast("StepRecord", step)) if isinstance(meta, dict) else None


def disallowed_tools(step: StepRecord | StepTools) -> list[str]:
    """The built-in tools ``step`` can never use, for the SDK's ``disallowed_tools``
    (sorted). Bash, AskUserQuestion and ``ToolSearch`` are never listed, nor the older
    names of current tools."""
    spec = _spec(step)
    return sorted(name for name in BUILTIN_TOOLS
                  if name not in _NEVER_REMOVED and name not in _OLD_NAMES
                  and not permits(spec.tools, name, {}))


def _spec(step: StepRecord | StepTools) -> StepTools:
    return cast(StepTools, getattr(step, "spec", step))
