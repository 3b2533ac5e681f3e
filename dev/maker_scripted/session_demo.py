"""``maker demo``: maker as people run it, in an interactive Claude Code session.

The real CLI starts in a pseudo-terminal with its defaults (auto permission mode, every
subagent in the background, delivering through SubagentHandback), and the demo types
into it as a newcomer would: ``/maker:plan``, ``/maker:step 0`` (whose first handoff
maker's gate refuses; the step then asks for approval, and the demo answers the question
with a key press, as you would), ``/maker:status``. After each prompt it shows the
screen, and says what maker's hooks did. Only the model is scripted (the same turns as
the end-to-end tests); ``maker demo --print`` shows the same commands in ``claude -p``.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from maker_scripted.claude_cli import find_claude
from maker_scripted.errors import DemoError
from maker_scripted.fake_api import MAIN, FakeMessagesAPI
from maker_scripted.narrate import WIDTH, Echo, Say, claude_version, demo_workspace
from maker_scripted.recorded import RecordedRequest
from maker_scripted.replies import Reply
from maker_scripted.scenarios import (
    BROKEN_HANDOFF_PROBLEMS,
    GREETING_TASK,
    broken_handoff,
    greeting_handoff,
    greeting_plan,
    plugin_env,
    to_yaml,
)

if TYPE_CHECKING:
    from maker_scripted.terminal import Terminal
from maker_scripted.turns import (
    EXECUTOR,
    PLANNER,
    asks_as_maker_says,
    executor_reads_brief,
    executor_writes,
    handback,
    main_launches_executor,
    main_launches_planner,
    main_reports_status,
    main_runs,
    main_shows_status,
    main_waits,
    off_script,
)

__all__ = ["run_session_demo"]

TIMEOUT = 60.0
COLUMNS = WIDTH + 22  # what is shown is quoted, indented by 14
APPROVE = "Approve step 0"
# The client's own status lines ("✻ Sautéed for 1s · done 4:49 AM"): not the conversation.
_SPINNER = re.compile(r"\A[✻✢✶✳✽*·] \S+ for \d")


@dataclass(frozen=True)
class _Stage:
    title: str
    prompt: str
    intro: str
    script: Callable[[FakeMessagesAPI], None]
    done: str  # on the screen when the stage is over


def _verdict(request: RecordedRequest) -> str:
    marker = "maker's verdict on the "
    text = request.latest_text
    if marker not in text:
        raise off_script(request, "expected maker's verdict with the notification")
    return text[text.index(marker):]


def _asks(request: RecordedRequest) -> Reply:
    verdict = _verdict(request)
    if "status: awaiting-approval" not in verdict:
        raise off_script(request, "expected a step awaiting approval")
    return asks_as_maker_says(request, verdict)


def _ends(request: RecordedRequest) -> Reply:
    if "maker: the user approved step 0" not in request.latest_text:
        raise off_script(request, "expected maker's word on your answer")
    return Reply.text("You approved step 0: it is complete.\n\nSTEP_COMPLETE")


def _status(api: FakeMessagesAPI) -> None:
    api.script(MAIN, main_shows_status())


def _plan(api: FakeMessagesAPI) -> None:
    api.script(MAIN, main_launches_planner(), main_waits(), main_runs("maker status"),
               main_reports_status())
    api.script(PLANNER, handback(to_yaml(greeting_plan())))


def _step(api: FakeMessagesAPI) -> None:
    api.script(MAIN, main_launches_executor(), main_waits(), _asks, _ends)
    api.script(EXECUTOR, executor_reads_brief(), executor_writes("hello.txt", "hello\n"),
               handback(broken_handoff(0)), handback(greeting_handoff()))


STAGES = (
    _Stage("Plan the work", f"/maker:plan {GREETING_TASK}",
           "The planner subagent runs in the background and hands back a plan. maker's "
           "hook checks it before it is delivered and writes plans/ itself; the plan's "
           "notification starts the main agent's next turn, with maker's verdict.",
           _plan, "Run /maker:step to start the first step."),
    _Stage("Run step 0", "/maker:step 0",
           "A fresh step-executor subagent does step 0 in the background: you could keep "
           "typing. Its first handoff is incomplete on purpose: maker's gate refuses it, "
           "with every problem. When the corrected one is accepted, the notification's "
           "turn asks you to approve the step; the demo presses Enter for you.",
           _step, "STEP_COMPLETE"),
    _Stage("Check the status", "/maker:status",
           "The command's shell line runs `maker status`; the model shows the table.",
           lambda api: _status(api), "Next: /maker:step"),
)


def run_session_demo(echo: Echo, *, plugin_root: Path, keep: bool = False,
                     quiet: bool = False, timeout: float = TIMEOUT) -> Path | None:
    """Run every stage in one interactive session, in a new temporary project.

    Returns the project's path when ``keep`` (else it is removed). Raises
    ClaudeNotFoundError without the CLI, DemoError when a stage goes off script.
    """
    from maker_scripted.terminal import start_claude

    claude = find_claude()
    say = Say(echo, quiet)
    workdir, project, home = demo_workspace("maker-demo-")
    try:
        _banner(say, claude_version(claude), plugin_root, project)
        with FakeMessagesAPI() as api:
            terminal = start_claude(api, project=project, home=home, plugin_dirs=[plugin_root],
                                    env=plugin_env(), claude=claude, timeout=timeout,
                                    columns=COLUMNS)
            try:
                for number, stage in enumerate(STAGES, 1):
                    say.heading(number, len(STAGES), stage.title)
                    say.paragraph(stage.intro)
                    say.line("you type", stage.prompt, essential=True)
                    seen = len(api.requests)
                    stage.script(api)
                    terminal.submit(stage.prompt)
                    if stage.prompt == "/maker:step 0":
                        terminal.wait_for_text(APPROVE, timeout)
                        _screen(say, terminal.text(), stage.prompt, "the question, on screen",
                                whole=True)
                        say.line("you press", f"Enter: {APPROVE}", essential=True)
                        terminal.choose()
                    terminal.wait(_over(api, terminal, stage.done), f"stage {number} to end",
                                  timeout)
                    _screen(say, terminal.text(), stage.prompt, "the screen")
                    _what_maker_did(say, api.requests[seen:])
                    _check(api, number, stage)
            finally:
                terminal.close()
        _epilogue(say, plugin_root, claude, project if keep else None)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return project if keep else None


def _over(api: FakeMessagesAPI, terminal: Terminal, done: str) -> Callable[[], bool]:
    """Whether a stage is over: its script consumed and ``done`` on the screen."""
    return lambda: not api.remaining() and done in terminal.text()


def _check(api: FakeMessagesAPI, number: int, stage: _Stage) -> None:
    try:
        api.assert_done()
    except AssertionError as exc:
        raise DemoError(f"stage {number} ({stage.prompt}) went off script: {exc}") from exc


def _screen(say: Say, screen: str, prompt: str, what: str, whole: bool = False) -> None:
    """The conversation since ``prompt``, as the screen shows it: without the input box
    below it (``whole``: with what replaces it, a question), the client's spinner and
    status lines, or runs of blank lines."""
    lines = screen.splitlines()
    head = f"❯ {prompt[:40]}"
    start = max((i for i, line in enumerate(lines) if line.startswith(head)), default=0)
    shown: list[str] = []
    for line in lines[start:]:
        if line.startswith("────") and shown and not whole:
            break
        if "◐" in line or "(running " in line or "shift+tab to cycle" in line \
                or _SPINNER.match(line):
            continue
        if not line.strip() and (not shown or not shown[-1].strip()):
            continue
        shown.append(line.rstrip())
    while shown and not shown[-1].strip():
        shown.pop()
    if say.quiet:
        last = [line.strip() for line in shown if line.strip()]
        say.line("screen", last[-1] if last else "(nothing)", essential=True)
        return
    say.line("screen", f"{what}:")
    say.quoted(shown)


def _what_maker_did(say: Say, requests: list[RecordedRequest]) -> None:
    """maker's words that reached the model in this stage: its notes, refusals, verdicts."""
    for request in requests:
        text = request.latest_text
        for result in request.tool_results[-1:]:
            if result.is_error and "hook error: maker rejected" in result.text:
                reason = result.text.split("hook error: ", 1)[1]
                say.line("maker", "REFUSED the hand-back (PreToolUse hook): the subagent "
                         "was told every problem and tried again:\n" + reason)
        if "was launched and runs in the background" in text:
            say.line("maker", "told the main agent at launch: it runs in the background, "
                     "nothing is decided yet, end the turn")
        if "maker's verdict on the " in text:
            verdict = text[text.index("maker's verdict on the "):].splitlines()[0]
            say.line("maker", "in the turn the notification started (UserPromptSubmit "
                     "hook):\n" + verdict)
        if "maker: the user approved step 0" in text:
            say.line("maker", "recorded YOUR answer to the question (PostToolUse hook): "
                     "step 0 is complete; no model can approve it")


