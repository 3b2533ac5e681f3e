"""``maker demo --headless``: ``maker run`` over claude-agent-sdk, with a SCRIPTED model.

One command typed in a new temporary project, ``maker run --approve auto "TASK"``: the
real ``maker run`` (a subprocess of this interpreter), the real claude-agent-sdk and the
bundled Claude Code CLI. Only the model's turns are scripted, served on 127.0.0.1: the
planner answers a four-step plan whose step 1 chooses the branch, and each step's
executor does its step (step 1 chooses the branch, so samples of it vote: one has no
handoff, and maker flags it and draws a fresh sample). Then ``maker status`` shows the
ledger, and the demo the files the steps wrote.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maker_scripted.claude_cli import find_claude, isolated_env
from maker_scripted.errors import DemoError, ScriptError
from maker_scripted.fake_api import FakeMessagesAPI
from maker_scripted.narrate import (
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
from maker_scripted.scenarios import handoff, plugin_env, to_yaml
from maker_scripted.turns import EXECUTOR, PLANNER

__all__ = ["TASK", "headless_plan", "maker_env", "run_headless_demo"]

TASK = "Add a hello.txt greeting and a README"
RUN_TIMEOUT = 180.0
MAKER = [sys.executable, "-m", "maker"]
FLAGGED_ANSWER = "hello.txt looks right to me, probably."
# The SDK warns that allowed tools skip can_use_tool; maker's PreToolUse hook holds the
# limits there. A demo reader would take the warning for a fault.
_QUIET_WARNINGS = "ignore:can_use_tool will not be invoked"


def headless_plan() -> dict[str, Any]:
    """The planner's (scripted) plan: write hello.txt; check it and choose step 2
    (README.md) or step 3 (rewrite it); only the branch chosen runs."""
    common = {"task_type": "action_step", "fallback_tools": [], "input_variables": [],
              "fallback_tool_instructions": "None needed: the primary tools cover it."}

    def step(n: int, title: str, does: str, tools: list[str], schema: str,
             then: int, **more: Any) -> dict[str, Any]:
        return {**common, "step": n, "title": title, "task_description": does,
                "primary_tools": tools, "primary_tool_instructions": f"Use {tools[0]}.",
                "output_variable": f"step_{n}_output", "output_schema": schema,
                "next_step_sequence_number": then, **more}

    return {"task": TASK, "reasoning": "Write the greeting, check it, then either "
                                       "document it or fix it: the check decides.",
            "plan": [
                step(0, "Write hello.txt", "Create hello.txt with the line 'hello'.",
                     ["Write"], "{files: list}", 1),
                step(1, "Check hello.txt", "Read hello.txt. If it says hello, choose "
                     "step 2 as next_step; otherwise step 3.", ["Read"],
                     "{next_step: int, reason: string}", -2, task_type="conditional_step",
                     input_variables=["step_0_output.files"]),
                step(2, "Write README.md", "Write README.md saying that hello.txt "
                     "greets.", ["Write"], "{files: list}", -1),
                step(3, "Rewrite hello.txt", "Rewrite hello.txt with the line 'hello'.",
                     ["Write"], "{files: list}", -1),
            ]}


def _script(api: FakeMessagesAPI, project: Path) -> None:
    """The model's turns, in order. Each executor turn first checks that it was sent
    its step's brief: a demo cannot pass on text the model never saw."""

    def on(n: int, reply: Reply) -> Any:
        title = headless_plan()["plan"][n]["title"]

        def turn(request: RecordedRequest) -> Reply:
            if f"# Step {n}: {title}" not in request.last_user_text:
                raise ScriptError(f"step {n}'s executor was not sent its brief; it ended "
                                 f"with {request.last_user_text[-300:]!r}")
            return reply

        return turn

    def orient(n: int) -> Reply:  # (maker refuses an edit before the step's orientation)
        return Reply.tool("Bash", {"command": f"maker orient {n} none",
                                   "description": "Record my orientation"})

    def write(name: str, content: str) -> Reply:
        return Reply.tool("Write", {"file_path": str(project / name), "content": content})

    api.script(PLANNER, Reply.text(to_yaml(headless_plan())))
    api.script(
        EXECUTOR,
        # Step 0 orients before any edit (maker refuses an edit until it has), then writes.
        on(0, orient(0)),
        write("hello.txt", "hello\n"),
        Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"],
                           summary="Wrote hello.txt with the line 'hello'.")),
        # Step 1 chooses the branch, so it is decided by a vote (a lead of 2): isolated
        # samples, two at a time; the one with no handoff is flagged and replaced.
        on(1, Reply.text(FLAGGED_ANSWER)),
        *[on(1, Reply.text(handoff(1, {"next_step": 2, "reason": "hello.txt says hello"},
                                   summary="hello.txt says hello: step 2 documents it.")))
          for _ in range(2)],
        on(2, orient(2)),
        write("README.md", "# Greeting\n\nhello.txt greets whoever reads it.\n"),
        Reply.text(handoff(2, {"files": ["README.md"]}, files=["README.md"],
                           summary="Wrote README.md about hello.txt.")),
    )


