"""Facts of the real Claude Code CLI that maker relies on: commands, subagents, hooks,
permissions.

Each test builds nothing of maker: it uses a throwaway plugin ``toy`` (made below) and
pins one behaviour of the pinned Claude Code release (docs/testing.md) that maker's design
relies on. When a CLI upgrade changes one of these, the failing test names the fact.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.queries import hook_events, tool_uses
from harness.scenarios import subagent_report
from maker_scripted import (
    ClaudeRun,
    FakeMessagesAPI,
    RecordedRequest,
    Reply,
)
from maker_scripted.turns import hook_feedback

pytestmark = pytest.mark.e2e

Run = Callable[..., ClaudeRun]

# -- the throwaway plugin ----------------------------------------------------

_RECORD_HOOK = """#!/bin/bash
# Record a hook's stdin and environment; answer with a reply the test left.
event="$1"
dir="${TOY_HOOK_DIR:?}"
n=0
while [ -e "$dir/$event-$n.json" ]; do n=$((n + 1)); done
cat > "$dir/$event-$n.json"
env -0 > "$dir/$event-$n.env"
if [ -f "$dir/once-$event" ]; then cat "$dir/once-$event"; rm -f "$dir/once-$event"
elif [ -f "$dir/always-$event" ]; then cat "$dir/always-$event"; fi
exit 0
"""

_TOY_REQUEST = """#!{python}
# The raw arguments of this session's slash command, as UserPromptSubmit saw them.
import json, os, pathlib, sys
for path in sorted(pathlib.Path(os.environ["TOY_HOOK_DIR"]).glob("UserPromptSubmit-*.json")):
    seen = json.loads(path.read_text())
    if seen["session_id"] == sys.argv[1]:
        print("raw args: [" + seen["prompt"].partition(" ")[2] + "]")
"""

_HOOK_EVENTS = ("UserPromptSubmit", "PreToolUse", "SubagentStop", "Stop")

_FILES = {
    ".claude-plugin/plugin.json": json.dumps(
        {"name": "toy", "version": "0.0.1", "description": "harness test plugin",
         "license": "MIT"}),
    "commands/echo.md": """---
description: Show how a command body is expanded
allowed-tools: Bash(echo:*)
argument-hint: <text>
---
Args: [$ARGUMENTS]
First: [$0] Second: [$1]
Shell says: !`echo hi-from-shell`
Root: ${CLAUDE_PLUGIN_ROOT}
Data: ${CLAUDE_PLUGIN_DATA}
Session: ${CLAUDE_SESSION_ID}
""",
    "commands/unsafe.md": """---
description: Puts $ARGUMENTS in a shell line (never do this)
allowed-tools: Bash(echo:*)
---
Shell: !`echo "got: $ARGUMENTS"`
""",
    "commands/safe.md": """---
description: Hands free text to a script without a shell ever parsing it
allowed-tools: Bash(toy-request:*)
---
Request: !`toy-request ${CLAUDE_SESSION_ID}`
""",
    "agents/helper.md": """---
name: helper
description: A throwaway helper. <example>user: help me
assistant: launching toy:helper</example>
tools: Read, Bash
model: haiku
---
maker-agent: helper
You are the toy helper. Answer briefly.
""",
    "hooks/hooks.json": json.dumps({"hooks": {
        event: [{**({"matcher": "Bash"} if event == "PreToolUse" else {}), "hooks": [
            {"type": "command",
             "command": f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/record-hook" {event}'}]}]
        for event in _HOOK_EVENTS}}),
    "scripts/record-hook": _RECORD_HOOK,
    "bin/toy-tool": '#!/bin/bash\necho "toy-tool ran with: $*"\n',
    "bin/toy-request": _TOY_REQUEST.replace("{python}", sys.executable),
}


@pytest.fixture(scope="module")
def toy_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("toy-plugin")
    for name, text in _FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.startswith(("scripts/", "bin/")):
            path.chmod(0o755)
    return root


class Hooks:
    """What the toy plugin's hooks saw, and what they will answer."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def inputs(self, event: str) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in self._files(event, ".json")]

    def envs(self, event: str) -> list[dict[str, str]]:
        return [dict(item.split("=", 1) for item in p.read_text().split("\0") if "=" in item)
                for p in self._files(event, ".env")]

    def answer_once(self, event: str, payload: dict[str, Any]) -> None:
        (self.dir / f"once-{event}").write_text(json.dumps(payload))

    def answer_always(self, event: str, payload: dict[str, Any]) -> None:
        (self.dir / f"always-{event}").write_text(json.dumps(payload))

    def _files(self, event: str, suffix: str) -> list[Path]:
        found = self.dir.glob(f"{event}-*{suffix}")
        return sorted(found, key=lambda p: int(p.name[len(event) + 1:-len(suffix)]))


