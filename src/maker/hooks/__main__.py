"""``python -m maker.hooks EVENT``: the one entry point every maker hook shares."""

from __future__ import annotations

import sys

from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import message, run_hook


def main(argv: list[str]) -> int:
    event = argv[1] if len(argv) > 1 else ""
    handler = HANDLERS.get(event)
    if handler is None:
        sys.stdout.write('{"systemMessage": "maker: unknown hook event"}\n')
        return 0
    out = run_hook(event, handler)
    if out:
        sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BaseException as exc:  # noqa: BLE001 - never wedge the client
        import json

        if isinstance(exc, SystemExit):
            raise
        sys.stdout.write(json.dumps(message(f"maker: hook crashed ({type(exc).__name__})")))
        sys.exit(0)
