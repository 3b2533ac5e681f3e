"""Scripted-model flows for the real maker plugin, queued on a :class:`FakeMessagesAPI`.

The real Claude Code CLI runs with the repository root as ``--plugin-dir``: it
expands ``/maker:plan`` and ``/maker:step``, runs their ``!`…``` lines, launches
maker's subagents and runs maker's hooks. Only the model's turns are scripted,
here, once, for the end-to-end tests and for ``maker demo``:

- the main agent follows ``commands/plan.md`` and ``commands/step.md``: it launches
  ``maker:planner`` or ``maker:step-executor`` with the Agent tool
  (``run_in_background: false``), runs ``maker status`` or ``maker step outcome N``
  and ends a step with the sentinel line ``maker step outcome`` printed;
- the planner answers plan YAML, the step executor reads its brief with
  ``maker context N``, does some work and answers handoff YAML;
- a corrected answer is sent only after reading the hook's ``Stop hook feedback``.

Turns that depend on what the client sent are callables that *read the request*:
the task text comes from the ``maker request`` output the main agent was shown,
the step number from the ``STARTED:`` line of ``maker step begin``, the sentinel
from ``maker step outcome``. If what a turn needs is not in its request, it raises
:class:`ScriptMismatch`, the fake API answers HTTP 500 and ``assert_done`` fails:
a script cannot pass on text the model never saw.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from maker.errors import MakerError
from maker.scripted.fake_api import MAIN, FakeMessagesAPI, ScriptItem
from maker.scripted.recorded import RecordedRequest, ToolResult, content_text
from maker.scripted.replies import Reply
from maker.verify.detect import ENV_VARS

__all__ = [
    "APPROVE",
    "BROKEN_HANDOFF_PROBLEMS",
    "BROKEN_PLAN_PROBLEM",
    "EXECUTOR",
    "FEEDBACK",
    "GREETING_TASK",
    "MAIN",
    "PLANNER",
    "PluginNotFoundError",
    "ScriptMismatch",
    "Turn",
    "after_feedback",
    "broken_handoff",
    "broken_plan",
    "executor_flow",
    "executor_reads",
    "executor_reads_brief",
    "executor_writes",
    "find_plugin_root",
    "greeting_plan",
    "handoff",
    "is_plugin_root",
    "main_asks_approval",
    "main_reports_decision",
    "main_ends_after_approval",
    "main_ends_turn_early",
    "main_follows_verdict",
    "main_launches_executor",
    "main_launches_planner",
    "main_refuses_step",
    "main_reports_outcome",
    "main_reports_status",
    "main_runs",
    "main_runs_outcome",
    "main_shows_status",
    "maker_verdict",
    "new_project",
    "plan_flow",
    "plugin_env",
    "step_flow",
    "to_yaml",
    "tool",
]

PLANNER = "planner"
EXECUTOR = "step-executor"
FEEDBACK = "Stop hook feedback:\n"
"""How Claude Code hands a Stop/SubagentStop block's reason to the model."""

Turn = Callable[[RecordedRequest], Reply]


class ScriptMismatch(AssertionError):
    """The client sent the scripted model something the script did not expect."""


class PluginNotFoundError(MakerError):
    """The maker plugin's files (``.claude-plugin/``, ``commands/``, …) are not on disk."""


# -- the plugin and its environment -------------------------------------------------

_PLUGIN_FILES = (".claude-plugin/plugin.json", "hooks/hooks.json", "commands/step.md",
                 "agents/step-executor.md", "scripts/hook", "bin/maker")


def is_plugin_root(path: Path) -> bool:
    """True when ``path`` holds the maker plugin's files."""
    return all((path / name).is_file() for name in _PLUGIN_FILES)


