"""The scripted model's scenarios for the tests: everything ``maker demo`` uses
(:mod:`maker_scripted.scenarios` and :mod:`maker_scripted.turns`, re-exported here so
a test imports from one place), and the turns and builders only tests use: approval
questions, verdicts, refusals, a broken plan.
"""

from __future__ import annotations

import json
import re
from typing import Any

from maker_scripted.errors import ScriptError
from maker_scripted.recorded import RecordedRequest
from maker_scripted.replies import Reply
from maker_scripted.scenarios import *  # noqa: F403 - one import for the tests
from maker_scripted.scenarios import GREETING_TASK, greeting_plan
from maker_scripted.scenarios import __all__ as _scenarios
from maker_scripted.turns import *  # noqa: F403
from maker_scripted.turns import (
    DECIDED,
    Turn,
    asks_as_maker_says,
    search,
    started_step,
    tool,
    working_dir,
)
from maker_scripted.turns import __all__ as _turns

__all__ = sorted({*_scenarios, *_turns, "APPROVE", "BROKEN_PLAN_PROBLEM", "ScriptMismatch",
                  "broken_plan", "executor_reads", "main_asks_approval",
                  "main_ends_after_approval", "main_ends_turn_early", "main_follows_verdict",
                  "main_refuses_step", "maker_verdict", "resent_as_changed", "subagent_report",
                  "with_bash"})

APPROVE = "Approve step 0"
_VERDICT = re.compile(r"maker's verdict: (.*)", re.S)
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")


class ScriptMismatch(ScriptError, AssertionError):
    """The client sent the scripted model something a test's script did not expect."""


def mismatch(request: RecordedRequest, what: str) -> ScriptMismatch:
    return ScriptMismatch(f"request #{request.index} ({request.agent}): {what}; it ended "
                          f"with: {request.latest_text[-600:]!r}")


def maker_verdict(request: RecordedRequest) -> str:
    """maker's verdict on the subagent that just returned, as the PostToolUse hook added it
    to the main agent's request (after the Agent tool's result)."""
    match = _VERDICT.search(request.latest_text)
    if not match:
        raise mismatch(request, "expected maker's verdict after the Agent tool's result")
    return match.group(1).strip()


def main_ends_turn_early(text: str = "I will leave this step for later.") -> Turn:
    """A main agent that tries to end its turn without launching the executor."""

    def turn(request: RecordedRequest) -> Reply:
        started_step(request)
        return Reply.text(text)

    return turn


def main_asks_approval() -> Turn:
    """After the executor returned, when maker's verdict says ``awaiting-approval``: ask
    the user with AskUserQuestion, with exactly the input on the verdict's ``ask:`` line."""

    def turn(request: RecordedRequest) -> Reply:
        verdict = maker_verdict(request)
        if "status: awaiting-approval" not in verdict:
            raise mismatch(request, "expected a step awaiting approval in maker's verdict")
        return asks_as_maker_says(request, verdict)

    return turn


def main_ends_after_approval() -> Turn:
    """After the user's answer, which maker's PostToolUse hook recorded: end with what
    maker said and STEP_COMPLETE or STEP_REJECTED (the model runs no approval)."""

    def turn(request: RecordedRequest) -> Reply:
        found = DECIDED.findall(request.all_text)  # the hook's note on this answer: the last
        if not found:
            raise mismatch(request, "expected maker's word on the user's answer")
        said = found[-1]
        sentinel = "STEP_COMPLETE" if "approved" in said else "STEP_REJECTED"
        return Reply.text(f"{said}\n\n{sentinel}")

    return turn


def main_follows_verdict() -> Turn:
    """After a maker subagent returned: tell the user maker's verdict, verbatim, and end
    with the sentinel line the verdict names (if it names one)."""

    def turn(request: RecordedRequest) -> Reply:
        verdict = maker_verdict(request)
        end = _END_WITH.search(verdict)
        return Reply.text(f"maker says: {verdict}" + (f"\n\n{end.group(1)}" if end else ""))

    return turn


def main_refuses_step() -> Turn:
    """/maker:step's only turn when maker said REFUSED: say why, end with STEP_BLOCKED."""

    def turn(request: RecordedRequest) -> Reply:
        refused = search(request, re.compile(r"^REFUSED: (.*)$", re.M), "a REFUSED line")
        return Reply.text(f"maker did not start the step: {refused.group(1)}\n\nSTEP_BLOCKED")

    return turn


def executor_reads(relative: str) -> Turn:
    """A Read of ``relative`` (in the working directory Claude Code told the model)."""

    def turn(request: RecordedRequest) -> Reply:
        return tool("Read", file_path=str(working_dir(request) / relative))

    return turn


def broken_plan(task: str = GREETING_TASK) -> dict[str, Any]:
    """The greeting plan with a dangling input variable: step 1 reads step 5's output."""
    plan = greeting_plan(task)
    plan["plan"][1]["input_variables"] = ["step_5_output.files"]
    return plan


BROKEN_PLAN_PROBLEM = ("step 1: input_variables: 'step_5_output.files' reads "
                       "'step_5_output', but there is no step 5")
"""What maker's linter says about :func:`broken_plan` (the start of its line)."""


_HANDBACK_START = "The report follows:\n"
_HANDBACK_END = "\nagentId: "


def subagent_report(tool_result_text: str) -> str | None:
    """The subagent's final message inside an ``Agent`` tool result, or ``None``.

    Claude Code 2.1.330 hands a foreground subagent's report back framed
    ("[Subagent hand-back] … The report follows:") and indents every line by two
    spaces; this undoes both. ``None`` if the text has no such frame (e.g. a
    background launch, whose result only says the agent was started).
    """
    start = tool_result_text.find(_HANDBACK_START)
    if start < 0:
        return None
    body = tool_result_text[start + len(_HANDBACK_START):]
    end = body.rfind(_HANDBACK_END)
    if end >= 0:
        body = body[:end]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in body.split("\n"))


_RESENT = "The hook produced this input: "


def resent_as_changed(request: RecordedRequest) -> dict[str, Any]:
    """The input a hook changed, which auto mode refused to run until the model sends it
    again exactly as changed (read from the refusal)."""
    said = request.tool_results[-1].text
    assert request.tool_results[-1].is_error and _RESENT in said, said
    changed, _ = json.JSONDecoder().raw_decode(said[said.index(_RESENT) + len(_RESENT):])
    return dict(changed)


def with_bash(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` (the greeting plan's shape) with its first step allowed Bash."""
    plan["plan"][0]["primary_tools"] = ["Write", "Read", "Bash"]
    return plan