@pytest.fixture
def hooks(tmp_path: Path) -> Hooks:
    directory = tmp_path / "hook-records"
    directory.mkdir()
    return Hooks(directory)


@pytest.fixture
def run_toy(run_claude: Run, toy_plugin: Path, hooks: Hooks) -> Run:
    """``run_claude`` with the toy plugin loaded and its hooks recording."""

    def run(prompt: str, **options: Any) -> ClaudeRun:
        env = {"TOY_HOOK_DIR": str(hooks.dir), **options.pop("env", {})}
        return run_claude(prompt, plugin_dirs=[toy_plugin], env=env, **options)

    return run


def _agent_call(prompt: str, **extra: Any) -> Reply:
    return Reply.tool("Agent", {"subagent_type": "toy:helper", "description": "help out",
                                "prompt": prompt, **extra})


# -- (1) a plain prompt ------------------------------------------------------


def test_plain_prompt_returns_the_scripted_text(fake_api: FakeMessagesAPI,
                                                run_claude: Run) -> None:
    fake_api.script("main", Reply.text("hello from the script"))

    run = run_claude("say hello")

    assert run.returncode == 0, run.stderr
    assert run.result == "hello from the script"
    assert not run.is_error
    fake_api.assert_done()
    # With non-essential traffic off, -p sends exactly one request per model turn:
    # no title, summary or quota side requests, no connectivity probe.
    assert [r.path for r in fake_api.requests] == ["/v1/messages?beta=true"]
    (request,) = fake_api.requests_for("main")
    assert request.body["stream"] is True
    assert request.last_user_text.endswith("say hello")
    assert {"Agent", "Bash", "Write"} <= set(request.tool_names)


# -- (2) a plugin command ----------------------------------------------------


def test_command_substitutes_arguments_and_runs_bang_lines(
        fake_api: FakeMessagesAPI, run_toy: Run, toy_plugin: Path, claude_home: Path) -> None:
    fake_api.script("main", Reply.text("ok"))

    run = run_toy("/toy:echo hello 'quoted arg' world")

    assert run.result == "ok"
    fake_api.assert_done()
    sent = fake_api.requests_for("main")[0].last_user_text
    assert "<command-name>/toy:echo</command-name>" in sent
    assert "Args: [hello 'quoted arg' world]" in sent
    assert "First: [hello] Second: [quoted arg]" in sent  # $0 is the first argument
    assert "Shell says: hi-from-shell" in sent
    assert f"Root: {toy_plugin}" in sent
    assert f"Data: {claude_home}/.claude/plugins/data/toy-inline" in sent
    assert f"Session: {run.session_id}" in sent


# -- (3) subagents -----------------------------------------------------------


