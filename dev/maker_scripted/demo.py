"""``maker demo``: the whole flow with the real Claude Code CLI and a scripted model.

Three prompts, typed into a temporary project as a newcomer would: ``/maker:plan``,
``/maker:step 0`` (whose first handoff maker's gate refuses) and ``/maker:status``.
The model's turns are :mod:`maker_scripted.scenarios`' (the same ones the
end-to-end tests run); this module stages them and narrates, live, what the client
sent the scripted model, what it answered, and what maker's hooks decided.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from maker_scripted.claude_cli import ClaudeRun, find_claude, run_claude
from maker_scripted.errors import DemoError
from maker_scripted.fake_api import MAIN, FakeMessagesAPI
from maker_scripted.narrate import (
    WIDTH,
    Echo,
    Say,
    claude_version,
    clip,
    demo_workspace,
    describe_call,
    project_files,
)
from maker_scripted.recorded import RecordedRequest
from maker_scripted.replies import Reply, TextBlock, ToolUseBlock
from maker_scripted.scenarios import (
    BROKEN_HANDOFF_PROBLEMS,
    GREETING_TASK,
    broken_handoff,
    greeting_handoff,
    greeting_plan,
    plan_flow,
    plugin_env,
    step_flow,
    to_yaml,
)
from maker_scripted.turns import (
    EXECUTOR,
    PLANNER,
    after_feedback,
    executor_writes,
    hook_feedback,
    main_reports_decision,
    main_shows_status,
)

__all__ = ["Stage", "run_demo"]

RUN_TIMEOUT = 60.0
_AGENTS = {MAIN: "main agent", PLANNER: "planner", EXECUTOR: "step executor"}


@dataclass(frozen=True)
class Stage:
    """One prompt the user types, and the model's scripted turns for it."""

    title: str
    prompt: str
    intro: str
    script: Callable[[FakeMessagesAPI], None]


def _status_turns(api: FakeMessagesAPI) -> None:
    api.script(MAIN, main_shows_status())


def _approval_turns(api: FakeMessagesAPI) -> None:
    api.script(MAIN, main_reports_decision())


STAGES = (
    Stage("Plan the work", f"/maker:plan {GREETING_TASK}",
          "The planner subagent answers with a plan. maker's SubagentStop hook lints it "
          "and writes plans/ itself: the model never writes a plan file.",
          lambda api: plan_flow(api, to_yaml(greeting_plan()))),
    Stage("Run step 0", "/maker:step 0",
          "A fresh step-executor subagent does step 0 from its brief. Its first handoff "
          "is incomplete on purpose: watch maker's gate send it back.",
          # Print mode offers no AskUserQuestion, so the verdict's question is not asked:
          # the main agent ends with the sentinel `maker step outcome` prints.
          lambda api: step_flow(api, [executor_writes("hello.txt", "hello\n")],
                                broken_handoff(0),
                                after_feedback(greeting_handoff(), *BROKEN_HANDOFF_PROBLEMS))),
    Stage("Approve step 0", "/maker:approve 0",
          "Only you approve a step (or an approval policy you set): maker's "
          "UserPromptSubmit hook records what you typed, and the model is only told.",
          _approval_turns),
    Stage("Check the status", "/maker:status",
          "The command's shell line runs `maker status`; the model shows the table.",
          _status_turns),
)


def run_demo(echo: Echo, *, plugin_root: Path, keep: bool = False, quiet: bool = False,
             timeout: float = RUN_TIMEOUT) -> Path | None:
    """Run every stage in a new temporary project, narrating to ``echo``.

    Returns the project's path when ``keep`` (else it is removed). Raises
    ClaudeNotFoundError without the CLI, DemoError when a stage goes off script.
    """
    claude = find_claude()
    version = claude_version(claude)
    workdir, project, home = demo_workspace("maker-demo-")
    try:
        say = _Say(echo, quiet)
        say.banner(version, plugin_root, project)
        for number, stage in enumerate(STAGES, 1):
            _run_stage(say, number, stage, claude=claude, plugin_root=plugin_root,
                       project=project, home=home, timeout=timeout)
        say.epilogue(plugin_root, project if keep else None, claude)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return project if keep else None


