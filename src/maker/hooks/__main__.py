"""``python -m maker.hooks EVENT``: the one entry point every maker hook shares.

Each event imports only its own handler's module: the Stop hook, which runs on every
stop, never loads the others (nor, through them, PyYAML and the plan model)."""

from __future__ import annotations

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
}


def main(argv: list[str]) -> int:
    from maker.hooks.protocol import run_hook

    event = argv[1] if len(argv) > 1 else ""
    where = EVENTS.get(event)
    if where is None:
        sys.stdout.write('{"systemMessage": "maker: unknown hook event"}\n')
        return 0
    __import__(where[0])  # not importlib.import_module: importlib costs each hook its import
    out = run_hook(event, getattr(sys.modules[where[0]], where[1]))
    if out:
        sys.stdout.write(out + "\n")
    return 0


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
