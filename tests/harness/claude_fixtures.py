"""The types of the e2e tests' fixtures that start the real Claude Code CLI
(``tests/e2e/conftest.py``): ``run_claude`` runs it headless, ``interactive`` starts it
in a pseudo-terminal. A test annotates its fixture argument with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from maker_scripted import ClaudeRun
from maker_scripted.terminal import Terminal


class RunClaude(Protocol):
    def __call__(self, prompt: str, **options: Any) -> ClaudeRun: ...


class StartInteractive(Protocol):
    def __call__(self, *, args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None) -> Terminal: ...