def maker_env(base_url: str, home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``maker`` command whose Claude Code CLI talks only to
    ``base_url``: isolated (a home of its own, a dummy key), this interpreter's
    ``maker`` first on PATH, no verification command from the caller."""
    env = isolated_env(base_url, home, extra={**plugin_env(), **(extra or {})})
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_headless_demo(echo: Echo, *, keep: bool = False, quiet: bool = False,
                      timeout: float = RUN_TIMEOUT) -> Path | None:
    """Plan and run a task with ``maker run`` in a new temporary project, narrating
    to ``echo``; then its ledger (``maker status``) and the files its steps wrote.

    Returns the project's path when ``keep`` (else it is removed). Raises
    ClaudeNotFoundError without the CLI, DemoError when the run goes off script.
    """
    claude = find_claude()
    workdir, project, home = demo_workspace("maker-demo-headless-")
    try:
        say = _HeadlessSay(echo, quiet)
        say.banner(claude_version(claude), project)
        command = ["run", "--approve", "auto", TASK]
        say.heading(1, 3, "Plan and run the task, headless")
        say.paragraph("maker run asks the planner for a plan, lints and stores it, then "
                      "runs each reachable step in its own SDK session, through the gate. "
                      "Its live lines: step, title, state, elapsed, cost.")
        say.line("you type", f'maker run --approve auto "{TASK}"', essential=True)
        with FakeMessagesAPI() as api:
            _script(api, project)
            env = maker_env(api.base_url, home, {"PYTHONWARNINGS": _QUIET_WARNINGS})
            code, tail = _stream([*MAKER, *command], project, env, say, api, timeout)
            try:
                api.assert_done()
            except AssertionError as exc:
                raise DemoError(f"maker run went off script: {exc}\n{tail}") from exc
        if code != 0:
            raise DemoError(f"maker run exited {code}, not 0:\n{tail}")
        say.heading(2, 3, "The ledger: maker status")
        say.paragraph("Every SDK call (the planner's, each step's, the flagged sample) "
                      "is in plans/ledger.jsonl; maker status shows cost per step and "
                      "in total (Claude Code's price for the scripted token counts; "
                      "nothing is billed).")
        say.line("you type", "maker status", essential=True)
        status = subprocess.run([*MAKER, "status"], cwd=project, env=env, text=True,
                                capture_output=True, timeout=60, check=False)
        say.quoted((status.stdout + status.stderr).rstrip("\n").splitlines())
        say.heading(3, 3, "What the steps wrote")
        written = [f for f in project_files(project) if not f.startswith("plans/")]
        say.files(written)
        for rel in written:
            say.excerpt(rel, (project / rel).read_text(encoding="utf-8"))
        say.epilogue(project if keep else None)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return project if keep else None


def _stream(args: list[str], cwd: Path, env: dict[str, str], say: _HeadlessSay,
            api: FakeMessagesAPI, timeout: float) -> tuple[int, str]:
    """Run ``args``, printing its lines live with the scripted model's turns between
    them (one printer: the model's turns arrive on the API's thread). Returns the exit
    code and the output's tail; kills the run after ``timeout`` seconds."""
    lines: queue.Queue[tuple[str, str] | None] = queue.Queue()
    api.on_request = lambda request: lines.put(("model", _turn(request)))
    with subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          start_new_session=True) as process:
        assert process.stdout is not None
        out = process.stdout

        def read() -> None:
            for line in out:
                lines.put(("run", line.rstrip("\n")))
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while True:
            try:
                item = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                process.kill()
                raise DemoError(f"maker run did not finish within {timeout:g}s:\n"
                                + "\n".join(seen[-20:])) from None
            if item is None:
                break
            who, text = item
            if who == "run":
                seen.append(text)
                say.quoted([text])
            elif text:
                say.line("model", text)
        return process.wait(), "\n".join(seen[-20:])


