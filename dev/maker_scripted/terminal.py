"""The interactive Claude Code client in a pseudo-terminal, as a person runs it: what
``maker demo`` shows and the interactive end-to-end tests drive.

:class:`Terminal` starts the real CLI (no ``-p``) in a pty, feeds everything it draws
into a terminal emulator (pyte), types keys, and reads the screen. :func:`start_claude`
starts the bundled CLI that way against the scripted Messages API, with the maker
plugin, in an isolated home whose ``.claude.json`` has onboarding and the project's
trust dialog already answered (nothing else is pre-set: the permission mode, fork mode
and the rest are the CLI's own defaults unless a test passes them).

Every wait polls a condition (the screen, a file, the fake API's requests) with a
deadline; there are no fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pexpect
import pyte

from maker_scripted.claude_cli import find_claude, isolated_env
from maker_scripted.fake_api import FakeMessagesAPI

__all__ = ["Terminal", "seed_config", "start_claude"]

COLUMNS, ROWS = 140, 50
PROMPT = "❯"
QUESTION_FOOTER = "Enter to select"


class Terminal:
    """One program in a pseudo-terminal, its output drawn on an emulated screen."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                 columns: int = COLUMNS, rows: int = ROWS) -> None:
        self.screen = pyte.HistoryScreen(columns, rows, history=5000)
        self.screen.set_mode(pyte.modes.LNM)
        self._stream = pyte.Stream(self.screen)
        self._lock = threading.Lock()
        self.raw: list[str] = []
        self.child = pexpect.spawn(argv[0], list(argv[1:]), cwd=str(cwd), env=dict(env),
                                   dimensions=(rows, columns), encoding="utf-8",
                                   codec_errors="replace")
        self._reader = threading.Thread(target=self._read, daemon=True, name="pty-reader")
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.1)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                return
            with self._lock:
                self.raw.append(data)
                self._stream.feed(data)

    # -- reading -------------------------------------------------------------------

    def text(self) -> str:
        """What the screen shows now (trailing blanks trimmed)."""
        with self._lock:
            lines = [line.rstrip() for line in self.screen.display]
        return "\n".join(lines).rstrip()

    def alive(self) -> bool:
        return bool(self.child.isalive())

    def wait(self, condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
        """Poll ``condition`` until it returns something truthy; that value. An
        AssertionError naming ``what`` and showing the screen after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; "
                                     f"the screen shows:\n{self.text()}")
            if not self.alive():
                raise AssertionError(f"the client exited while waiting for {what}; the "
                                     f"screen shows:\n{self.text()}")
            time.sleep(0.05)

    def wait_for_text(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> str:
        """Wait until the screen shows ``pattern`` (a substring, or a regex)."""
        def seen() -> str | None:
            screen = self.text()
            if isinstance(pattern, str):
                return screen if pattern in screen else None
            return screen if pattern.search(screen) else None

        return str(self.wait(seen, f"{pattern!r} on the screen", timeout))

    # -- typing ---------------------------------------------------------------------

    def type(self, text: str) -> None:
        """Type ``text`` as keys (no Enter)."""
        self.child.send(text)

    def enter(self) -> None:
        self.child.send("\r")

    def press(self, key: str) -> None:
        """A named key: ``up``, ``down``, ``enter``, ``escape``, ``tab``."""
        codes = {"up": "\x1b[A", "down": "\x1b[B", "enter": "\r", "escape": "\x1b",
                 "tab": "\t", "shift-tab": "\x1b[Z"}
        self.child.send(codes[key])

    def choose(self, key: str = "enter", *, attempts: int = 4, settle: float = 3.0) -> None:
        """Answer the question on screen with ``key`` (Enter: the highlighted option).

        The client draws a question a moment before its list accepts keys, so a key sent
        at once can be lost: the key is sent again while the question's footer
        ("Enter to select") stays on screen. A repeat that lands after the question has
        gone meets an empty input box, where Enter does nothing."""
        for _ in range(attempts):
            self.press(key)
            deadline = time.monotonic() + settle
            while time.monotonic() < deadline:
                if QUESTION_FOOTER not in self.text():
                    return
                time.sleep(0.05)
        raise AssertionError(f"the question stayed on screen after {attempts} presses of "
                             f"{key!r}; the screen shows:\n{self.text()}")

    def submit(self, text: str, timeout: float = 10.0) -> None:
        """Type ``text`` at the prompt and press Enter, once the input box shows it (a
        paste-like burst of keys may still be settling when Enter arrives)."""
        self.type(text)
        tail = text[-20:]
        self.wait(lambda: tail in self.text(), f"{tail!r} typed in the input box", timeout)
        self.enter()

    def close(self) -> None:
        """End the client and everything it started."""
        if self.child.isalive() and self.child.pid is not None:
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.child.close(force=True)
        self._reader.join(timeout=2)


def seed_config(home: Path, project: Path) -> None:
    """The client's config as a person's would be after the first start: onboarding done,
    the project trusted, the API key accepted. Nothing about permissions or subagents."""
    config = {
        "hasCompletedOnboarding": True,
        "numStartups": 5,
        "theme": "dark",
        "customApiKeyResponses": {"approved": ["sk-fake"], "rejected": []},
        "projects": {str(project): {"hasTrustDialogAccepted": True,
                                    "hasCompletedProjectOnboarding": True,
                                    "allowedTools": []}},
    }
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    for path in (home / ".claude.json", home / ".claude" / ".claude.json"):
        path.write_text(json.dumps(config), encoding="utf-8")


def start_claude(api: FakeMessagesAPI, *, project: Path, home: Path,
                 plugin_dirs: Sequence[Path] = (), args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, claude: Path | None = None,
                 timeout: float = 30.0, columns: int = COLUMNS) -> Terminal:
    """The bundled CLI, interactive, in ``project``, against ``api``; returned once its
    input prompt is on the screen. ``args`` are extra CLI flags (none by default: the
    CLI's own defaults, as a person starts it)."""
    seed_config(home, project)
    argv = [str(claude or find_claude())]
    for plugin_dir in plugin_dirs:
        argv += ["--plugin-dir", str(plugin_dir)]
    argv += list(args)
    full_env = isolated_env(api.base_url, home, extra={"TERM": "xterm-256color",
                                                       "COLUMNS": str(columns),
                                                       "LINES": str(ROWS), **(env or {})})
    terminal = Terminal(argv, cwd=project, env=full_env, columns=columns)
    try:
        terminal.wait_for_text(PROMPT, timeout)
    except BaseException:
        terminal.close()
        raise
    return terminal
