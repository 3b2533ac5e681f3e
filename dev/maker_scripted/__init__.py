"""The scripted model behind ``maker demo``: a scripted Anthropic Messages API on
127.0.0.1, the bundled Claude Code CLI run against it, and the demos' scenarios.

The script decides the model's turns; everything else (command expansion,
subagents, tool execution, hooks, blocking, and ``maker run``'s engine) is real.
``maker demo`` (:mod:`.demo`) and ``maker demo --headless`` (:mod:`.headless`) use it
to show whole flows with no network and no API key; the end-to-end tests use it too,
with what only they need in ``tests/harness``.

It is not part of the plugin: it lives in ``dev/``, outside the ``src/`` that the
installed plugin runs (whose bootstrap installs PyYAML and click only, not the Claude
Code CLI the demo drives), nor in a wheel of maker: ``dev/pyproject.toml`` makes it a
distribution of its own, ``maker-scripted``. The development install (``pip install -e
'.[dev]' -e ./dev``) brings it, with the SDK and its bundled CLI.
"""

from maker.errors import ClaudeNotFoundError
from maker_scripted.claude_cli import (
    ClaudeRun,
    find_claude,
    isolated_env,
    run_claude,
)
from maker_scripted.errors import ClaudeTimeoutError
from maker_scripted.fake_api import (
    AGENT_MARKER,
    DEFAULT_SIDE_REQUESTS,
    MAIN,
    Classifier,
    FakeMessagesAPI,
    ScriptItem,
    SideRequest,
    marker_classifier,
    pattern_classifier,
)
from maker_scripted.recorded import (
    Outcome,
    RecordedRequest,
    ToolResult,
    content_text,
)
from maker_scripted.replies import ApiError, Reply, TextBlock, ToolUseBlock

__all__ = [
    "AGENT_MARKER",
    "DEFAULT_SIDE_REQUESTS",
    "MAIN",
    "ApiError",
    "Classifier",
    "ClaudeNotFoundError",
    "ClaudeTimeoutError",
    "ClaudeRun",
    "FakeMessagesAPI",
    "Outcome",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "SideRequest",
    "TextBlock",
    "ToolResult",
    "ToolUseBlock",
    "content_text",
    "find_claude",
    "isolated_env",
    "marker_classifier",
    "pattern_classifier",
    "run_claude",
]
