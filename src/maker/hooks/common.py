"""What every maker hook handler shares: where the plans are, and what a hook input
carries (the subagent's final message, a Bash command)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.hooks.protocol import HookInput

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["EXECUTOR_SUFFIX", "PLANNER_SUFFIX", "REVIEWER_SUFFIX", "bash_command",
           "final_text", "reviewed_step", "running_step", "active_marker", "store_for"]

PLANNER_SUFFIX = ":planner"
EXECUTOR_SUFFIX = ":step-executor"
REVIEWER_SUFFIX = ":reviewer"


def store_for(hook: HookInput) -> PlanStore:
    from maker.core.paths import find_plans_dir
    from maker.store.layout import check_layout
    from maker.store.plan_store import PlanStore

    # A cwd that is no directory (garbage input) gives way to the hook's own.
    cwd = Path(hook.cwd) if hook.cwd and os.path.isdir(hook.cwd) else None
    root = find_plans_dir(cwd=cwd)
    check_layout(root)  # a file where a folder belongs: one clear message, not a traceback
    return PlanStore(root)


def final_text(hook: HookInput) -> str:
    """The subagent's final message: from the input, else from its transcript."""
    text = hook.text("last_assistant_message")
    if text.strip():
        return text
    path = hook.text("agent_transcript_path") or hook.text("transcript_path")
    return _last_assistant_text(Path(path)) if path else ""


def _last_assistant_text(path: Path) -> str:
    """The subagent's last answer in a JSONL transcript, read from its tail only (a
    regular file; a FIFO, a device or a directory gives ""): the ``message`` of a
    SubagentHandback call (auto mode's delivery) or the text of a final message,
    whichever came last."""
    from maker.core.bounded import read_tail
    from maker.errors import InputError

    try:
        lines = read_tail(path).decode("utf-8", "replace").splitlines()
    except (OSError, ValueError, InputError):  # ValueError: a NUL in the path
        return ""
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        msg = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content
        blocks = [b for b in content or [] if isinstance(b, dict)]
        for block in reversed(blocks):
            tool_input = block.get("input")
            if block.get("type") == "tool_use" and block.get("name") == "SubagentHandback" \
                    and isinstance(tool_input, dict) and isinstance(tool_input.get("message"),
                                                                    str):
                return str(tool_input["message"])
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        if texts:
            return str(texts[-1])
    return ""


def bash_command(hook: HookInput) -> str:
    tool_input = hook.raw.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) else ""


def running_step(store: PlanStore) -> dict[str, Any] | None:
    """The in-progress marker; rebuilt from the step files if it went missing, so
    that a lost marker never costs an executor's handoff."""
    return store.read_active() or (store.rebuild_active() if store.exists() else None)


def active_marker(store: PlanStore) -> dict[str, Any] | None:
    """The in-progress marker. A marker that exists but cannot be read (a hand edit, a
    torn write) never opens the gates: it is rebuilt from the step files."""
    active = store.read_active()
    if active or not store.active_path.exists():
        return active
    return running_step(store)


def executor_marker(hook: HookInput, store: PlanStore, active: dict[str, Any]
                    ) -> tuple[dict[str, Any] | None, str]:
    """The in-progress marker as it reads for this executor's own step, and "" ; or
    (None, why) when several steps run at once (a wave) and maker cannot yet
    tell which one this executor works for. An executor of a wave is bound to its step
    at its background launch (its prompt names it), else by its first ``maker context
    N`` (``handoff``: the step its answer names, for one that never asked)."""
    from maker.store.active import member, run_of, wave_of

    wave = wave_of(active)
    if not wave:
        return active, ""
    from maker.hooks import records

    bound = records.read_record(hook.agent_id).get("run")
    if isinstance(bound, list) and bound and bound[0] in wave:
        return member(active, bound[0]), ""
    from maker.tools.command.maker_commands import orient_command, plumbing

    command = bash_command(hook) if hook.text("tool_name") == "Bash" else ""
    said = plumbing(command) if command else None
    n = said[1] if said and said[0] == "context" else orient_command(command)
    if n in wave and isinstance(n, int):
        mine = member(active, n)
        if mine is not None:
            records.bind_run(hook.agent_id, hook.agent_type, run_of(mine))
        return mine, ""
    return None, (f"maker: steps {', '.join(map(str, wave))} run at once, each in its own "
                  "worktree. First read your brief with `maker context N`, N being the "
                  "step your prompt names; it says where you work.")


def reviewed_step(hook: HookInput) -> int | None:
    """The step the reviewer's prompt names, as it begins (``Review maker step N``): the
    first user message of its transcript, as the client wrote it; never the reviewer's
    own words or what it read. None when it names none."""
    import json
    import re

    from maker.core.bounded import open_regular
    from maker.errors import MakerError

    path = hook.text("agent_transcript_path")
    if not path:
        return None
    try:
        with open_regular(path) as fh:
            head = fh.read(256 * 1024).decode("utf-8", "replace")
    except (OSError, ValueError, MakerError):
        return None
    for line in head.splitlines():
        try:
            message = json.loads(line).get("message")
        except (ValueError, AttributeError):
            continue
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in content if isinstance(b, dict)) \
            if isinstance(content, list) else ""
        found = re.match(r"\s*Review maker step (\d{1,6})\b", text)
        return int(found.group(1)) if found else None
    return None
