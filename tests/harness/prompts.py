"""The person at the keyboard of an interactive client: every permission prompt it
shows, read from the screen, and answered."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.background import TIMEOUT
from maker_scripted.terminal import Terminal

__all__ = ["Prompt", "answer_prompts"]

_ASKS = re.compile(r"^(.*?)(?: · from the (\S+) agent)?$")
_QUESTION = re.compile(r"^ ?(Do you want to .*)$", re.M)
_NO_OPTION = re.compile(r"(\d)\. No\b")
_KEY_TAKES = 1.5  # seconds a typed key may take to close the dialog


@dataclass(frozen=True)
class Prompt:
    """One permission prompt the client showed: what it asks, for whom, and about what."""

    what: str  # "Create file", "Bash command"
    agent: str  # "maker:step-executor", or "main" when it names no agent
    subject: str  # the line under it: "hello.txt", "maker context 0"
    question: str  # "Do you want to create hello.txt?"
    screen: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.what, self.agent, self.subject, self.question


def _prompt_on(screen: str) -> Prompt | None:
    """The permission prompt on ``screen``, or None. It is drawn under a full-width rule:
    "Bash command · from the maker:step-executor agent" (no "from" for main's own
    calls), then the file, or the command between dashed rules, then the question."""
    question = _QUESTION.search(screen)
    if question is None or "1. Yes" not in screen[question.end():]:
        return None
    lines = [line.strip() for line in screen[:question.start()].splitlines()]
    rules = [i for i, line in enumerate(lines) if line.startswith("─" * 20)]
    block = [line for line in lines[rules[-1] + 1:] if line] if rules else []
    if not block:
        return None
    asks = _ASKS.match(block[0])
    assert asks is not None
    rest = block[1:]
    dashed = [i for i, line in enumerate(rest) if line.startswith("╌")]
    subject = rest[dashed[0] + 1] if asks.group(1) == "Bash command" and dashed else \
        (rest[0] if rest else "")
    return Prompt(asks.group(1), asks.group(2) or "main", subject,
                  question.group(1).strip(), screen)


def answer_prompts(terminal: Terminal, done: Callable[[], bool], *,
                   deny: Callable[[Prompt], bool] = lambda p: False) -> list[Prompt]:
    """The person at the keyboard: answer every permission prompt the client shows until
    ``done()``; "Yes" (the preselected first option, by Enter), or "No" (its number
    typed) for a prompt ``deny`` picks. The prompts, in order."""
    seen: list[Prompt] = []

    def next_event() -> Prompt | bool:
        return _prompt_on(terminal.text()) or done()

    while True:
        event = terminal.wait(next_event, "a permission prompt or the end", TIMEOUT)
        if not isinstance(event, Prompt):
            return seen
        seen.append(event)
        if deny(event):
            number = _NO_OPTION.search(event.screen[event.screen.find(event.question):])
            assert number, f"no 'No' option on the prompt:\n{event.screen}"
            key = number.group(1)
        else:
            key = "\r"  # the preselected "1. Yes"
        # A key typed while the dialog is still being drawn is lost: type it again if
        # this prompt is still there a while later (never once it has gone: the next
        # prompt is the next round's).
        def still(shown: Prompt = event) -> bool:
            now = _prompt_on(terminal.text())
            return now is not None and now.key == shown.key

        deadline = time.monotonic() + TIMEOUT
        while still():
            assert time.monotonic() < deadline, f"{event.question!r} never answered"
            terminal.type(key)
            with contextlib.suppress(AssertionError):
                terminal.wait(lambda: not still(), f"the prompt {event.question!r} "
                              "answered", _KEY_TAKES)