def _banner(say: Say, version: str, plugin_root: Path, project: Path) -> None:
    if say.quiet:
        say.echo(f"maker demo (SCRIPTED): an interactive Claude Code session ({version}) "
                 "with maker's plugin; a scripted model on 127.0.0.1, no API key")
        return
    say.echo("maker demo (SCRIPTED)")
    say.echo(textwrap.fill(
        f"The real Claude Code CLI ({version}) runs in a terminal, as you start it: no "
        "flags, so auto permission mode and every subagent in the background. It loads "
        "the maker plugin in a new, temporary project. Every model answer is SCRIPTED, "
        "served by a fake Messages API on 127.0.0.1: no real model, no API key, nothing "
        "leaves this machine. Everything else (the slash commands, subagents, tools and "
        "maker's hooks) is real. The demo types the prompts and shows the screen.", WIDTH))
    say.echo(f"  plugin:  {plugin_root}")
    say.echo(f"  project: {project} (a new git repository)")


def _epilogue(say: Say, plugin_root: Path, claude: Path, kept: Path | None) -> None:
    say.rule("What you just saw")
    if not say.quiet:
        for point in (
            "Subagents ran in the background, as in every interactive session: the main "
            "agent's turn ended at once, you could have kept typing, and maker's verdict "
            "came with each subagent's notification.",
            "maker checked each deliverable before it was handed back: a refused handoff "
            "went back to the executor with every problem (" +
            BROKEN_HANDOFF_PROBLEMS[0].split(":")[0] + ", …); nothing was recorded until "
            "it was right.",
            "Only you approved step 0, by answering the question maker's verdict gave the "
            "main agent; maker's own read-only commands (maker context, status) asked you "
            "nothing.",
            "`maker demo --print` shows the same commands in print mode (claude -p, "
            "subagents in the foreground); `maker demo --headless` shows `maker run`.",
        ):
            say.bullet(point)
        say.echo("")
    say.echo("To use maker for real, with your own Claude Code (or the one this install "
             "brought, which is not on PATH:")
    say.echo(f"  {claude})")
    say.echo(f"  claude --plugin-dir {plugin_root}")
    say.echo("then, in your project: /maker:plan <your task>, /maker:status, /maker:run")
    if kept is not None:
        say.echo(f"The demo project is kept at {kept}")