def find_plugin_root(start: Path | None = None) -> Path:
    """The plugin checkout this package runs from: the folder above ``src/maker``
    that holds ``.claude-plugin/plugin.json``, ``commands/``, ``hooks/``…

    Raises :class:`PluginNotFoundError` when there is none (an install from a wheel
    carries the Python package only).
    """
    here = (start or Path(__file__)).resolve()
    for candidate in here.parents:
        if is_plugin_root(candidate):
            return candidate
    raise PluginNotFoundError(
        f"the maker plugin files (.claude-plugin/, commands/, agents/, hooks/, scripts/, "
        f"bin/) are not above {here.parent}: this maker was installed without them (e.g. "
        "from a wheel). Use a checkout of the maker repository (pip install -e '.[sdk]'), "
        "or pass --plugin-dir CHECKOUT")


def plugin_env(*, python: str | None = None,
               extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the real plugin needs in the CLI's environment, on top of ``isolated_env``.

    ``MAKER_PYTHON`` makes the plugin's launcher run this interpreter (no bootstrap);
    no approval comes from the environment (who approves is the plan's policy, set by
    a person: ``maker policy``). maker's data dir (``XDG_DATA_HOME``) is the caller's,
    although the CLI gets a home of its own: the caller is the same user, whose key
    seals verification runs and approvals. No verification command comes from the
    caller's environment, and neither do a plans dir or a session id.
    """
    from maker.store.seal import key_path

    env = {"MAKER_PYTHON": python or sys.executable,
           "MAKER_PLANS_DIR": "", "MAKER_SESSION_ID": "",
           "XDG_DATA_HOME": str(key_path().parent.parent)}
    env.update(dict.fromkeys(ENV_VARS.values(), ""))
    env.update(extra or {})
    return env


def new_project(path: Path) -> Path:
    """An empty git repository at ``path`` (created), as a user's project would be."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


# -- reading what the model was sent ----------------------------------------------------

_USER_TEXT = re.compile(r"<user-text>\n(.*)\n</user-text>", re.S)
_USER_NOTES = re.compile(r"<user-notes>\n(.*)\n</user-notes>", re.S)
_STARTED = re.compile(r"^STARTED: step (\d+) ", re.M)
_EXECUTE = re.compile(r"Execute maker step (\d+)\.")
_WORKDIR = re.compile(r"Primary working directory: (.+)")
_SENTINEL = re.compile(r"^sentinel: (STEP_[A-Z_]+)$", re.M)
_VERDICT = re.compile(r"maker's verdict: (.*)", re.S)
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")


def _mismatch(request: RecordedRequest, what: str) -> ScriptMismatch:
    return ScriptMismatch(f"request #{request.index} ({request.agent}): {what}; it ended "
                          f"with: {request.latest_text[-600:]!r}")


def _user_texts(request: RecordedRequest) -> list[str]:
    return [content_text(m.get("content", "")) for m in request.messages
            if m.get("role") == "user"]


def _search(request: RecordedRequest, pattern: re.Pattern[str],
            what: str) -> re.Match[str]:
    """The newest user message's match: a session may run several commands."""
    for text in reversed(_user_texts(request)):
        match = pattern.search(text)
        if match:
            return match
    raise _mismatch(request, f"expected {what}")


def _last_result(request: RecordedRequest) -> ToolResult:
    results = request.tool_results
    if not results:
        raise _mismatch(request, "expected a tool result")
    return results[-1]


def _started_step(request: RecordedRequest) -> int:
    return int(_search(request, _STARTED, "maker's `STARTED: step N` line").group(1))


def _working_dir(request: RecordedRequest) -> Path:
    match = _WORKDIR.search(request.all_text)
    if not match:
        raise _mismatch(request, "expected Claude Code's 'Primary working directory' line")
    return Path(match.group(1).strip())


def maker_verdict(request: RecordedRequest) -> str:
    """maker's verdict on the subagent that just returned, as the PostToolUse hook added it
    to the main agent's request (after the Agent tool's result)."""
    match = _VERDICT.search(request.latest_text)
    if not match:
        raise _mismatch(request, "expected maker's verdict after the Agent tool's result")
    return match.group(1).strip()


def tool(name: str, **tool_input: Any) -> Reply:
    """A turn that calls tool ``name`` (a convenience over :meth:`Reply.tool`)."""
    return Reply.tool(name, tool_input)


# -- the main agent -----------------------------------------------------------------


def main_launches_planner() -> Turn:
    """/maker:plan's first turn: launch maker:planner with the task exactly as
    ``maker request plan`` printed it (between ``<user-text>`` markers)."""

    def turn(request: RecordedRequest) -> Reply:
        task = _search(request, _USER_TEXT, "the task between <user-text> markers").group(1)
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
        status = _last_result(request).text.strip()
        return Reply.text(f"maker checked and saved the plan:\n\n{status}\n\n"
                          "Run /maker:step to start the first step.")

    return turn


def main_shows_status() -> Turn:
    """/maker:status's only turn: show the table its ``!`maker status``` line printed."""

    def turn(request: RecordedRequest) -> Reply:
        text = request.last_user_text
        start = text.find("Plan: ")
        if start < 0:
            raise _mismatch(request, "expected `maker status` output (a 'Plan: ' line)")
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
            _expect_feedback(request, [after_feedback_naming])
        started = _search(request, _STARTED, "maker's `STARTED: step N` line")
        n = int(started.group(1))
        prompt = f"Execute maker step {n}."
        notes = _USER_NOTES.search(started.string)  # printed with the STARTED line
        if notes is not None:
            prompt += f"\n\nNotes from the user:\n{notes.group(1)}"
        return tool("Agent", subagent_type="maker:step-executor",
                    description=f"Execute maker step {n}", prompt=prompt,
                    run_in_background=False)

    return turn


def main_ends_turn_early(text: str = "I will leave this step for later.") -> Turn:
    """A main agent that tries to end its turn without launching the executor."""

    def turn(request: RecordedRequest) -> Reply:
        _started_step(request)
        return Reply.text(text)

    return turn


def main_runs_outcome() -> Turn:
    """After the executor returned: ``maker step outcome N`` for the step maker started."""

    def turn(request: RecordedRequest) -> Reply:
        n = _started_step(request)
        return tool("Bash", command=f"maker step outcome {n}",
                    description=f"Where step {n} ended up")

    return turn


def main_reports_outcome() -> Turn:
    """The last turn of /maker:step: the outcome's summary, then its sentinel line."""

    def turn(request: RecordedRequest) -> Reply:
        outcome = _last_result(request).text
        match = _SENTINEL.search(outcome)
        if not match:
            raise _mismatch(request, "expected a `sentinel:` line from maker step outcome")
        return Reply.text(f"maker's verdict:\n\n{outcome.strip()}\n\n{match.group(1)}")

    return turn


_ASK = re.compile(r"^ask: (\{.*\})$", re.M)
_DECIDED = re.compile(r"maker: the user (?:approved|rejected) step \d+[^\n]*")
APPROVE = "Approve step 0"


def main_reports_decision() -> Turn:
    """After /maker:approve or /maker:reject: what maker's UserPromptSubmit hook said."""

    def turn(request: RecordedRequest) -> Reply:
        found = _DECIDED.findall(request.all_text)
        if not found:
            raise _mismatch(request, "expected maker's note on the user's decision")
        said, _, _ = found[-1].partition(" Tell them so")
        sentinel = "STEP_COMPLETE" if "approved" in said else "STEP_REJECTED"
        said = said.removeprefix("maker: the user ")
        return Reply.text(f"{said[:1].upper()}{said[1:]}\n\n{sentinel}")

    return turn


def main_asks_approval() -> Turn:
    """When ``maker step outcome`` says ``awaiting-approval``: ask the user with
    AskUserQuestion, with the input maker gave on its ``ask:`` line."""

    def turn(request: RecordedRequest) -> Reply:
        outcome = _last_result(request).text
        match = _ASK.search(outcome)
        if "status: awaiting-approval" not in outcome or not match:
            raise _mismatch(request, "expected `status: awaiting-approval` and an `ask:` line")
        return tool("AskUserQuestion", **json.loads(match.group(1)))

    return turn


def main_ends_after_approval() -> Turn:
    """After the user's answer, which maker's PostToolUse hook recorded: end with what
    maker said and STEP_COMPLETE or STEP_REJECTED (the model runs no approval)."""

    def turn(request: RecordedRequest) -> Reply:
        found = _DECIDED.findall(request.all_text)  # the hook's note on this answer: the last
        if not found:
            raise _mismatch(request, "expected maker's word on the user's answer")
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
        refused = _search(request, re.compile(r"^REFUSED: (.*)$", re.M), "a REFUSED line")
        return Reply.text(f"maker did not start the step: {refused.group(1)}\n\nSTEP_BLOCKED")

    return turn


# -- subagents ----------------------------------------------------------------------


def _expect_feedback(request: RecordedRequest, expected: Iterable[str]) -> str:
    text = request.last_user_text
    if not text.startswith(FEEDBACK):
        raise _mismatch(request, "expected the hook's 'Stop hook feedback'")
    missing = [e for e in expected if e not in text]
    if missing:
        raise _mismatch(request, f"the hook's feedback does not say {missing!r}")
    return text


def after_feedback(answer: str, *expected: str) -> Turn:
    """Answer ``answer`` only after reading a hook's feedback that says each of ``expected``."""

    def turn(request: RecordedRequest) -> Reply:
        _expect_feedback(request, expected)
        return Reply.text(answer)

    return turn


def executor_reads_brief() -> Turn:
    """The executor's first turn: ``maker context N`` for the step its prompt names."""

    def turn(request: RecordedRequest) -> Reply:
        match = _EXECUTE.search(request.last_user_text)
        if not match:
            raise _mismatch(request, "expected 'Execute maker step N.' in the prompt")
        return tool("Bash", command=f"maker context {match.group(1)}",
                    description="Read my brief")

    return turn


def executor_writes(relative: str, content: str) -> Turn:
    """A Write of ``relative`` (in the working directory Claude Code told the model)."""

    def turn(request: RecordedRequest) -> Reply:
        if "# Step " not in _last_result(request).text:
            raise _mismatch(request, "expected the brief from `maker context N`")
        return tool("Write", file_path=str(_working_dir(request) / relative), content=content)

    return turn


def executor_reads(relative: str) -> Turn:
    """A Read of ``relative`` (in the working directory Claude Code told the model)."""

    def turn(request: RecordedRequest) -> Reply:
        return tool("Read", file_path=str(_working_dir(request) / relative))

    return turn


# -- content: a plan and its handoffs -------------------------------------------------

GREETING_TASK = "Add a hello.txt greeting to the project, and check it"


def greeting_plan(task: str = GREETING_TASK) -> dict[str, Any]:
    """A two-step plan: step 0 writes hello.txt (Write, Read); step 1 checks it (Read
    only) and reads step 0's ``files``."""
    common = {"task_type": "action_step", "fallback_tools": [],
              "fallback_tool_instructions": "None needed: the primary tools cover it."}
    return {
        "task": task,
        "reasoning": "Writing the file and checking it are separate concerns: step 0 "
                     "creates hello.txt, step 1 reads it back with read-only tools.",
        "plan": [
            {"step": 0, "title": "Write hello.txt", **common,
             "task_description": "Create hello.txt at the project root containing the "
                                 "line 'hello', then read it back to check the content.",
             "primary_tools": ["Write", "Read"],
             "primary_tool_instructions": "Write hello.txt with Write; Read it back.",
             "input_variables": [], "output_variable": "step_0_output",
             "output_schema": "{files: list}", "next_step_sequence_number": 1},
            {"step": 1, "title": "Check hello.txt", **common,
             "task_description": "Read the files step 0 wrote and confirm hello.txt "
                                 "says hello; report ok true or false.",
             "primary_tools": ["Read"],
             "primary_tool_instructions": "Read each file of step_0_output.files.",
             "input_variables": ["step_0_output.files"], "output_variable": "step_1_output",
             "output_schema": "{ok: bool}", "next_step_sequence_number": -1},
        ],
    }


def broken_plan(task: str = GREETING_TASK) -> dict[str, Any]:
    """The greeting plan with a dangling input variable: step 1 reads step 5's output."""
    plan = greeting_plan(task)
    plan["plan"][1]["input_variables"] = ["step_5_output.files"]
    return plan


BROKEN_PLAN_PROBLEM = ("step 1: input_variables: 'step_5_output.files' reads "
                       "'step_5_output', but there is no step 5")
"""What maker's linter says about :func:`broken_plan` (the start of its line)."""


def to_yaml(data: Any) -> str:
    """``data`` as block YAML in its own key order, as a model would write it."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


def handoff(step: int, output: Mapping[str, Any], *, status: str = "complete",
            summary: str | None = None, files: Sequence[str] = (),
            **fields: Any) -> str:
    """A step executor's handoff YAML, as the brief's template asks for it."""
    data: dict[str, Any] = {
        "step": step, "status": status, "output": dict(output),
        "summary": summary or f"Did step {step}.",
        "discoveries": [], "decisions": [], "blockers": [],
        "for_next_agent": "Nothing special.", "files_changed": list(files), "evidence": [],
    }
    data.update(fields)
    return to_yaml(data)


def broken_handoff(step: int) -> str:
    """A handoff the gate rejects: no ``summary``, and ``output`` lacks ``files``."""
    return to_yaml({"step": step, "status": "complete", "output": {"file": "hello.txt"},
                    "files_changed": ["hello.txt"]})


BROKEN_HANDOFF_PROBLEMS = ("summary: missing",
                           "missing `files` (required by the step's output_schema")
"""What maker's gate says about :func:`broken_handoff` (parts of its lines)."""


# -- whole flows --------------------------------------------------------------------


def plan_flow(api: FakeMessagesAPI, *answers: ScriptItem) -> None:
    """``/maker:plan <task>``: the main agent launches the planner (which answers
    ``answers``, in order), runs ``maker status`` and shows it."""
    api.script(MAIN, main_launches_planner(), main_runs("maker status"),
               main_reports_status())
    api.script(PLANNER, *answers)


def step_flow(api: FakeMessagesAPI, work: Sequence[ScriptItem], *answers: ScriptItem,
              main_first: Sequence[ScriptItem] = (), approval: bool = False) -> None:
    """``/maker:step …`` that maker starts: the main agent launches the executor, which
    reads its brief, does ``work`` and answers ``answers`` in order; then the main agent
    runs ``maker step outcome N`` and ends with its sentinel.

    ``main_first``: main turns before the launch (the launch then answers the Stop
    hook's feedback). ``approval``: the step awaits the user's approval, so the main
    agent asks (AskUserQuestion), approves or rejects, and ends accordingly.
    """
    launch = main_launches_executor(after_feedback_naming="is in progress" if main_first
                                    else None)
    tail = ([main_asks_approval(), main_ends_after_approval()]
            if approval else [main_reports_outcome()])
    api.script(MAIN, *main_first, launch, main_runs_outcome(), *tail)
    executor_flow(api, work, *answers)


def executor_flow(api: FakeMessagesAPI, work: Sequence[ScriptItem], *answers: ScriptItem) -> None:
    """The step executor: read the brief (``maker context N``), do ``work``, answer
    ``answers`` in order (each after the first answering the hook's feedback)."""
    api.script(EXECUTOR, executor_reads_brief(), *work, *answers)
