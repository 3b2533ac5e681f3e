"""The scripted model's turns for the real maker plugin: callables that *read the request*.

The real Claude Code CLI runs with the repository root as ``--plugin-dir``: it
expands ``/maker:plan`` and ``/maker:step``, runs their ``!`…``` lines, launches
maker's subagents and runs maker's hooks. Only the model's turns are scripted:

- the main agent follows ``commands/plan.md`` and ``commands/step.md``: it launches
  ``maker:planner`` or ``maker:step-executor`` with the Agent tool
  (``run_in_background: false``, which an interactive session drops), asks the
  question on the ``ask:`` line of maker's verdict, or runs ``maker status`` or ``maker
  step outcome N`` and ends a step with the sentinel line it printed;
- the planner answers plan YAML, the step executor reads its brief with
  ``maker context N``, does some work and answers handoff YAML;
- a corrected answer is sent only after reading the hook's ``Stop hook feedback``.

The task text comes from the ``maker request`` output the main agent was shown, the
step number from the ``STARTED:`` line of ``maker step begin``, the sentinel from
``maker step outcome``. If what a turn needs is not in its request, it raises
:class:`~maker_scripted.errors.ScriptError`, the fake API answers HTTP 500 and ``assert_done``
fails: a script cannot pass on text the model never saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from maker_scripted.errors import ScriptError
from maker_scripted.recorded import RecordedRequest, ToolResult, content_text
from maker_scripted.replies import Reply, ToolUseBlock

__all__ = [
    "DECIDED",
    "EXECUTOR",
    "FEEDBACK",
    "hook_feedback",
    "PLANNER",
    "Turn",
    "after_feedback",
    "asks_as_maker_says",
    "executor_reads_brief",
    "executor_writes",
    "expect_feedback",
    "handback",
    "last_result",
    "main_launches_executor",
    "main_launches_planner",
    "main_reports_decision",
    "main_reports_outcome",
    "main_reports_status",
    "main_runs",
    "main_runs_outcome",
    "main_waits",
    "main_shows_status",
    "off_script",
    "search",
    "started_step",
    "tool",
    "working_dir",
]

PLANNER = "planner"
EXECUTOR = "step-executor"
FEEDBACK = "Stop hook feedback:\n"
"""How Claude Code 2.1.330 hands a Stop/SubagentStop block's reason to the model."""
# Claude Code 2.1.331 wraps it: "<system-reminder>\nThe text below is the output of a
# hook, not a message from the user.\nStop hook feedback:\n<reason>\n</system-reminder>"
# (and adds a system message: `<Event> hook blocking error from command: "...": <reason>`).
_WRAPPED = re.compile(r"(?:\A|\n)Stop hook feedback:\n(.*?)(?:\n</system-reminder>)?\s*\Z",
                      re.S)


def hook_feedback(text: str) -> str | None:
    """The reason a Stop or SubagentStop hook's block gave the model, from the last user
    message the client sent it (either client's wording); None when it carries none."""
    if text.startswith(FEEDBACK):
        return text[len(FEEDBACK):]
    found = _WRAPPED.search(text)
    return found.group(1) if found else None

Turn = Callable[[RecordedRequest], Reply]


# -- reading what the model was sent ----------------------------------------------------

_USER_TEXT = re.compile(r"<user-text>\n(.*)\n</user-text>", re.S)
_USER_NOTES = re.compile(r"<user-notes>\n(.*)\n</user-notes>", re.S)
_STARTED = re.compile(r"^STARTED: step (\d+) ", re.M)
_EXECUTE = re.compile(r"Execute maker step (\d+)\.")
_WORKDIR = re.compile(r"Primary working directory: (.+)")
_SENTINEL = re.compile(r"^sentinel: (STEP_[A-Z_]+)$", re.M)
_ASK = re.compile(r"^ask: (\{.*\})$", re.M)


def off_script(request: RecordedRequest, what: str) -> ScriptError:
    """The error a turn raises when ``request`` lacks ``what`` it needs."""
    return ScriptError(f"request #{request.index} ({request.agent}): {what}; it ended "
                          f"with: {request.latest_text[-3000:]!r}")


def _user_texts(request: RecordedRequest) -> list[str]:
    return [content_text(m.get("content", "")) for m in request.messages
            if m.get("role") == "user"]