def test_agent_tool_runs_the_plugin_subagent_and_returns_its_report(
        fake_api: FakeMessagesAPI, run_toy: Run) -> None:
    report = "line one of the report\n  indented line\nlast line"

    def main_reads_report(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results
        return Reply.text(f"the helper said: {subagent_report(result.text)}")

    fake_api.script("main", _agent_call("BRIEF: count the files", run_in_background=False),
                    main_reads_report)
    fake_api.script("helper", Reply.tool("Bash", {"command": "echo from-helper"}),
                    Reply.text(report))

    run = run_toy("delegate")

    assert run.result == f"the helper said: {report}"
    fake_api.assert_done()
    first, second = fake_api.requests_for("helper")
    assert "maker-agent: helper" in first.system_text
    assert first.tool_names == ["Read", "Bash"]  # the agent's `tools:` restriction
    assert first.model == "claude-haiku-5-5"     # the agent's `model: haiku`
    assert first.last_user_text.endswith("BRIEF: count the files")
    assert second.tool_results[0].text == "from-helper"
    # The stream marks the subagent's tool calls with the Agent call's id.
    agent_call = next(t for t in tool_uses(run) if t.name == "Agent")
    helper_bash = next(t for t in tool_uses(run) if t.name == "Bash")
    assert helper_bash.parent_tool_use_id == agent_call.id


def test_agent_tool_runs_in_the_background_unless_told_not_to(
        fake_api: FakeMessagesAPI, run_toy: Run) -> None:
    main_turn_over = threading.Event()

    def main_ends_turn(request: RecordedRequest) -> Reply:
        # Let the helper finish only after the main turn is over, so its
        # notification has to start a new turn.
        threading.Timer(0.3, main_turn_over.set).start()
        return Reply.text("main turn over")

    def helper_answers(request: RecordedRequest) -> Reply:
        main_turn_over.wait(10)
        return Reply.text("helper report")

    fake_api.script("main", _agent_call("BRIEF"), main_ends_turn, "after notification")
    fake_api.script("helper", helper_answers)

    run = run_toy("delegate")

    fake_api.assert_done()
    _, launched, notified = fake_api.requests_for("main")
    assert "Async agent launched successfully" in launched.tool_results[0].text
    assert "<task-notification>" in notified.last_user_text
    assert "<result>helper report</result>" in notified.last_user_text
    # -p waits for background agents; each turn ends with its own result message.
    assert [r["result"] for r in run.results] == ["main turn over", "after notification"]
    assert run.result == "after notification"


# -- (4) SubagentStop and Stop hooks -------------------------------------------


def test_stop_hooks_get_json_on_stdin_and_block_with_feedback(
        fake_api: FakeMessagesAPI, run_toy: Run, hooks: Hooks) -> None:
    hooks.answer_once("SubagentStop", {"decision": "block", "reason": "SUB: fix field x"})
    hooks.answer_once("Stop", {"decision": "block", "reason": "MAIN: no handoff yet"})
    fake_api.script("main", _agent_call("BRIEF", run_in_background=False),
                    "main first stop", "main second stop")
    fake_api.script("helper", "helper first answer", "helper corrected answer")

    run = run_toy("delegate")

    assert run.result == "main second stop"
    fake_api.assert_done()
    helper = fake_api.requests_for("helper")
    assert hook_feedback(helper[1].last_user_text) == "SUB: fix field x"
    assert "SubagentStop hook blocking error from command" in helper[1].latest_text
    main = fake_api.requests_for("main")
    assert hook_feedback(main[2].last_user_text) == "MAIN: no handoff yet"
    # The report that reaches the main agent is the answer the hook let through.
    assert subagent_report(main[1].tool_results[0].text) == "helper corrected answer"

    sub_first, sub_second = hooks.inputs("SubagentStop")
    assert sub_first["hook_event_name"] == "SubagentStop"
    assert sub_first["agent_type"] == "toy:helper"
    assert sub_first["last_assistant_message"] == "helper first answer"
    assert sub_first["stop_hook_active"] is False
    assert sub_second["stop_hook_active"] is True
    assert sub_second["last_assistant_message"] == "helper corrected answer"
    assert sub_first["agent_id"] and Path(sub_first["agent_transcript_path"]).name == (
        f"agent-{sub_first['agent_id']}.jsonl")
    assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= set(sub_first)

    stop_first, stop_second = hooks.inputs("Stop")
    assert (stop_first["stop_hook_active"], stop_second["stop_hook_active"]) == (False, True)
    assert stop_first["last_assistant_message"] == "main first stop"
    assert "agent_type" not in stop_first
    assert stop_first["session_id"] == run.session_id
    # --include-hook-events puts every hook run in the stream.
    seen = [e["hook_event"] for e in hook_events(run)]
    assert seen.count("SubagentStop") == 2 and seen.count("Stop") == 2


def test_a_stop_hook_that_always_blocks_is_overridden_after_eight_continuations(
        fake_api: FakeMessagesAPI, run_toy: Run, hooks: Hooks) -> None:
    hooks.answer_always("Stop", {"decision": "block", "reason": "never satisfied"})
    fake_api.script("main", *[f"attempt {n}" for n in range(9)])

    run = run_toy("go")

    fake_api.assert_done()  # 1 turn + 8 continuations: 9 model calls
    assert len(hooks.inputs("Stop")) == 9
    (note,) = run.system_messages("informational")
    assert "blocked the turn from ending 9 consecutive times" in note["content"]
    assert "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP" in note["content"]
    # Surprise: the overridden run reports an empty result, not the last answer.
    assert run.result == "" and not run.is_error


# -- (5) PreToolUse deny -------------------------------------------------------


def test_pre_tool_use_hook_denies_a_tool_and_the_model_sees_why(
        fake_api: FakeMessagesAPI, run_toy: Run, hooks: Hooks, project: Path) -> None:
    hooks.answer_once("PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "step 3 may not use Bash"}})
    fake_api.script("main", Reply.tool("Bash", {"command": "echo ran > ran.txt"}), "ok")

    run = run_toy("go")

    fake_api.assert_done()
    assert not (project / "ran.txt").exists()
    (result,) = fake_api.requests_for("main")[1].tool_results
    assert result.is_error
    assert result.text == "PreToolUse:Bash hook error: step 3 may not use Bash"
    (seen,) = hooks.inputs("PreToolUse")
    assert seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "echo ran > ran.txt"}
    assert run.result == "ok"


# -- (6) paths and environment -------------------------------------------------


def test_hooks_and_tools_see_the_plugin_paths(
        fake_api: FakeMessagesAPI, run_toy: Run, hooks: Hooks, toy_plugin: Path,
        project: Path, claude_home: Path) -> None:
    fake_api.script("main", Reply.tool("Bash", {"command": "toy-tool a b"}), "ok")

    run_toy("go")

    fake_api.assert_done()
    # The plugin's bin/ is on the Bash tool's PATH.
    assert fake_api.requests_for("main")[1].tool_results[0].text == "toy-tool ran with: a b"
    (env,) = hooks.envs("Stop")
    assert env["CLAUDE_PLUGIN_ROOT"] == str(toy_plugin)
    assert env["CLAUDE_PLUGIN_DATA"] == f"{claude_home}/.claude/plugins/data/toy-inline"
    assert Path(env["CLAUDE_PLUGIN_DATA"]).is_dir()  # created by the CLI
    assert env["CLAUDE_PROJECT_DIR"] == str(project)
    assert env["CLAUDE_CODE_SESSION_ID"] == hooks.inputs("Stop")[0]["session_id"]
    # ...but not on a hook's PATH: hooks must call scripts by their full path.
    assert str(toy_plugin / "bin") not in env["PATH"].split(":")


# -- (7) free-form arguments -------------------------------------------------


def test_arguments_in_a_bang_line_are_shell_code_when_permissions_are_bypassed(
        fake_api: FakeMessagesAPI, run_toy: Run, project: Path) -> None:
    fake_api.script("main", "ok")

    run_toy('/toy:unsafe a"; touch INJECTED; echo "b')

    fake_api.assert_done()
    assert (project / "INJECTED").exists()
    assert "Shell: got: a\nb" in fake_api.requests_for("main")[0].last_user_text


@pytest.mark.parametrize(("arguments", "why"), [
    ("x $(touch INJECTED) y", "needs approval"),
    ('a"; touch INJECTED; echo "b', "needs approval"),
    ("x `touch INJECTED` y", "Parse error"),  # the backtick ends the !`…` early
])
def test_arguments_in_a_bang_line_abort_the_command_in_default_mode(
        fake_api: FakeMessagesAPI, run_toy: Run, project: Path, arguments: str,
        why: str) -> None:
    run = run_toy(f"/toy:unsafe {arguments}", permission_mode=None)

    assert not (project / "INJECTED").exists()
    assert fake_api.requests == []  # the model is never called
    assert run.result is not None
    assert run.result.startswith("Shell command permission check failed for pattern")
    assert why in run.result
    assert not run.is_error  # and the CLI still calls the run a success


def test_free_text_reaches_a_script_intact_through_user_prompt_submit(
        fake_api: FakeMessagesAPI, run_toy: Run, project: Path) -> None:
    text = """add "remember me"; keep `tests` green $(touch INJECTED) it's $HOME"""
    fake_api.script("main", "ok")

    run = run_toy(f"/toy:safe {text}", permission_mode=None)

    assert run.result == "ok"
    fake_api.assert_done()
    sent = fake_api.requests_for("main")[0].last_user_text
    assert f"Request: raw args: [{text}]" in sent
    assert f"ARGUMENTS: {text}" in sent  # appended when the body has no $ARGUMENTS
    assert not (project / "INJECTED").exists()
