"""The CLI harness's own logic, with a stand-in binary: fast, no real CLI needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, requires
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
from maker_scripted.claude_cli import Client, installed_client, pinned_sdk

REPO = Path(__file__).resolve().parents[2]


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


# -- which client the suite drives ------------------------------------------------------


def test_the_pin_is_the_dev_extras_exact_release(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project.optional-dependencies]\nsdk = ["claude-agent-sdk>=0.2.180"]\n'
                         'dev = [\n    # a comment\n    "claude-agent-sdk==0.2.189",\n]\n')
    assert pinned_sdk(pyproject) == "0.2.189"
    pyproject.write_text('[project.optional-dependencies]\nsdk = ["claude-agent-sdk>=0.2.180"]\n')
    assert pinned_sdk(pyproject) is None


def test_the_dev_install_pins_the_client_and_the_runtime_extra_stays_a_range() -> None:
    """As the install recorded pyproject.toml's extras (reinstall after moving the pin)."""
    sdk = sorted(r for r in requires("maker") or [] if r.startswith("claude-agent-sdk"))
    assert sdk == [f'claude-agent-sdk=={pinned_sdk(REPO / "pyproject.toml")}; extra == "dev"',
                   'claude-agent-sdk>=0.2.180; extra == "sdk"']


def _bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, stamp: str | None,
             says: str = "") -> None:
    """A stand-in wheel: claude-agent-sdk 9.9.9 whose bundled binary prints ``says``."""
    binary = _fake_claude(tmp_path, f"echo '{says}'\n")
    if stamp is not None:
        (tmp_path / "claude.version").write_text(stamp)
    monkeypatch.setattr(claude_cli, "find_claude", lambda: binary)
    monkeypatch.setattr(claude_cli, "version", lambda name: "9.9.9")


def test_the_client_version_is_read_from_the_wheels_version_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _bundled(tmp_path, monkeypatch, stamp="2.1.400 (Claude Code)\n", says="0.0.0 (wrong)")
    assert installed_client() == Client("9.9.9", "2.1.400")


def test_without_the_version_file_the_binary_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _bundled(tmp_path, monkeypatch, stamp=None, says="2.1.401 (Claude Code)")
    assert installed_client() == Client("9.9.9", "2.1.401")


def test_no_sdk_installed_is_a_client_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(claude_cli, "version", missing)
    monkeypatch.setattr(claude_cli, "find_spec", lambda name: None)
    assert installed_client() == Client(None, None)


@pytest.mark.parametrize(("client", "pinned", "line"), [
    (Client("0.2.189", "2.1.332"), "0.2.189",
     "client: claude-agent-sdk 0.2.189 (Claude Code 2.1.332), the pinned release"),
    (Client("0.2.190", "2.1.340"), "0.2.189",
     "client: claude-agent-sdk 0.2.190 (Claude Code 2.1.340): NOT the pinned "
     "claude-agent-sdk==0.2.189 (pyproject.toml's dev extra), so a failure may be the "
     "client's, not maker's"),
    (Client(None, None), "0.2.189",
     "client: no claude-agent-sdk installed: NOT the pinned claude-agent-sdk==0.2.189 "
     "(pyproject.toml's dev extra), so a failure may be the client's, not maker's"),
    (Client("0.2.190", None), None,
     "client: claude-agent-sdk 0.2.190 (Claude Code unknown); pyproject.toml pins no "
     "claude-agent-sdk release"),
])
def test_the_client_line_says_whether_it_is_the_pinned_one(
        client: Client, pinned: str | None, line: str) -> None:
    assert client.against(pinned) == line


def test_the_report_header_names_the_client_under_xdist(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers print nothing: the line comes from the controller, the report's first."""
    for var in [v for v in os.environ if v.startswith("PYTEST_")]:
        monkeypatch.delenv(var)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider",
         "tests/e2e/test_cli_runner.py::test_exactly_one_of_api_or_base_url"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False).stdout
    lines = out.splitlines()
    assert "1 passed" in lines[-1], out
    assert lines[0] == installed_client().against(pinned_sdk(REPO / "pyproject.toml")), out
    assert "created: 2/2 workers" in out
