"""A step executor's Bash call through a front end's decision, run as the client runs an
allowed call: the tests of maker's OS boundary (``tests/unit/test_boundary.py``,
``test_box_edges.py``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.kernel import require_kernel
from harness.step_plans import step_spec, write
from maker.core.paths import seal_key_path
from maker.engine.tool_limits import make_hooks
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker.store.seal import seal
from maker.tools.box.box_install import BOX

__all__ = ["FRONT_ENDS", "attempt", "env_path", "kernel", "kernel_commits", "plugin_call",
           "running", "state"]


@pytest.fixture
def env_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``maker`` on PATH for the commands run, as the plugin's bin/ is."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")


@pytest.fixture
def running(plugin_project: Path, env_path: None) -> PlanStore:
    """A git project with step 1 in progress, oriented; its tools include Bash."""
    return _running(plugin_project)


@pytest.fixture
def kernel_commits(plugin_project: Path, env_path: None) -> PlanStore:
    """``kernel``, its step's ``writes`` naming ``.git``: a step that may commit, whose box
    leaves the project's git folder writable (and undoes what runs later there)."""
    require_kernel()
    return _running(plugin_project, [".git", "**"])


def _running(project: Path, writes: list[str] | None = None) -> PlanStore:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                      **({"writes": writes} if writes else {}))],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    seal({"warm": "the key"})  # (a sealing key exists to be stolen)
    return store


def state(store: PlanStore) -> dict[str, str]:
    """What must not change: every file of plans/ but maker's own derived ones, the
    repository's config and hooks, maker's data."""
    project = store.project
    places = [store.root, project / ".git/config", project / ".git/hooks",
              seal_key_path().parent, BOX, BOX.with_name("box_setup.py")]
    out: dict[str, str] = {}
    for place in places:
        files = [place] if place.is_file() else sorted(p for p in place.rglob("*")
                                                          if p.is_file())
        for f in files:
            rel = str(f)
            if "/.maker/box/" in rel or rel.endswith(".lock") or "boundary.json" in rel:
                continue
            out[rel] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def plugin_call(store: PlanStore, command: str, **extra: Any) -> tuple[str | None, str]:
    """The plugin's PreToolUse answer: (refusal, the command that runs)."""
    raw = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps({
        "session_id": "sess-1", "cwd": str(store.project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command, **extra}, "tool_use_id": "t1",
        "agent_id": "a1", "agent_type": "maker:step-executor",
        "permission_mode": "bypassPermissions"}))
    out = json.loads(raw) if raw else {}
    return _decided(out, command)


def _engine(store: PlanStore, command: str, **extra: Any) -> tuple[str | None, str]:
    """``maker run``'s PreToolUse answer for the same call."""
    (hook,) = make_hooks(store, store.load_step(1))["PreToolUse"][0].hooks
    out = asyncio.run(hook({"hook_event_name": "PreToolUse", "tool_name": "Bash",  # type: ignore[arg-type]
                            "tool_input": {"command": command, **extra}, "tool_use_id": "t",
                            "cwd": str(store.project), "session_id": "s"}, "t",
                           {"signal": None}))
    return _decided(dict(out), command)


def _decided(out: dict[str, Any], command: str) -> tuple[str | None, str]:
    decided = out.get("hookSpecificOutput") or {}
    if decided.get("permissionDecision") == "deny":
        return str(decided.get("permissionDecisionReason")), command
    return None, str((decided.get("updatedInput") or {}).get("command") or command)


FRONT_ENDS = {"plugin": plugin_call, "engine": _engine}


def attempt(store: PlanStore, front: str, command: str) -> tuple[str | None, set[str]]:
    """(refusal, whether the state changed) for one spelling, run as the client would."""
    before = state(store)
    refusal, run = FRONT_ENDS[front](store, command)
    if refusal is None:
        subprocess.run(["bash", "-c", run], cwd=store.project, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30, check=False)
        time.sleep(1.5) if "sleep 1" in command else None  # (a job left behind: let it act)
    after = state(store)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    return refusal, changed


@pytest.fixture
def kernel(running: PlanStore) -> PlanStore:
    """``running``, on a machine that can make maker's OS boundary (else skipped)."""
    require_kernel()
    return running