def _run_stage(say: _Say, number: int, stage: Stage, *, claude: Path, plugin_root: Path,
               project: Path, home: Path, timeout: float) -> None:
    say.stage(number, len(STAGES), stage)
    before = project_files(project)
    narrator = _Narrator(say, project)
    with FakeMessagesAPI(on_request=narrator) as api:
        stage.script(api)
        run = run_claude(stage.prompt, api=api, cwd=project, home=home,
                         plugin_dirs=[plugin_root], env=plugin_env(),
                         timeout=timeout, claude=claude)
        try:
            api.assert_done()
        except AssertionError as exc:
            raise DemoError(f"stage {number} ({stage.prompt}) went off script: {exc}\n"
                            f"CLI stderr: {run.stderr[-800:]}") from exc
    if run.is_error:
        raise DemoError(f"stage {number} ({stage.prompt}): the CLI reported an error "
                        f"(exit {run.returncode}): {run.result or run.stderr[-800:]}")
    say.result(run)
    written = [p for p in project_files(project) if p not in before]
    say.files(written)
    for rel in written:
        if rel == "plans/PLAN.md":
            say.excerpt(rel, (project / rel).read_text(encoding="utf-8"), start="## Steps",
                        limit=6)
        elif rel.startswith(("plans/handoffs/", "plans/steps/00")):
            say.excerpt(rel, (project / rel).read_text(encoding="utf-8"))


class _Say(Say):
    """The plugin demo's banner, stages, answers and epilogue."""

    def banner(self, version: str, plugin_root: Path, project: Path) -> None:
        if self.quiet:
            self.echo(f"maker demo (SCRIPTED): the real Claude Code CLI ({version}) and "
                      "maker's plugin; a scripted model on 127.0.0.1, no API key")
            return
        self.echo("maker demo (SCRIPTED)")
        self.echo(textwrap.fill(
            f"The real Claude Code CLI ({version}) runs the maker plugin in a new, "
            "temporary project. Every model answer is SCRIPTED, served by a fake "
            "Messages API on 127.0.0.1: no real model, no API key, nothing leaves "
            "this machine. Everything else (the slash commands, subagents, tools and "
            "maker's hooks) is real.", WIDTH))
        self.echo(f"  plugin:  {plugin_root}")
        self.echo(f"  project: {project} (a new git repository)")

    def stage(self, number: int, total: int, stage: Stage) -> None:
        self.heading(number, total, stage.title)
        self.paragraph(stage.intro)
        self.line("you type", stage.prompt, essential=True)

    def result(self, run: ClaudeRun) -> None:
        text = (run.result or "").strip()
        if self.quiet:
            last = text.splitlines()[-1] if text else "(no answer)"
            self.line("answer", last, essential=True)
            return
        self.line("answer", "the main agent's final message (scripted):")
        self.quoted(text.splitlines())

    def epilogue(self, plugin_root: Path, kept: Path | None, claude: Path) -> None:
        self.rule("What you just saw")
        if self.quiet:
            self.echo("maker's hooks wrote the plan, refused step 0's first handoff and "
                      "recorded the corrected one; step 0 is complete.")
        else:
            for point in (
                "/maker:plan: your words reached the planner exactly as typed (a hook saved "
                "them; no shell line ever holds them). The planner answered a plan; maker's "
                "SubagentStop hook checked it and wrote plans/ (PLAN.md, one file per step).",
                "/maker:step 0: maker started the step, a fresh step-executor subagent read "
                "its brief (`maker context 0`) and did the work. Its first handoff was "
                "refused with every problem listed, it corrected itself, and the gate "
                "recorded the handoff under plans/handoffs/. The step then awaited your "
                "approval (the main agent ended with STEP_AWAITING_APPROVAL).",
                "/maker:approve 0: a hook recorded your decision; no model can approve a "
                "step (in an interactive session /maker:step asks you with a question).",
                "/maker:status: the plan as a table, step 0 complete, step 1 ready.",
            ):
                self.bullet(point)
            self.echo("")
        self.echo("To use maker for real, with your own Claude Code (or the one this "
                  "install brought, which is not on PATH:")
        self.echo(f"  {claude})")
        self.echo(f"  claude --plugin-dir {plugin_root}")
        self.echo("or install it, from a clean clone of the maker repository:")
        self.echo("  /plugin marketplace add /path/to/the/clean/clone")
        self.echo("  /plugin install maker@maker-plugins")
        self.echo("then, in your project: /maker:plan <your task>, /maker:status, /maker:run")
        if kept is not None:
            self.echo(f"The demo project is kept at {kept}")


