"""A PreToolUse check that runs out of time says no. The client skips a hook that has not
answered within its timeout and runs the call unchecked; maker's hook answers before
that (``maker.hooks.__main__.PRE_TOOL_DEADLINE_S``): a maker agent's call, or one whose
input it has not read, is refused; the person's own call goes through, visibly.

Each test runs the real entry (``python -m maker.hooks pre-tool-use``) with a shorter
deadline (``MAKER_HOOK_DEADLINE_S``, which can only shorten it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.step_plans import step_spec, write
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.__main__ import PRE_TOOL_DEADLINE_S, _deadline

HOOK = [sys.executable, "-m", "maker.hooks", "pre-tool-use"]


def _env(project: Path, deadline: str) -> dict[str, str]:
    return dict(os.environ, CLAUDE_PROJECT_DIR=str(project), MAKER_HOOK_DEADLINE_S=deadline)


def test_a_check_made_slow_by_a_symlink_chain_is_refused_not_skipped(tmp_path: Path) -> None:
    """The attack: a boxed call plants a deep symlink chain, the next names it thousands
    of times; resolving every word takes longer than the client waits."""
    project = tmp_path / "p"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"])],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    chain = project / "c"
    chain.mkdir()
    (chain / "target").write_text("x")
    last = "target"
    for i in range(38):
        os.symlink(last, chain / f"l{i}")
        last = f"l{i}"
    data = {"session_id": "sess-1", "cwd": str(project), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "cat " + " ".join(
                [f"c/{last}"] * 6000)},
            "tool_use_id": "t1", "agent_id": uuid.uuid4().hex[:17],
            "agent_type": "maker:step-executor"}
    began = time.monotonic()
    done = subprocess.run(HOOK, input=json.dumps(data), capture_output=True, text=True,
                          cwd=project, env=_env(project, "0.2"), timeout=60)
    took = time.monotonic() - began
    spec = json.loads(done.stdout)["hookSpecificOutput"]
    assert done.returncode == 0 and spec["permissionDecision"] == "deny", done.stdout
    assert "ran out of time (0.2 s)" in spec["permissionDecisionReason"]
    assert took < 30  # (answered well before the client's 30 s)


def test_an_input_that_never_ends_is_refused_at_the_deadline(tmp_path: Path) -> None:
    began = time.monotonic()
    with subprocess.Popen(HOOK, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          cwd=tmp_path, env=_env(tmp_path, "0.3")) as hook:
        assert hook.stdin is not None and hook.stdout is not None
        try:
            hook.stdin.write('{"hook_event_name": "PreToolUse", "agent_type": "maker:')
            hook.stdin.flush()  # (and never closed: the read blocks)
            hook.wait(timeout=20)  # (it ends itself, at its deadline)
            out = hook.stdout.read()
        finally:
            hook.kill()
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert time.monotonic() - began < 20


def test_the_persons_own_call_goes_through_visibly_when_the_check_is_late() -> None:
    code = ("import time; from maker.hooks.__main__ import Watchdog; "
            "dog = Watchdog(0.2); dog.saw(type('H', (), {'agent_type': ''})()); "
            "time.sleep(30)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"systemMessage": "maker: its check of this call ran "
                                       "out of time (0.2 s); the call was let through "
                                       "unchecked."}


@pytest.mark.parametrize(("given", "expected"), [
    (None, PRE_TOOL_DEADLINE_S), ("5", 5.0), ("999", PRE_TOOL_DEADLINE_S),
    ("nan", PRE_TOOL_DEADLINE_S), ("x", PRE_TOOL_DEADLINE_S), ("0", 0.05), ("-3", 0.05),
])
def test_the_deadline_can_only_be_shortened(monkeypatch: pytest.MonkeyPatch,
                                             given: str | None, expected: float) -> None:
    if given is None:
        monkeypatch.delenv("MAKER_HOOK_DEADLINE_S", raising=False)
    else:
        monkeypatch.setenv("MAKER_HOOK_DEADLINE_S", given)
    assert _deadline() == expected
