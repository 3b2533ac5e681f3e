"""Fixtures for driving the real Claude Code CLI against the scripted Messages API.

``fake_api`` is a started :class:`FakeMessagesAPI` (agents named by their
``maker-agent: NAME`` line); ``run_claude(prompt, **options)`` runs the bundled
CLI headless against it, in ``project`` (a fresh git repository) with its own
``claude_home``. A test scripts the model, runs, then asserts on what the CLI
produced and on what the model was sent.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.claude_fixtures import RunClaude, StartInteractive
from harness.queries import RecordingAPI
from maker_scripted import ClaudeRun, FakeMessagesAPI, find_claude
from maker_scripted import run_claude as _run_claude
from maker_scripted.terminal import Terminal

# One CLI run takes about a second; a hang must fail the test, not block CI.
RUN_TIMEOUT = 30.0
# Read before the isolation fixture clears the environment (see ``interactive``).
_OTHER_PLUGIN = os.environ.get("E2E_PLUGIN_ROOT", "")


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    """The bundled CLI (raises ClaudeNotFoundError naming `pip install claude-agent-sdk`)."""
    return find_claude()


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    with RecordingAPI() as api:
        yield api


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    path = tmp_path / "claude-home"
    path.mkdir()
    return path


@pytest.fixture
def run_claude(claude_binary: Path, fake_api: FakeMessagesAPI, project: Path,
               claude_home: Path) -> RunClaude:
    def run(prompt: str, **options: Any) -> ClaudeRun:
        options.setdefault("cwd", project)
        options.setdefault("home", claude_home)
        options.setdefault("timeout", RUN_TIMEOUT)
        options.setdefault("claude", claude_binary)
        return _run_claude(prompt, api=fake_api, **options)

    return run


# -- the interactive client ------------------------------------------------------------


@pytest.fixture
def interactive(claude_binary: Path, fake_api: FakeMessagesAPI, project: Path,
                claude_home: Path) -> Iterator[StartInteractive]:
    """``interactive()`` starts the real CLI in a pseudo-terminal with the maker plugin,
    as a person starts it (no flags: auto mode, subagents in the background), against
    the test's fake API; ``args`` and ``env`` add flags and variables. Closed after the
    test, with everything it started.

    ``E2E_PLUGIN_ROOT`` (read when the session starts) runs the scenarios against
    another checkout of the plugin: an older commit, to see what they catch there."""
    from harness.scenarios import find_plugin_root, plugin_env
    from maker_scripted.terminal import start_claude

    plugin = Path(_OTHER_PLUGIN) if _OTHER_PLUGIN else find_plugin_root()
    started: list[Terminal] = []

    def start(*, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> Terminal:
        terminal = start_claude(fake_api, project=project, home=claude_home,
                                plugin_dirs=[plugin], args=args,
                                env={**plugin_env(), **(env or {})}, claude=claude_binary)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.close()
