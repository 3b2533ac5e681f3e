"""The Bash of any agent that is not maker's (the main one's), while a plan exists.

In order: no running a person's decisions (``maker.tools.guards.decision_guard``);
maker's own plumbing, pinned to the plugin's ``bin/maker``; anything else in the main
agent's box (``maker.tools.box.main_box``), decided by the person's own Bash rules on the
command as the agent wrote it (``maker.tools.guards.person_rules``), since the client no
longer matches them to the wrapped one: a deny refuses it, an ask asks, an allow (or
``bypassPermissions``) runs it without a prompt; a read-only command runs without one
(in the box: a ``git status`` runs what the repository's config names, a
``.git`` a step left in a folder can name anything); any other leaves it to the
person's mode on the command as it will run.
"""

from __future__ import annotations

from pathlib import Path

from maker.core.paths import project_of
from maker.errors import GitRefusedError
from maker.hooks.common import bash_command, store_for
from maker.hooks.plumbing import plumbing_allow
from maker.hooks.protocol import HookInput, Output, allow, allow_tool, deny_tool, rewrite_tool
from maker.store.settings import load_settings
from maker.tools.box.main_box import main_boxed, main_unwrap
from maker.tools.command.readonly import is_read_only
from maker.tools.guards.decision_guard import decision_refusal
from maker.tools.guards.person_rules import person_rule

__all__ = ["BOXED_WHY", "main_bash", "steps_repository"]

BOXED_WHY = "in maker's box for the main agent (plans/ and maker's key out of its reach)"


def main_bash(hook: HookInput) -> Output:
    """maker's answer on a Bash call of an agent not maker's."""
    store = store_for(hook)
    sent = bash_command(hook)
    inner = main_unwrap(sent, store.root) if sent else None
    command = sent if inner is None else inner
    refusal = decision_refusal(command, cwd=Path(hook.cwd or "."), plans_root=store.root)
    if refusal:
        return deny_tool(refusal)
    if inner is None:
        pinned = plumbing_allow(hook, command)
        if pinned is not None:
            return pinned
    if not store.exists():
        return allow()
    # (sent again as wrapped: it runs as sent, which the client compares with the last)
    refusal, boxed = (None, sent) if inner is not None else main_boxed(
        store.root, command, nested=steps_repository,
        setting=load_settings(store.root).main_boundary,
        cwd=Path(hook.cwd) if hook.cwd else None)
    if refusal:
        return deny_tool(refusal)
    if boxed is None:
        return allow()
    tool_input = hook.raw.get("tool_input")
    updated = {**(tool_input if isinstance(tool_input, dict) else {}), "command": boxed}
    said = person_rule(command, project_of(store.root))
    if said is not None and said[0] == "deny":
        return deny_tool(f"maker: {said[1]} refuses this command (maker checks your Bash "
                         "rules itself while it runs the main agent's commands in its box).")
    if said is not None and said[0] == "ask":
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "ask",
                                       "permissionDecisionReason": f"maker: {said[1]}; "
                                       f"the command runs {BOXED_WHY}",
                                       "updatedInput": updated}}
    if said is not None or hook.text("permission_mode") == "bypassPermissions":
        return allow_tool(f"{said[1] if said else 'bypassPermissions'}; {BOXED_WHY}",
                          updated_input=updated)
    if is_read_only(command):  # (what its program, or git's config, runs: boxed too)
        return allow_tool(f"a read-only command, {BOXED_WHY}", updated_input=updated)
    return rewrite_tool(updated)


def steps_repository(project: Path) -> bool:
    """Whether git finds a repository of its own in the project, untracked (a step's
    ``git init``, which a git of the main agent's would enter); yes where git cannot say.
    (git's layer imported here: only a command that is git's alone asks, not every call.)"""
    from maker.tools.git.git_tree import repositories_inside

    try:
        return repositories_inside(project) != []
    except GitRefusedError:
        return True