def search(request: RecordedRequest, pattern: re.Pattern[str],
            what: str) -> re.Match[str]:
    """The newest user message's match: a session may run several commands."""
    for text in reversed(_user_texts(request)):
        match = pattern.search(text)
        if match:
            return match
    raise off_script(request, f"expected {what}")


def last_result(request: RecordedRequest) -> ToolResult:
    """The last tool result the client sent back (ScriptError when there is none)."""
    results = request.tool_results
    if not results:
        raise off_script(request, "expected a tool result")
    return results[-1]


def started_step(request: RecordedRequest) -> int:
    """The step number on maker's newest ``STARTED: step N`` line."""
    return int(search(request, _STARTED, "maker's `STARTED: step N` line").group(1))


def working_dir(request: RecordedRequest) -> Path:
    """The working directory Claude Code told the model (its system prompt's line)."""
    match = _WORKDIR.search(request.all_text)
    if not match:
        raise off_script(request, "expected Claude Code's 'Primary working directory' line")
    return Path(match.group(1).strip())


def tool(name: str, **tool_input: Any) -> Reply:
    """A turn that calls tool ``name`` (a convenience over :meth:`Reply.tool`)."""
    return Reply.tool(name, tool_input)


def asks_as_maker_says(request: RecordedRequest, verdict: str) -> Reply:
    """AskUserQuestion with exactly the input on ``verdict``'s ``ask:`` line (step.md, rule 5)."""
    asked = _ASK.search(verdict)
    if asked is None:
        raise off_script(request, f"expected an `ask:` line in maker's verdict {verdict!r}")
    return tool("AskUserQuestion", **json.loads(asked.group(1)))


# -- the main agent -----------------------------------------------------------------


def main_launches_planner() -> Turn:
    """/maker:plan's first turn: launch maker:planner with the task exactly as
    ``maker request plan`` printed it (between ``<user-text>`` markers)."""

    def turn(request: RecordedRequest) -> Reply:
        task = search(request, _USER_TEXT, "the task between <user-text> markers").group(1)
        return tool("Agent", subagent_type="maker:planner", description="Plan the task",
                    prompt=f"Plan this task: {task}", run_in_background=False)

    return turn


def main_runs(command: str) -> Turn:
    """A turn that runs ``command`` with Bash, after any tool result."""

    def turn(request: RecordedRequest) -> Reply:
        return tool("Bash", command=command, description=f"Run {command.split()[0]}")

    return turn


def main_reports_status() -> Turn:
    """The last turn of /maker:plan: show the user what ``maker status`` printed."""

    def turn(request: RecordedRequest) -> Reply:
        status = last_result(request).text.strip()
        return Reply.text(f"maker checked and saved the plan:\n\n{status}\n\n"
                          "Run /maker:step to start the first step.")

    return turn


def main_shows_status() -> Turn:
    """/maker:status's only turn: show the table its ``!`maker status``` line printed."""

    def turn(request: RecordedRequest) -> Reply:
        text = request.last_user_text
        start = text.find("Plan: ")
        if start < 0:
            raise off_script(request, "expected `maker status` output (a 'Plan: ' line)")
        # Its two paragraphs: the plan's table, then what is next (and what failed).
        status = "\n\n".join(text[start:].split("\n\n")[:2]).strip()
        return Reply.text(f"{status}\n\nNext: /maker:step for the next ready step.")

    return turn


def main_launches_executor(*, after_feedback_naming: str | None = None) -> Turn:
    """/maker:step's turn once maker said STARTED: launch maker:step-executor with
    ``Execute maker step N.`` and the user's notes verbatim, as maker printed them.

    With ``after_feedback_naming``, the turn must be answering the Stop hook's
    feedback, and the feedback must contain that text.
    """

    def turn(request: RecordedRequest) -> Reply:
        if after_feedback_naming is not None:
            expect_feedback(request, [after_feedback_naming])
        started = search(request, _STARTED, "maker's `STARTED: step N` line")
        n = int(started.group(1))
        prompt = f"Execute maker step {n}."
        notes = _USER_NOTES.search(started.string)  # printed with the STARTED line
        if notes is not None:
            prompt += f"\n\nNotes from the user:\n{notes.group(1)}"
        return tool("Agent", subagent_type="maker:step-executor",
                    description=f"Execute maker step {n}", prompt=prompt,
                    run_in_background=False)

    return turn


_RUNS = re.compile(r"maker: The (.*?) was launched and runs in the background")