class _Narrator:
    """Called with each Messages request once its scripted reply is chosen: says what
    the client sent the model that matters, and what the model answered."""

    def __init__(self, say: _Say, project: Path) -> None:
        self.say = say
        self.project = project
        self.seen: set[str] = set()

    def __call__(self, request: RecordedRequest) -> None:
        try:
            self._narrate(request)
        except Exception as exc:  # narration must never break the run
            self.say.line("demo", f"(could not narrate this turn: {exc!r})")

    def _narrate(self, request: RecordedRequest) -> None:
        agent = request.agent or MAIN
        first = agent not in self.seen
        self.seen.add(agent)
        if first and agent == MAIN:
            self._command_lines(request)
        if first and agent != MAIN:
            self.say.line("claude", f"Claude Code started the {agent} subagent: a fresh "
                          "context with its own system prompt")
        if not first or agent != MAIN:
            self._what_came_back(agent, request)
        if isinstance(request.reply, Reply):
            self._reply(agent, request, request.reply)

    def _command_lines(self, request: RecordedRequest) -> None:
        text = request.last_user_text
        if "<user-text>" in text:
            said = text[text.index("<user-text>"):text.index("</user-text>") + 12]
            self.say.line("maker", "saved your words (UserPromptSubmit hook); the command's "
                          "line `maker request plan` printed them for the model:\n" + said)
        for key in ("STARTED:", "REFUSED:"):
            if key in text:
                start = text.index(key)
                self.say.line("maker", "the command's line `maker step begin` printed:\n"
                              + text[start:text.index("\n", start)])
        if "maker-command: status" in text and "Plan: " in text:
            self.say.line("maker", "the command's line `maker status` printed the table "
                          "for the model")

    def _what_came_back(self, agent: str, request: RecordedRequest) -> None:
        reason = hook_feedback(request.last_user_text)
        if reason is not None:
            hook = "SubagentStop" if agent != MAIN else "Stop"
            self.say.line("maker", f"{hook} hook BLOCKED that answer (nothing recorded) and "
                          "sent it back:\n" + reason)
            return
        for result in request.tool_results:
            if result.is_error and result.text.startswith("PreToolUse:"):
                self.say.line("maker", "PreToolUse hook DENIED the call:\n" + result.text)
            elif result.text.startswith("# Step "):
                n = len(result.text.splitlines())
                self.say.line("claude", f"ran it; the brief ({n} lines) begins: "
                              f"{result.text.splitlines()[0]}")
            elif "[Subagent hand-back]" in result.text:
                self._accepted()
            elif result.text.startswith("step ") and "\nstatus: " in result.text:
                self.say.line("maker", "`maker step outcome` printed:\n" + result.text.strip())

    def _accepted(self) -> None:
        handoffs = sorted((self.project / "plans" / "handoffs").glob("*.md"))
        if handoffs:
            rel = handoffs[-1].relative_to(self.project).as_posix()
            self.say.line("maker", f"SubagentStop hook ACCEPTED the handoff through the gate "
                          f"and wrote {rel}")
        elif (self.project / "plans" / "PLAN.md").is_file():
            steps = len(list((self.project / "plans" / "steps").glob("*.md")))
            self.say.line("maker", f"SubagentStop hook ACCEPTED the plan and wrote plans/ "
                          f"(PLAN.md and {steps} step files)")
        self.say.line("claude", "handed the subagent's final message back to the main agent")

    def _reply(self, agent: str, request: RecordedRequest, reply: Reply) -> None:
        who = f"{_AGENTS.get(agent, agent)} (scripted)"
        for block in reply.blocks:
            if isinstance(block, ToolUseBlock):
                self.say.line("model", f"{who} calls {describe_call(block)}")
            elif isinstance(block, TextBlock):
                self.say.line("model", f"{who} answers: "
                              f"{_describe_text(agent, request, block.text)}")



def _describe_text(agent: str, request: RecordedRequest, text: str) -> str:
    again = hook_feedback(request.last_user_text) is not None
    if agent == PLANNER:
        return ("the corrected plan YAML" if again else "its plan YAML") + \
            f" ({len(text.splitlines())} lines) as its final message"
    if agent == EXECUTOR:
        return ("the corrected handoff YAML" if again else "its handoff YAML") + \
            f" ({len(text.splitlines())} lines) as its final message"
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return f"its final message, ending {clip(lines[-1], 50)!r}" if lines else "(nothing)"
