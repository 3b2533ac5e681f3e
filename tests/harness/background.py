"""The scripted model's turns for an interactive session, where the client runs every
subagent in the background (and, in auto mode, subagents hand back through
SubagentHandback). Each turn reads what maker told it, as the model would:

- after an Agent call: maker's note that the subagent runs in the background (PostToolUse
  at launch); the main agent ends its turn to wait (``main_waits``, with ``handback``
  in :mod:`maker_scripted.turns`: the demo uses them too);
- in the turn a subagent's notification starts: maker's verdict on it (UserPromptSubmit),
  which it follows (``main_follows_notification``, ``main_asks_after_notification``).
"""

from __future__ import annotations

import re

from harness.queries import RecordingAPI
from maker_scripted import RecordedRequest, Reply
from maker_scripted.terminal import Terminal
from maker_scripted.turns import Turn, asks_as_maker_says, off_script

__all__ = ["IDLE", "TIMEOUT", "finished", "main_asks_after_notification",
           "main_follows_notification", "notified_verdict", "settled", "verdicts_in"]

TIMEOUT = 60.0
IDLE = "esc to interrupt"
"""On the status line while the client works (a turn, a hook); gone once it is idle."""

_NOTIFIED = re.compile(r"maker's verdict on the (maker:[\w-]+) subagent that just ended "
                       r"\(agent ([\w-]+)\): (.*)", re.S)
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")
_STEP = re.compile(r"^step (\d+) ")


def notified_verdict(request: RecordedRequest) -> tuple[str, str, str]:
    """``(agent type, agent id, verdict)``: maker's verdict in the turn a background
    subagent's notification started."""
    match = _NOTIFIED.search(request.latest_text)
    if not match:
        raise off_script(request, "expected maker's verdict on the subagent whose "
                                  "notification started this turn")
    return match.group(1), match.group(2), match.group(3).strip()


def main_follows_notification() -> Turn:
    """The notification's turn: tell the user maker's verdict and end with the line it
    names (if it names one)."""

    def turn(request: RecordedRequest) -> Reply:
        _, _, verdict = notified_verdict(request)
        end = _END_WITH.search(verdict)
        return Reply.text(f"maker says: {verdict}" + (f"\n\n{end.group(1)}" if end else ""))

    return turn


def main_asks_after_notification() -> Turn:
    """The notification's turn when the step awaits approval: ask the user with
    AskUserQuestion, with exactly the input on the ``ask:`` line of maker's verdict."""

    def turn(request: RecordedRequest) -> Reply:
        _, _, verdict = notified_verdict(request)
        if not _STEP.match(verdict) or "status: awaiting-approval" not in verdict:
            raise off_script(request, f"expected a step awaiting approval, got {verdict!r}")
        return asks_as_maker_says(request, verdict)

    return turn


_VERDICTS = re.compile(r"maker's verdict on the (maker:[\w-]+) subagent that just ended "
                       r"\(agent ([\w-]+)\): (.*?)(?=maker's verdict on the maker:|\Z)", re.S)


def verdicts_in(request: RecordedRequest) -> list[tuple[str, str, str]]:
    """``(agent type, agent id, verdict)`` of every maker verdict on a background
    subagent in the request's newest text, in order (notifications may come batched,
    or queued behind a tool result: one verdict each)."""
    return [(m.group(1), m.group(2), m.group(3).strip())
            for m in _VERDICTS.finditer(request.latest_text)]


# -- waiting on the client ------------------------------------------------------------


def settled(terminal: Terminal, api: RecordingAPI, text: str) -> bool:
    """Whether the script is consumed, the screen shows ``text`` and the client is idle
    (its last Stop hook has run). A scripted turn that raised fails at once."""
    failed = [r for r in api.requests if r.outcome == "error"]
    if failed:
        raise AssertionError(f"a scripted turn of {failed[0].agent!r} raised: "
                             f"{failed[0].error!r}") from failed[0].error
    screen = terminal.text()
    return not api.remaining() and text in screen and IDLE not in screen


def finished(terminal: Terminal, api: RecordingAPI, text: str,
             timeout: float = TIMEOUT) -> str:
    """Wait until the script is consumed, the screen shows ``text`` and the client is
    idle; the screen."""
    terminal.wait(lambda: settled(terminal, api, text),
                  f"the script consumed, {text!r} on the screen and the client idle", timeout)
    return terminal.text()
