"""maker's own plumbing, allowed without a permission prompt.

A step costs the person no prompt for the commands maker's prompts tell its agents to
run: ``maker context N`` (the executor's brief), ``maker status``, ``maker step outcome
N`` (they only read), and ``maker verify --step N``, which runs the project's checks.
Only the exact whole command (``maker.tools.command.maker_commands.plumbing``) is allowed, and:

- the call runs the plugin's own ``bin/maker``, by absolute path under ``/bin/bash``
  (``updatedInput``): the Bash tool resolves a bare ``maker`` (and ``env bash``)
  through the user's PATH, where the plugin's ``bin/`` comes last, and through the
  session's shell snapshot, either of which a model could have planted a ``maker`` in;
- ``maker verify`` runs commands the project's files name (a Makefile, a package.json
  script, the tests), which the step itself may have written. It is allowed outright
  only in ``default`` mode, where every write of the step was the person's to approve;
  in any other mode it is asked (or checked) as that mode says;
- the executor's ``context`` and ``verify`` name the step in progress.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from maker.hooks.protocol import HookInput, Output, allow_tool

__all__ = ["BASH", "PINNED_WHY", "finds_own_maker", "maker_bin", "pinned_plumbing",
           "plumbing_allow", "stretch_allow", "vouched"]

PINNED_WHY = "maker's own plumbing, run by the plugin's own bin/maker"

BASH = Path("/bin/bash")


def maker_bin() -> Path | None:
    """The plugin's own ``bin/maker``: under ``CLAUDE_PLUGIN_ROOT`` (set for hooks), or
    the checkout this maker runs from; None when neither has one."""
    roots = [os.environ.get("CLAUDE_PLUGIN_ROOT", ""), str(Path(__file__).parents[3])]
    for root in roots:
        candidate = Path(root) / "bin" / "maker" if root else None
        if candidate is not None and candidate.is_file():
            return candidate.resolve()
    return None


def plumbing_allow(hook: HookInput, command: str, step: int | None = None) -> Output:
    """The answer for a Bash call that is exactly maker's plumbing (``step``: the
    executor's step in progress): its command pinned to the plugin's ``bin/maker``, and
    allowed outright but for ``maker verify`` outside ``default`` mode (then still asked,
    or checked, as the mode says); None when this call is not, or cannot be pinned."""
    pinned = pinned_plumbing(command, step)
    if pinned is None or not (vouched(pinned[1], hook.text("permission_mode"))
                              or not finds_own_maker()):
        return None  # (as typed: the client asks, or checks, as the mode says)
    tool_input = hook.raw.get("tool_input")
    updated = {**(tool_input if isinstance(tool_input, dict) else {}), "command": pinned[0]}
    if vouched(pinned[1], hook.text("permission_mode")):
        return allow_tool(PINNED_WHY, updated_input=updated)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}}


def stretch_allow(hook: HookInput, command: str) -> Output:
    """The main agent's ``maker loop stretch`` (a run's stretch in maker's engine, as
    maker's next action words it), exactly: run by the plugin's own ``bin/maker``, as the
    call asked (in the background), without a prompt; None for anything else. It decides
    nothing a person decides: the engine applies the policy a person set, and stops where
    a person's decision is due."""
    from maker.executor.state.stretch import STRETCH_COMMAND

    program = maker_bin()
    if command.strip() != STRETCH_COMMAND or program is None or not BASH.is_file():
        return None
    pinned = " ".join(shlex.quote(w) for w in (str(BASH), str(program), "loop", "stretch"))
    # Exactly this call, whatever else the model put in it: in the background (a stretch
    # run in the foreground would end with no notification, and nobody would say what
    # is next), with the client's own sandbox as the person set it.
    updated = {"command": pinned, "run_in_background": True, "description": "maker run"}
    return allow_tool("a run's stretch in maker's engine, run by the plugin's own bin/maker",
                      updated_input=updated)


def finds_own_maker() -> bool:
    """Whether a bare ``maker`` on the session's PATH is the plugin's own: a call left as
    typed then runs maker's program, not one a step planted on PATH (a project's
    activated ``.venv/bin``, say); when it is not, the call is pinned, and asked."""
    own = maker_bin()
    path = os.environ.get("PATH", "")
    if own is None or any(not os.path.isabs(entry) for entry in path.split(os.pathsep)):
        return False  # (`.` or an empty entry: the shell's cwd, which a step can `cd`)
    # (the client puts the plugin's bin/ last on the Bash tool's PATH)
    found = shutil.which("maker", path=f"{path}{os.pathsep}{own.parent}")
    return found is not None and Path(found).resolve() == own


def vouched(what: str, permission_mode: str) -> bool:
    """Whether maker allows its plumbing ``what`` outright in ``permission_mode``:
    ``maker verify`` runs the project's checks, which the step may have written, so only
    in ``default`` mode, where each of the step's writes was the person's to approve."""
    return what != "verify --step" or permission_mode == "default"


def pinned_plumbing(command: str, step: int | None) -> tuple[str, str] | None:
    """``(command pinned to the plugin's own bin/maker, which plumbing it is)`` when
    ``command`` is exactly maker's plumbing (for the executor's ``step``); else None."""
    from maker.tools.command.maker_commands import orient_command, plumbing

    found = plumbing(command)
    oriented = orient_command(command)
    if oriented is not None and oriented == step:
        found = ("orient", oriented)
    if found is None:
        return None
    what, number = found
    if what in ("context", "verify --step", "land") and (step is None or number != step):
        return None
    program = maker_bin()
    if program is None or not BASH.is_file():
        return None
    words = shlex.split(command)[1:] if what == "orient" else command.split()[1:]
    return " ".join([shlex.quote(str(BASH)), shlex.quote(str(program)),
                     *(shlex.quote(w) for w in words)]), what
