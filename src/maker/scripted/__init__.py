"""A scripted Anthropic Messages API, and a harness that runs the real Claude Code CLI against it.

The script decides the model's turns; everything else (command expansion,
subagents, tool execution, hooks, blocking) is the real client's. The e2e tests
and ``maker demo`` use it to show whole flows with no network and no API key.
"""

from maker.scripted.claude_cli import (
    ClaudeNotFoundError,
    ClaudeRun,
    ClaudeTimeoutError,
    ToolUse,
    find_claude,
    isolated_env,
    run_claude,
)
from maker.scripted.fake_api import (
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
from maker.scripted.recorded import (
    Outcome,
    RecordedRequest,
    ToolResult,
    content_text,
    subagent_report,
)
from maker.scripted.replies import ApiError, Reply, TextBlock, ToolUseBlock

__all__ = [
    "AGENT_MARKER",
    "DEFAULT_SIDE_REQUESTS",
    "MAIN",
    "ApiError",
    "Classifier",
    "ClaudeNotFoundError",
    "ClaudeRun",
    "ClaudeTimeoutError",
    "FakeMessagesAPI",
    "Outcome",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "SideRequest",
    "TextBlock",
    "ToolResult",
    "ToolUse",
    "ToolUseBlock",
    "content_text",
    "find_claude",
    "isolated_env",
    "marker_classifier",
    "pattern_classifier",
    "run_claude",
    "subagent_report",
]
