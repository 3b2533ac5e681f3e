"""Every input maker reads is bounded: stdin, FILE arguments, transcripts, hook input.

Endless stdin (``/dev/zero``, ``yes``), a FIFO, a directory or a huge file gets a
clear error naming the limit, promptly and in bounded memory: never a hang, never a
MemoryError.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.step_plans import linear
from maker.core.bounded import (
    HOOK_INPUT_LIMIT,
    read_regular_file,
    read_stdin,
    read_tail,
)
from maker.errors import InputError
from maker.hooks.common import _last_assistant_text
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook

ROOT = Path(__file__).resolve().parents[2]
MAKER = [sys.executable, "-m", "maker"]


class _Endless(io.RawIOBase):
    """A stream that never ends (``yes``): reading all of it would never return."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        buffer[:] = b"y\n" * (len(buffer) // 2) + b"y" * (len(buffer) % 2)
        return len(buffer)


def test_stdin_over_the_limit_is_an_error_naming_it() -> None:
    with pytest.raises(InputError, match="standard input is over maker's limit of 1 MiB"):
        read_stdin(2**20, io.BufferedReader(_Endless()))  # type: ignore[arg-type]
    assert read_stdin(10, io.BytesIO(b"0123456789")) == b"0123456789"


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(InputError, match="is a FIFO; maker reads only regular files"):
        read_regular_file(fifo)
    with pytest.raises(InputError, match="is a directory"):
        read_regular_file(tmp_path)
    with pytest.raises(InputError, match="is a device"):
        read_regular_file("/dev/zero")
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing")


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as fh:
        fh.truncate(64 * 2**30)  # sparse: 64 GiB that take no disk
    with pytest.raises(InputError, match=r"huge.yaml is 68,719,476,736 bytes, over maker's "
                                         r"limit of 16 MiB"):
        read_regular_file(huge)


def test_the_tail_of_a_huge_file_starts_at_a_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    with log.open("wb") as fh:
        fh.truncate(64 * 2**30)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n" + b"x" * 100 + b"\n{\"last\": true}\n")
    assert read_tail(log, 60).splitlines() == [b'{"last": true}']


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "huge"])
def test_a_transcript_that_is_not_a_regular_small_file_gives_no_text(tmp_path: Path,
                                                                     kind: str) -> None:
    path = {"fifo": tmp_path / "fifo", "dev-zero": Path("/dev/zero"), "directory": tmp_path,
            "huge": tmp_path / "huge.jsonl"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    if kind == "huge":
        entry = {"message": {"role": "assistant", "content": [{"type": "text",
                                                                "text": "the end"}]}}
        with path.open("wb") as fh:
            fh.truncate(64 * 2**30)
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n" + json.dumps(entry).encode() + b"\n")
        assert _last_assistant_text(path) == "the end"  # read from the tail only
        return
    assert _last_assistant_text(path) == ""


@pytest.mark.parametrize("source", ["/dev/zero", "yes"])
@pytest.mark.parametrize("command", [["plan", "lint", "-"], ["plan", "write", "-"],
                                     ["handoff", "check", "-"]])
def test_endless_stdin_is_an_error_not_a_hang(tmp_path: Path, command: list[str],
                                              source: str) -> None:
    env = dict(os.environ, MAKER_PLANS_DIR=str(tmp_path / "plans"))
    if source == "yes":
        result = subprocess.run(["sh", "-c", "yes | \"$@\"", "sh", *MAKER, *command],
                                env=env, capture_output=True, text=True, timeout=60,
                                check=False, cwd=tmp_path)
    else:
        with open("/dev/zero", "rb") as zero:
            result = subprocess.run([*MAKER, *command], stdin=zero, env=env,
                                    capture_output=True, text=True, timeout=60, check=False,
                                    cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "standard input is over maker's limit of 16 MiB" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("path", ["/dev/zero", "fifo", "."])
def test_a_file_argument_must_be_a_regular_file(tmp_path: Path, path: str) -> None:
    if path == "fifo":
        os.mkfifo(tmp_path / "fifo")
    result = subprocess.run([*MAKER, "plan", "lint", path], capture_output=True, text=True,
                            timeout=60, check=False, cwd=tmp_path)
    assert result.returncode == 2  # a usage error, as for any FILE that cannot be read
    assert "cannot read" in result.stderr and "maker reads only regular files" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_endless_hook_input_is_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BufferedReader(_Endless()))  # type: ignore[arg-type]
    monkeypatch.setattr(sys, "stdin", stdin)
    out = json.loads(run_hook("stop", HANDLERS["stop"]))
    assert out == {"systemMessage": "maker: ignored a stop hook input over 4 MiB (more than "
                                    "Claude Code sends); nothing was checked."}
    assert HOOK_INPUT_LIMIT == 4 * 2**20  # scripts/hook holds the same number


@pytest.mark.parametrize("event", ["stop", "pre-tool-use", "subagent-stop", "session-start",
                                   "user-prompt-submit"])
def test_the_hook_script_bounds_its_stdin(tmp_path: Path, event: str) -> None:
    store = linear(tmp_path, 1)
    store.write_active({"step": 1, "started_at": "x", "session_id": "s"})
    env = dict(os.environ, MAKER_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=str(tmp_path))
    result = subprocess.run(["sh", "-c", f'yes \'"agent_type":"maker:planner" "prompt":'
                                         f'"/maker:x"\' | "{ROOT}/scripts/hook" {event}'],
                            env=env, capture_output=True, text=True, timeout=60, check=False,
                            cwd=tmp_path)
    assert result.returncode == 0
    assert "input over 4 MiB" in json.loads(result.stdout)["systemMessage"]


def test_a_fifo_planted_as_an_attempt_counter_does_not_hang_the_stop_hook(
        tmp_path: Path) -> None:
    from maker.executor.state.lifecycle import start_step

    store = linear(tmp_path, 1)
    start_step(store, 1, session_id="s")
    active = store.read_active()
    assert active is not None
    key = "".join(c for c in f"step1-{active['started_at']}" if c.isalnum() or c in "-_")
    counter = store.state_dir / "attempts" / f"stop-{key}.json"
    counter.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(counter)
    data = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path)}
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "maker.hooks", "stop"],
                            input=json.dumps(data), env=env, capture_output=True, text=True,
                            timeout=30, check=False)
    assert result.returncode == 0
    assert json.loads(result.stdout)["decision"] == "block"


@pytest.mark.parametrize("value", ["9" * 5000, "[" * 100_000 + "]" * 100_000])
def test_a_hook_input_too_long_or_deep_to_read_is_a_message(value: str) -> None:
    raw = '{"hook_event_name": "Stop", "x": ' + value + "}"
    out = json.loads(run_hook("stop", HANDLERS["stop"], stdin=raw))
    assert out == {"systemMessage": "maker: ignored a stop hook input that holds a number "
                                    "too long or a structure too deep to read."}
