"""The errors only ``maker demo``'s scripted model raises: a branch of maker's tree
(``maker.errors``) that lives with the model, outside the product.

    MakerError                    (maker.errors)
    └── DemoError                 ``maker demo`` did not go as scripted
        ├── ClaudeTimeoutError    a Claude Code CLI run did not finish in time; it was killed
        ├── ScriptError           the scripted model was sent what its script did not expect
        └── PluginNotFoundError   the plugin's files are not beside the package

``maker demo`` (``maker.cli.demo_cmd``) prints each as one line, without a traceback.
"""

from __future__ import annotations

from typing import Any

from maker.errors import MakerError

__all__ = ["ClaudeTimeoutError", "DemoError", "PluginNotFoundError", "ScriptError"]


class DemoError(MakerError):
    """``maker demo`` did not go as scripted: a stage's CLI failed, or its script was not
    used up exactly (what was left, or what the model was sent instead)."""


class ClaudeTimeoutError(DemoError):
    """A Claude Code CLI run did not finish in time; it was killed with its children.
    ``run`` holds what it printed (a ``maker_scripted.claude_cli.ClaudeRun``, which
    imports this module)."""

    def __init__(self, timeout: float, run: Any) -> None:
        self.timeout = timeout
        self.run = run
        super().__init__(
            f"claude did not finish within {timeout:g}s and was killed; "
            f"{len(run.messages)} stream-json messages, stderr tail: {run.stderr[-500:]!r}"
        )


class ScriptError(DemoError):
    """The client sent the scripted model something the script did not expect: a turn
    that reads its request did not find what it needs (the fake API answers HTTP 500)."""


class PluginNotFoundError(DemoError):
    """The maker plugin's files (``.claude-plugin/``, ``commands/``, …) are not on disk."""