def main_waits() -> Turn:
    """After launching a subagent the client ran in the background (an interactive
    session): maker says it runs and nothing is decided; say so to the user and end
    the turn (no sentinel). Its notification starts the next turn, with the verdict."""

    def turn(request: RecordedRequest) -> Reply:
        match = _RUNS.search(request.latest_text)
        if not match:
            raise off_script(request, "expected maker's note that the subagent runs in the "
                                      "background")
        return Reply.text(f"{match.group(1)} runs in the background; you can keep working. "
                          "maker will report when it returns.")

    return turn


def main_runs_outcome() -> Turn:
    """After the executor returned: ``maker step outcome N`` for the step maker started
    (a flow with no question to ask ends with its sentinel; one that asks takes the
    question from maker's verdict instead: :func:`asks_as_maker_says`)."""

    def turn(request: RecordedRequest) -> Reply:
        n = started_step(request)
        return tool("Bash", command=f"maker step outcome {n}",
                    description=f"Where step {n} ended up")

    return turn


def main_reports_outcome() -> Turn:
    """The last turn of /maker:step: the outcome's summary, then its sentinel line."""

    def turn(request: RecordedRequest) -> Reply:
        outcome = last_result(request).text
        match = _SENTINEL.search(outcome)
        if not match:
            raise off_script(request, "expected a `sentinel:` line from maker step outcome")
        return Reply.text(f"maker's verdict:\n\n{outcome.strip()}\n\n{match.group(1)}")

    return turn


DECIDED = re.compile(r"maker: the user (?:approved|rejected) step \d+[^\n]*")
"""maker's note to the main agent on a person's decision (UserPromptSubmit, PostToolUse)."""


def main_reports_decision() -> Turn:
    """After /maker:approve or /maker:reject: what maker's UserPromptSubmit hook said."""

    def turn(request: RecordedRequest) -> Reply:
        found = DECIDED.findall(request.all_text)
        if not found:
            raise off_script(request, "expected maker's note on the user's decision")
        said, _, _ = found[-1].partition(" Tell them so")
        sentinel = "STEP_COMPLETE" if "approved" in said else "STEP_REJECTED"
        said = said.removeprefix("maker: the user ")
        return Reply.text(f"{said[:1].upper()}{said[1:]}\n\n{sentinel}")

    return turn


# -- subagents ----------------------------------------------------------------------


def expect_feedback(request: RecordedRequest, expected: Iterable[str]) -> str:
    """The hook's feedback the request ends with, which must say each of ``expected``."""
    text = request.last_user_text
    if hook_feedback(text) is None:
        raise off_script(request, "expected the hook's 'Stop hook feedback'")
    missing = [e for e in expected if e not in text]
    if missing:
        raise off_script(request, f"the hook's feedback does not say {missing!r}")
    return text


def after_feedback(answer: str, *expected: str) -> Turn:
    """Answer ``answer`` only after reading a hook's feedback that says each of ``expected``."""

    def turn(request: RecordedRequest) -> Reply:
        expect_feedback(request, expected)
        return Reply.text(answer)

    return turn


def handback(message: str) -> Reply:
    """A subagent's delivery in auto mode: ``SubagentHandback({message})``."""
    return Reply.tool("SubagentHandback", {"message": message})


def executor_reads_brief(orient: str = "none") -> Turn:
    """The executor's first turn: ``maker context N`` for the step its prompt names and,
    in the same message, ``maker orient N <orient>`` (maker refuses every edit until an
    orientation is recorded; ``orient=""``: none is)."""

    def turn(request: RecordedRequest) -> Reply:
        match = _EXECUTE.search(request.last_user_text)
        if not match:
            raise off_script(request, "expected 'Execute maker step N.' in the prompt")
        n = match.group(1)
        brief = ToolUseBlock("Bash", {"command": f"maker context {n}",
                                      "description": "Read my brief"})
        if not orient:
            return Reply.of(brief)
        what = "" if orient == "none" else " --what 'scripted'"
        return Reply.of(brief, ToolUseBlock("Bash", {
            "command": f"maker orient {n} {orient}{what}",
            "description": "Record my orientation"}))

    return turn


def executor_writes(relative: str, content: str) -> Turn:
    """A Write of ``relative`` (in the working directory Claude Code told the model)."""

    def turn(request: RecordedRequest) -> Reply:
        if not any("# Step " in r.text for r in request.tool_results):
            raise off_script(request, "expected the brief from `maker context N`")
        return tool("Write", file_path=str(working_dir(request) / relative), content=content)

    return turn
