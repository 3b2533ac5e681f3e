"""Which agent a request to the fake Messages API comes from, and the side requests
Claude Code makes on its own (a title, a summary, a quota probe) with their answers."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from maker_scripted.recorded import RecordedRequest
from maker_scripted.replies import Reply

__all__ = [
    "AGENT_MARKER",
    "DEFAULT_SIDE_REQUESTS",
    "MAIN",
    "Classifier",
    "SideRequest",
    "marker_classifier",
    "pattern_classifier",
]

MAIN = "main"
"""The agent name of the top-level conversation."""

Classifier = Callable[[RecordedRequest], str]
"""Names the agent a Messages request comes from."""


AGENT_MARKER = re.compile(r"^maker-agent:[ \t]*(\S+)[ \t]*$", re.MULTILINE)
"""The project's convention: each plugin agent's prompt has a line ``maker-agent: NAME``."""


def pattern_classifier(pattern: str | re.Pattern[str] = AGENT_MARKER) -> Classifier:
    """A classifier: group 1 of ``pattern``'s first match in the system prompt, else ``main``."""
    compiled = re.compile(pattern, re.MULTILINE) if isinstance(pattern, str) else pattern

    def classify(request: RecordedRequest) -> str:
        match = compiled.search(request.system_text)
        return match.group(1) if match else MAIN

    return classify


def marker_classifier(agent_markers: Mapping[str, str]) -> Classifier:
    """A classifier: the first agent whose marker occurs in the system prompt, else ``main``."""
    markers = dict(agent_markers)

    def classify(request: RecordedRequest) -> str:
        system = request.system_text
        for agent, marker in markers.items():
            if marker in system:
                return agent
        return MAIN

    return classify


@dataclass(frozen=True)
class SideRequest:
    """A kind of request the client makes on its own, and the harmless answer to it."""

    name: str
    matches: Callable[[RecordedRequest], bool]
    answer: Callable[[RecordedRequest], Reply]


def _system_has(*phrases: str) -> Callable[[RecordedRequest], bool]:
    return lambda request: any(p in request.system_text for p in phrases)


def _user_has(*phrases: str) -> Callable[[RecordedRequest], bool]:
    return lambda request: any(p in request.last_user_text for p in phrases)


def _is_quota_probe(request: RecordedRequest) -> bool:
    body = request.body if isinstance(request.body, dict) else {}
    return body.get("max_tokens") == 1 and request.last_user_text.strip() == "quota"


DEFAULT_SIDE_REQUESTS: tuple[SideRequest, ...] = (
    SideRequest("quota", _is_quota_probe, lambda r: Reply.text("ok")),
    SideRequest(
        "session_title",
        _system_has('Return JSON with a single "title" field'),
        lambda r: Reply.text('{"title": "Scripted session"}'),
    ),
    SideRequest(
        "tool_use_summary",
        _system_has("Write a short summary label describing what these tool calls accomplished"),
        lambda r: Reply.text("Ran scripted tools"),
    ),
    # A fork of a running subagent's conversation: it carries that agent's system
    # prompt, so without this rule it would eat the agent's script.
    SideRequest(
        "agent_progress",
        _user_has("most recent action in 3-5 words"),
        lambda r: Reply.text("Working on the task"),
    ),
    SideRequest(
        "agent_name",
        _user_has("2-4 word lowercase label for this job"),
        lambda r: Reply.text("scripted job"),
    ),
)
"""Requests Claude Code makes on its own, with harmless answers.

Their prompts were read from the Claude Code 2.1.330 binary. With the isolated
environment of :mod:`maker_scripted.claude_cli` (non-essential traffic off), a
``-p`` run was not seen to send any of them; the rules are a guard so that a
client that does cannot consume a script by surprise.
"""
