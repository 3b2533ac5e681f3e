"""Run the real Claude Code CLI headless, isolated, against a local Messages API.

:func:`find_claude` locates the binary bundled in the ``claude-agent-sdk`` wheel.
:func:`isolated_env` builds an environment that cannot reach a real account: a
throwaway ``HOME``, a dummy key, the base URL of the fake API, no telemetry, no
retries, and none of the caller's ``ANTHROPIC_*`` / ``CLAUDE*`` variables.
:func:`run_claude` runs ``claude -p PROMPT --output-format stream-json --verbose``
and returns a :class:`ClaudeRun` built from the JSONL stream: the answer is the
``result`` field of the final ``type: result`` message, never raw stdout.
"""

from __future__ import annotations

import json
import os
import platform
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from maker.errors import ClaudeNotFoundError
from maker_scripted.errors import ClaudeTimeoutError
from maker_scripted.fake_api import FakeMessagesAPI

__all__ = [
    "ClaudeRun",
    "Client",
    "find_claude",
    "installed_client",
    "pinned_sdk",
    "isolated_env",
    "run_claude",
]

DUMMY_API_KEY = "sk-fake"

# Variables the caller may have that would leak a real account or change the
# client's behaviour under test.
_STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "AWS_BEARER_TOKEN_BEDROCK", "OTEL_")
_STRIPPED_NAMES = frozenset({
    "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING", "MCP_TIMEOUT",
    "IS_SANDBOX", "API_TIMEOUT_MS", "BASH_DEFAULT_TIMEOUT_MS",
})


def find_claude() -> Path:
    """The ``claude`` binary bundled in the installed ``claude-agent-sdk`` package.

    Raises :class:`ClaudeNotFoundError` naming the install command when the
    package, or the binary inside it, is missing.
    """
    spec = find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        raise ClaudeNotFoundError(
            "the Claude Code CLI comes with the claude-agent-sdk package, which is not "
            "installed: pip install claude-agent-sdk (or: pip install 'maker[sdk]')"
        )
    name = "claude.exe" if platform.system() == "Windows" else "claude"
    for location in spec.submodule_search_locations:
        binary = Path(location) / "_bundled" / name
        if binary.is_file():
            return binary
    raise ClaudeNotFoundError(
        f"claude-agent-sdk is installed but has no bundled CLI ({name}) in "
        f"{list(spec.submodule_search_locations)}: reinstall it from a platform wheel with "
        "pip install --force-reinstall claude-agent-sdk"
    )


@dataclass(frozen=True)
class Client:
    """The client a run drives: the claude-agent-sdk release and the Claude Code CLI it
    bundles (``None``: not installed, or its version unreadable)."""

    sdk: str | None
    claude_code: str | None

    def __str__(self) -> str:
        if self.sdk is None:
            return "no claude-agent-sdk installed"
        return f"claude-agent-sdk {self.sdk} (Claude Code {self.claude_code or 'unknown'})"

    def against(self, pinned: str | None) -> str:
        """One line naming this client and saying, plainly, whether it is the release
        ``pinned`` (the one the suite is proven on)."""
        if pinned is None:
            return f"client: {self}; pyproject.toml pins no claude-agent-sdk release"
        if self.sdk == pinned:
            return f"client: {self}, the pinned release"
        return (f"client: {self}: NOT the pinned claude-agent-sdk=={pinned} (pyproject.toml's "
                "dev extra), so a failure may be the client's, not maker's")


_PIN = re.compile(r"""["']claude-agent-sdk\s*==\s*([^"';\s]+)""")


def pinned_sdk(pyproject: Path) -> str | None:
    """The claude-agent-sdk release ``pyproject``'s ``dev`` extra pins (its one
    ``claude-agent-sdk==X`` requirement), or ``None`` when nothing pins it."""
    found = _PIN.search(pyproject.read_text(encoding="utf-8"))
    return found.group(1) if found else None


def installed_client() -> Client:
    """The claude-agent-sdk this interpreter imports, and the Claude Code version of its
    bundled CLI, read from the ``claude.version`` file the wheel puts beside the binary
    (no process runs; ``--version`` only when a wheel lacks that file)."""
    try:
        sdk: str | None = version("claude-agent-sdk")
    except PackageNotFoundError:
        sdk = None
    try:
        binary = find_claude()
    except ClaudeNotFoundError:
        return Client(sdk, None)
    stamp = binary.with_name("claude.version")
    text = stamp.read_text(encoding="utf-8") if stamp.is_file() else _ask_version(binary)
    return Client(sdk, text.split()[0] if text.strip() else None)


