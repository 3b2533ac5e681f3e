"""The CLI harness's own logic, with a stand-in binary: fast, no real CLI needed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from harness.queries import tool_uses
from maker_scripted import (
    ClaudeNotFoundError,
    ClaudeTimeoutError,
    claude_cli,
    find_claude,
    isolated_env,
    run_claude,
)


def _fake_claude(tmp_path: Path, script: str) -> Path:
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/bash\n" + script)
    binary.chmod(0o755)
    return binary


def test_find_claude_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_cli, "find_spec", lambda name: None)
    with pytest.raises(ClaudeNotFoundError, match="pip install claude-agent-sdk"):
        find_claude()


def test_isolated_env_drops_the_callers_account_and_points_at_the_fake(tmp_path: Path) -> None:
    caller = {"PATH": "/bin", "ANTHROPIC_API_KEY": "real-key", "ANTHROPIC_AUTH_TOKEN": "t",
              "CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDECODE": "1", "KEEP_ME": "yes"}

    env = isolated_env("http://127.0.0.1:9", tmp_path, inherit=caller, extra={"X": "1"})

    assert env["ANTHROPIC_API_KEY"] == "sk-fake"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["HOME"] == str(tmp_path)
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / ".claude")
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert (env["KEEP_ME"], env["X"], env["PATH"]) == ("yes", "1", "/bin")
    assert not {"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDECODE"} & set(env)


def test_run_parses_the_stream_and_takes_the_last_result(tmp_path: Path) -> None:
    lines = [
        {"type": "system", "subtype": "init", "session_id": "s1"},
        {"type": "assistant", "parent_tool_use_id": None, "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": "first"},
        {"type": "result", "subtype": "success", "is_error": False, "result": "second"},
    ]
    stdout = "\n".join(json.dumps(line) for line in lines) + "\nnot json\n"
    binary = _fake_claude(tmp_path, f"cat <<'EOF'\n{stdout}EOF\necho oops >&2\n")

    run = run_claude("hi", base_url="http://127.0.0.1:9", cwd=tmp_path, claude=binary)

    assert run.returncode == 0 and not run.is_error
    assert run.session_id == "s1"
    assert run.result == "second"
    assert [t.name for t in tool_uses(run)] == ["Bash"]
    assert run.stray_stdout == ["not json"]
    assert run.stderr == "oops\n"
    assert run.args[1:3] == ["-p", "hi"]
    assert "--include-hook-events" in run.args


def test_permission_mode_bypass_sets_is_sandbox_only_for_root(tmp_path: Path) -> None:
    binary = _fake_claude(tmp_path, """echo '{"type": "result", "result": "'$IS_SANDBOX'"}'\n""")

    run = run_claude("hi", base_url="http://127.0.0.1:9", cwd=tmp_path, claude=binary)

    assert run.args[run.args.index("--permission-mode") + 1] == "bypassPermissions"
    assert run.result == ("1" if os.geteuid() == 0 else "")


def test_a_hanging_run_is_killed_with_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child-still-alive"
    binary = _fake_claude(
        tmp_path, f'echo \'{{"type": "system"}}\'\n(sleep 0.6; touch {marker}) &\nsleep 30\n')

    with pytest.raises(ClaudeTimeoutError) as failure:
        run_claude("hi", base_url="http://127.0.0.1:9", cwd=tmp_path, claude=binary,
                   timeout=0.3)

    assert failure.value.run.messages == [{"type": "system"}]
    assert failure.value.run.returncode != 0
    time.sleep(0.6)
    assert not marker.exists()  # the CLI's children (hooks, shells) die with it


def test_exactly_one_of_api_or_base_url(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        run_claude("hi", cwd=tmp_path)
