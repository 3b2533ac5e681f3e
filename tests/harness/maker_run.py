"""`maker run` driven in the e2e tests: the real command in a subprocess, its Claude Code
CLI pointed at the scripted Messages API (``run_maker``, ``run_env``), and the step
executor's scripted turns (orient, write hello.txt, hand off) and plans that it runs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, ToolUseBlock
from maker_scripted.headless import maker_env
from maker_scripted.scenarios import handoff

# The step executor as the scripted API names it (its ``maker-agent:`` line).
EXECUTOR = "step-executor"
MAKER = [sys.executable, "-c", "from maker.cli.main import main; main()"]


def run_env(api: FakeMessagesAPI, home: Path,
            extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment `maker run` gets: the CLI pointed at the scripted API."""
    return maker_env(api.base_url, home, extra)


def run_maker(api: FakeMessagesAPI, project: Path, home: Path, *args: str,
              extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`maker run ARGS` in ``project``, to its end (three minutes at most)."""
    return subprocess.run([*MAKER, "run", *args], cwd=project, env=run_env(api, home, extra),
                          capture_output=True, text=True, timeout=180, check=False)


def greeting_run(api: FakeMessagesAPI) -> None:
    """The executor does the greeting plan's two steps, as asked."""
    api.script(
        EXECUTOR,
        writes_hello,
        oriented_then(write_hello),
        Reply.text(handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"])),
        Reply.text(handoff(1, {"ok": True})),
    )


def writes_hello(request: RecordedRequest) -> Reply:
    """Step 0's first turn: its brief read, it orients (maker refuses an edit before)."""
    assert "# Step 0: Write hello.txt" in request.last_user_text  # the plugin's brief
    return orients(0)(request)


def orients(n: int, judged: str = "none") -> Callable[[RecordedRequest], Reply]:
    """``maker orient N <judged>``, as the brief words it (run by maker run's own maker)."""
    def turn(request: RecordedRequest) -> Reply:
        return Reply.tool("Bash", {"command": f"maker orient {n} {judged}",
                                   "description": "Record my orientation"})
    return turn


def oriented_then(reply: Callable[[RecordedRequest], Reply]
                  ) -> Callable[[RecordedRequest], Reply]:
    """The turn after orienting: maker said so, then ``reply``."""
    def turn(request: RecordedRequest) -> Reply:
        assert "oriented (none)" in request.tool_results[-1].text, request.last_user_text
        return reply(request)
    return turn


def write_hello(request: RecordedRequest) -> Reply:
    """A Write of hello.txt in the session's working directory."""
    return Reply.tool("Write", {"file_path": str(Path(request_cwd(request)) / "hello.txt"),
                                "content": "hello\n"})


def writes(*names: str) -> Callable[[RecordedRequest], Reply]:
    """One turn that writes each of ``names`` (``hello``) in the session's working
    directory, all in one message."""
    def turn(request: RecordedRequest) -> Reply:
        root = Path(request_cwd(request))
        return Reply.of(*(ToolUseBlock("Write", {"file_path": str(root / name),
                                                 "content": "hello\n"}) for name in names))
    return turn


def request_cwd(request: RecordedRequest) -> str:
    """The working directory the CLI told the model (its system prompt), else "."."""
    text = request.system_text
    marker = "Primary working directory: "
    return text.split(marker, 1)[1].split("\n", 1)[0].strip() if marker in text else "."


def parallel_plan(writes: tuple[list[str], list[str]], files: tuple[str, str]) -> dict[str, Any]:
    """Two independent steps (neither depends on the other), each writing one file."""
    def one(n: int) -> dict[str, Any]:
        return {"step": n, "task_type": "action_step", "title": f"Write {files[n]}",
                "task_description": f"Write {files[n]} with the step's line.",
                "primary_tools": ["Write", "Bash"], "fallback_tools": [],
                "primary_tool_instructions": "Write the file.",
                "fallback_tool_instructions": "None.", "input_variables": [],
                "output_variable": f"step_{n}_output", "output_schema": "{files: list}",
                "next_step_sequence_number": 1 if n == 0 else -1, "depends_on": [],
                "writes": writes[n]}
    return {"task": "Write two files", "reasoning": "Two independent files.",
            "plan": [one(0), one(1)]}