def _ask_version(binary: Path) -> str:
    try:
        return subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def isolated_env(
    base_url: str,
    home: Path | str,
    *,
    extra: Mapping[str, str] | None = None,
    inherit: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """An environment for the CLI that talks only to ``base_url``.

    Starts from ``inherit`` (default: ``os.environ``) minus every ``ANTHROPIC_*``
    and ``CLAUDE*`` variable, and minus every ``PATH`` folder that holds a ``maker``
    (an activated virtualenv's, say: the client must find the plugin's own, which it
    puts last); points ``HOME`` and ``CLAUDE_CONFIG_DIR`` into ``home``, and adds
    ``extra`` last (so a test can set anything on purpose).
    """
    source = os.environ if inherit is None else inherit
    env = {k: v for k, v in source.items()
           if not k.startswith(_STRIPPED_PREFIXES) and k not in _STRIPPED_NAMES}
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(
            p for p in env["PATH"].split(os.pathsep)
            if p and not os.access(os.path.join(p, "maker"), os.X_OK))
    home = Path(home)
    env.update({
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    })
    env.update(extra or {})
    return env


@dataclass
class ClaudeRun:
    """One finished CLI run: exit code, the parsed stream, stderr."""

    args: list[str]
    returncode: int
    messages: list[dict[str, Any]]
    stderr: str
    duration: float
    stray_stdout: list[str] = field(default_factory=list)  # lines that were not JSON

    @property
    def session_id(self) -> str | None:
        """The session id the CLI announced in its ``init`` message."""
        init = self.system_messages("init")
        value = init[0].get("session_id") if init else None
        return value if isinstance(value, str) else None

    @property
    def results(self) -> list[dict[str, Any]]:
        """Every ``type: result`` message. A run has more than one when a background
        subagent finishes after the main turn ended: its notification starts a new turn."""
        return [m for m in self.messages if m.get("type") == "result"]

    @property
    def result_message(self) -> dict[str, Any] | None:
        """The last ``type: result`` message, or ``None`` if the run ended without one."""
        results = self.results
        return results[-1] if results else None

    @property
    def result(self) -> str | None:
        """The final answer: the ``result`` field of the final result message."""
        message = self.result_message
        value = message.get("result") if message else None
        return value if isinstance(value, str) else None

    @property
    def is_error(self) -> bool:
        """True if the CLI failed or reported an error result."""
        message = self.result_message
        return self.returncode != 0 or message is None or bool(message.get("is_error"))

    @property
    def tool_results(self) -> dict[str, dict[str, Any]]:
        """Tool result blocks the client produced, by ``tool_use_id``."""
        results: dict[str, dict[str, Any]] = {}
        for message in self.messages:
            if message.get("type") != "user":
                continue
            content = message.get("message", {}).get("content", [])
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = block
        return results

    def system_messages(self, subtype: str | None = None) -> list[dict[str, Any]]:
        """``type: system`` messages, optionally only those of ``subtype``."""
        return [m for m in self.messages if m.get("type") == "system"
                and (subtype is None or m.get("subtype") == subtype)]


def run_claude(
    prompt: str,
    *,
    api: FakeMessagesAPI | None = None,
    base_url: str | None = None,
    cwd: Path | str,
    home: Path | str | None = None,
    plugin_dirs: Iterable[Path | str] = (),
    permission_mode: str | None = "bypassPermissions",
    allowed_tools: Sequence[str] | None = None,
    include_hook_events: bool = True,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
    claude: Path | str | None = None,
) -> ClaudeRun:
    """Run ``claude -p prompt`` against ``api`` (or ``base_url``) and parse its stream.

    ``home`` is the isolated HOME (a temporary one, removed afterwards, if not
    given: pass one to read transcripts after the run). ``permission_mode``
    defaults to ``bypassPermissions`` so tool calls run headless (as root the
    CLI refuses that mode unless ``IS_SANDBOX=1``, which is then set); pass
    ``None`` for the CLI's default mode, where a command's `` !`…` `` lines and
    tool calls go through the real permission checks. ``env`` adds to
    :func:`isolated_env`. A run that outlives ``timeout`` seconds is killed with
    its whole process group and raises :class:`ClaudeTimeoutError`.
    """
    if (api is None) == (base_url is None):
        raise ValueError("pass exactly one of api= or base_url=")
    url = api.base_url if api is not None else str(base_url)
    args = [str(claude or find_claude()), "-p", prompt,
            "--output-format", "stream-json", "--verbose"]
    for plugin_dir in plugin_dirs:
        args += ["--plugin-dir", str(plugin_dir)]
    if permission_mode:
        args += ["--permission-mode", permission_mode]
    if allowed_tools:
        args += ["--allowedTools", ",".join(allowed_tools)]
    if include_hook_events:
        args.append("--include-hook-events")
    args += list(extra_args)
    extra_env: dict[str, str] = {}
    if permission_mode == "bypassPermissions" and _is_root():
        # "--dangerously-skip-permissions cannot be used with root/sudo privileges"
        # unless the CLI is told it runs in a sandbox, as these isolated runs do.
        extra_env["IS_SANDBOX"] = "1"
    extra_env.update(env or {})
    if home is not None:
        return _run(args, Path(cwd), isolated_env(url, home, extra=extra_env), timeout)
    with tempfile.TemporaryDirectory(prefix="claude-home-") as tmp_home:
        return _run(args, Path(cwd), isolated_env(url, tmp_home, extra=extra_env), timeout)


def _is_root() -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> ClaudeRun:
    started = time.monotonic()
    # A session of its own, so a timeout can kill the hooks and shells the CLI started.
    with subprocess.Popen(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, encoding="utf-8", errors="replace", start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(process)
            stdout, stderr = process.communicate()
            timed_out = True
        finally:
            _kill_group(process)  # nothing the run started outlives it
    run = _parse(args, process.returncode, stdout, stderr, time.monotonic() - started)
    if timed_out:
        raise ClaudeTimeoutError(timeout, run)
    return run


def _kill_group(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _parse(args: list[str], returncode: int, stdout: str, stderr: str,
           duration: float) -> ClaudeRun:
    messages: list[dict[str, Any]] = []
    stray: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            parsed = json.loads(line)
        except ValueError:
            stray.append(line)
            continue
        if isinstance(parsed, dict):
            messages.append(parsed)
        else:
            stray.append(line)
    return ClaudeRun(args, returncode, messages, stderr, duration, stray)
