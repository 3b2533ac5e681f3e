"""``python -m maker.hooks EVENT``: the one entry point every maker hook shares.

Each event imports only its own handler's module: the Stop hook, which runs on every
stop, never loads the others (nor, through them, PyYAML and the plan model)."""

from __future__ import annotations

import os
import sys

# Event -> (module, function). maker.hooks.handlers.HANDLERS is the same table, loaded.
EVENTS = {
    "stop": ("maker.hooks.stop", "on_stop"),
    "subagent-stop": ("maker.hooks.handlers", "on_subagent_stop"),
    "pre-tool-use": ("maker.hooks.tool_use", "on_pre_tool_use"),
    "post-tool-use": ("maker.hooks.tool_use", "on_post_tool_use"),
    "session-start": ("maker.hooks.handlers", "on_session_start"),
    "user-prompt-submit": ("maker.hooks.handlers", "on_user_prompt_submit"),
    "agent-launch": ("maker.hooks.verdicts", "on_agent_launch"),
    "agent-return": ("maker.hooks.verdicts", "on_agent_return"),
    "stretch-wake": ("maker.hooks.wake", "on_stretch_wake"),
    "agent-bound": ("maker.hooks.bound", "on_agent_bound"),
    "subagent-start": ("maker.hooks.bound", "on_subagent_start"),
}


# The client skips a PreToolUse hook that has not answered within its timeout (30 s in
# hooks/hooks.json) and runs the call unchecked. maker answers first: past this deadline
# a check of a maker agent's call (or of a call whose input was not read yet) says no,
# and the person's own call goes through, visibly (STYLE.md 5).
PRE_TOOL_DEADLINE_S = 20.0
_LATE_DENY = ("maker: its check of this call ran out of time ({} s), so the call is "
              "refused: a check that cannot finish says no. Do it in smaller pieces, or hand "
              "off with status: blocked and this reason.")
_LATE_ALLOW = "maker: its check of this call ran out of time ({} s); the call was let through "\
    "unchecked."


class Watchdog:
    """Answers for the hook when the check is too slow, then ends the process: whichever
    of the two answers first is the only answer written."""

    def __init__(self, deadline: float) -> None:
        import threading  # (here: the Stop hook, on every stop, never loads it)

        self.deadline = deadline
        self.lock = threading.Lock()
        self.answered = False
        self.makers = True  # (unknown until the input is read: a maker agent's, maybe)
        timer = threading.Timer(deadline, self.fire)
        timer.daemon = True
        timer.start()

    def saw(self, hook: object) -> None:
        agent = str(getattr(hook, "agent_type", "") or "")
        self.makers = agent.startswith("maker:")

    def fire(self) -> None:
        with self.lock:
            if self.answered:
                return
            self.answered = True
            try:
                from maker.hooks.protocol import _dump, deny_tool, message  # (loaded by main)

                said = (_LATE_DENY if self.makers else _LATE_ALLOW).format(f"{self.deadline:g}")
                late = _dump(deny_tool(said) if self.makers else message(said))
                os.write(1, (late + "\n").encode())
            finally:
                os._exit(0)  # (whatever happened above: the slow check never answers)

    def answer(self, out: str) -> None:
        with self.lock:
            if self.answered:  # (fire() is ending the process)
                return
            self.answered = True
            if out:
                sys.stdout.write(out + "\n")


def main(argv: list[str]) -> int:
    from maker.hooks.protocol import run_hook

    event = argv[1] if len(argv) > 1 else ""
    where = EVENTS.get(event)
    if where is None:
        sys.stdout.write('{"systemMessage": "maker: unknown hook event"}\n')
        return 0
    dog = Watchdog(_deadline()) if event == "pre-tool-use" else None
    __import__(where[0])  # not importlib.import_module: importlib costs each hook its import
    out = run_hook(event, getattr(sys.modules[where[0]], where[1]),
                   on_input=dog.saw if dog is not None else None)
    if dog is not None:
        dog.answer(out)
    elif event in ("stretch-wake", "agent-bound"):  # (asyncRewake: scripts/hook says it)
        said = _wake_said(out)
        if said:
            sys.stdout.write(said + "\n")
    elif out:
        sys.stdout.write(out + "\n")
    return 0


def _wake_said(out: str) -> str:
    """What the wake hook says to the main agent ("" to stay quiet): its ``wake``, or
    the error that stopped its wait (a waiter that failed wakes the main agent rather
    than leave it asleep for good); an input it ignored wakes nobody."""
    import json

    said = json.loads(out) if out else {}
    failed = str(said.get("systemMessage") or "")
    return str(said.get("wake") or (failed if "hit an error" in failed else ""))


def _deadline() -> float:
    """``PRE_TOOL_DEADLINE_S``, or less where ``MAKER_HOOK_DEADLINE_S`` says (a shorter
    deadline only refuses sooner: it can never let a call through unchecked)."""
    try:
        asked = float(os.environ.get("MAKER_HOOK_DEADLINE_S", PRE_TOOL_DEADLINE_S))
    except ValueError:
        return PRE_TOOL_DEADLINE_S
    return min(max(asked, 0.05), PRE_TOOL_DEADLINE_S) if asked == asked else \
        PRE_TOOL_DEADLINE_S


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BaseException as exc:  # never wedge the client
        import json

        if isinstance(exc, SystemExit):
            raise
        sys.stdout.write(json.dumps({"systemMessage": f"maker: hook crashed "
                                     f"({type(exc).__name__})"}) + "\n")
        sys.exit(0)
