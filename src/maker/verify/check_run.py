"""One of the project's checks, run: in a shell, with a timeout, its output's tail kept;
for a step, inside the step's OS boundary (``maker.tools.box.boundary``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from maker.core.models import Evidence
from maker.errors import MakerError
from maker.store.settings import load_settings
from maker.tools.box.boundary import boxed_command, step_network
from maker.verify.detect import VerifyCommand

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["TAIL_BYTES", "TAIL_LINES", "TIMEOUT_EXIT_CODE", "Box", "Progress", "ProgressCallback",
           "run_check", "step_box"]

TAIL_LINES = 40
TAIL_BYTES = 4096
TIMEOUT_EXIT_CODE = 124  # what timeout(1) returns
_CHUNK = 65536
_GRACE_S = 5.0  # (a box that is told to stop undoes what its command left, then ends)

@dataclass(frozen=True)
class Progress:
    """What a running verification reports: a command starts, is still running, ends."""

    event: Literal["start", "heartbeat", "done"]
    index: int  # 1-based
    total: int
    command: VerifyCommand
    elapsed_s: float = 0.0
    exit_code: int | None = None


ProgressCallback = Callable[[Progress], None]

Box = Callable[[str], "tuple[str | None, str | None]"]
"""A check's command → ``(refusal, command to run in its place)``."""


def step_box(store: PlanStore, step: int | None, project: Path) -> Box | None:
    """For a step's run: each check's command in the step's OS boundary, as the
    executor's Bash runs (``maker.tools.box.boundary``): the checks run code the step may
    have written, and only maker's sealed record of them is written outside the box.
    None for a run of no step."""
    if step is None or not store.exists():
        return None
    settings = load_settings(store.root)
    here = Path(os.path.realpath(project))
    workspace = None if here == Path(os.path.realpath(store.project)) else here
    try:
        writes = store.load_step(step).spec.writes
    except (MakerError, OSError):  # (no such step, or unreadable: no file named)
        writes = None

    def box(command: str) -> tuple[str | None, str | None]:
        return boxed_command(store.root, step, command, workspace=workspace,
                             setting=settings.boundary, writes=writes,
                             network=step_network(settings.network, None))

    return box


def run_check(cmd: VerifyCommand, index: int, total: int, project: Path, env: dict[str, str],
             timeout: float, heartbeat_s: float, progress: ProgressCallback | None,
             boxed: Box | None = None
             ) -> Evidence:
    start = time.monotonic()
    posix = os.name == "posix"
    refusal, run = boxed(cmd.command) if boxed is not None else (None, None)
    if refusal:
        return Evidence(cmd.command, 126, cmd.kind, 0.0, refusal)
    try:
        proc = subprocess.Popen(
            run or cmd.command, shell=True, cwd=project, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=posix,  # its own process group, so a timeout kills it all
        )
    except OSError as exc:
        return Evidence(cmd.command, 127, cmd.kind, 0.0, f"maker: cannot start: {exc}")
    tail = _Tail()
    assert proc.stdout is not None
    reader = threading.Thread(target=tail.drain, args=(proc.stdout,), daemon=True)
    reader.start()
    timed_out = False
    try:
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= timeout:
                timed_out = True
                _kill(proc, posix)
                break
            try:
                proc.wait(timeout=min(heartbeat_s, timeout - elapsed))
                break
            except subprocess.TimeoutExpired:
                if progress and time.monotonic() - start < timeout:
                    progress(Progress("heartbeat", index, total, cmd,
                                      time.monotonic() - start))
    except BaseException:  # Ctrl-C: leave no orphan test run behind
        _kill(proc, posix)
        raise
    proc.wait()
    reader.join(timeout=5)
    duration = round(time.monotonic() - start, 3)
    text = tail.text()
    code = proc.returncode
    if timed_out:
        code = TIMEOUT_EXIT_CODE
        note = f"maker: timed out after {timeout:g} s (MAKER_VERIFY_TIMEOUT) and was killed"
        text = f"{text}\n{note}" if text else note
    return Evidence(cmd.command, code, cmd.kind, duration, text)


def _kill(proc: subprocess.Popen[bytes], posix: bool) -> None:
    if proc.poll() is not None:
        return
    try:
        if posix:  # (SIGTERM first: a box's first process ends all in it, then undoes)
            os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_GRACE_S)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


class _Tail:
    """Keeps the end of a stream: ``TAIL_LINES`` lines and ``TAIL_BYTES`` at most."""

    def __init__(self) -> None:
        self._buf = b""

    def drain(self, stream: IO[bytes]) -> None:
        keep = TAIL_BYTES * 4  # room to cut at a line boundary and a UTF-8 boundary
        while chunk := os.read(stream.fileno(), _CHUNK):
            self._buf = (self._buf + chunk)[-keep:]
        stream.close()

    def text(self) -> str:
        text = self._buf.decode("utf-8", errors="replace").replace("\r\n", "\n")
        lines = text.rstrip("\n").split("\n")[-TAIL_LINES:]
        out = "\n".join(lines)
        if len(out.encode("utf-8")) > TAIL_BYTES:
            out = out.encode("utf-8")[-TAIL_BYTES:].decode("utf-8", errors="ignore")
            out = out.split("\n", 1)[1] if "\n" in out else out  # drop the cut line
        return out