def _turn(request: RecordedRequest) -> str:
    """What the scripted model answered to ``request``, in a few words ("" for the
    client's own side requests)."""
    if request.outcome not in ("scripted", "default") or request.reply is None:
        return ""
    who = "planner" if request.agent == PLANNER else "step executor"
    parts = []
    for block in getattr(request.reply, "blocks", ()):
        if isinstance(block, ToolUseBlock):
            parts.append(f"calls {describe_call(block)}")
        elif isinstance(block, TextBlock) and request.agent == PLANNER:
            parts.append(f"answers its plan YAML ({len(block.text.splitlines())} lines)")
        elif isinstance(block, TextBlock) and block.text.startswith("step: "):
            parts.append("answers its handoff YAML")
        elif isinstance(block, TextBlock):
            parts.append(f"answers {clip(block.text, 50)!r} (no handoff)")
    return f"{who} (scripted) " + ", ".join(parts) if parts else ""


class _HeadlessSay(Say):
    """The headless demo's banner and epilogue."""

    def banner(self, version: str, project: Path) -> None:
        if self.quiet:
            self.echo(f"maker demo --headless (SCRIPTED): maker run, claude-agent-sdk and "
                      f"the Claude Code CLI ({version}); a scripted model on 127.0.0.1, "
                      "no API key")
            return
        self.echo("maker demo --headless (SCRIPTED)")
        self.paragraph(
            f"The real `maker run` drives the real claude-agent-sdk and Claude Code CLI "
            f"({version}) in a new, temporary project. Every model answer is SCRIPTED, "
            "served by a fake Messages API on 127.0.0.1: no real model, no API key, "
            "nothing leaves this machine. Everything else (planning, linting, the "
            "step sessions and their tool limits, the red flags, the gate, the ledger) "
            "is maker's real engine.")
        self.echo(f"  project: {project} (a new git repository)")

    def epilogue(self, kept: Path | None) -> None:
        self.rule("What you just saw")
        if self.quiet:
            self.paragraph("maker run planned 4 steps and ran 3 (step 1 chose the branch by a "
                           "vote; a flagged answer was resampled); every call is in the "
                           "ledger.",
                           essential=True)
        else:
            for point in (
                "The planner's plan was linted and stored in plans/ as /maker:plan would.",
                "Each step ran in a fresh SDK session with its brief and only its tools; "
                "its handoff went through the gate and each was approved by the policy "
                "you gave the run (--approve auto).",
                "Step 1 chooses the branch, so maker drew isolated samples of it and "
                "took the answer two of them agreed on (a vote with a lead of 2).",
                f"One sample ({FLAGGED_ANSWER!r}) was no handoff: maker flagged it, "
                "discarded it and drew a fresh one.",
                "Step 1 chose step 2 as next; step 3, the branch not taken, is skipped.",
                "Every call, the flagged one too, is in the ledger with its cost.",
            ):
                self.bullet(point)
            self.echo("")
        self.paragraph("To run it for real (an API key, or a logged-in Claude Code), in "
                       'your project: maker run "<your task>"; then maker status.',
                       essential=True)
        if kept is not None:
            self.echo(f"The demo project is kept at {kept}")
