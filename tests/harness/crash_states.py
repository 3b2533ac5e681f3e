"""The plan states the crash tests and ``benchmarks/crash_harness.py`` start from, and
the snapshot they compare."""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.step_plans import handoff, linear
from maker.executor.acceptance import approval
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.state import lifecycle
from maker.store.plan_store import PlanStore

_STAMP = re.compile(r"\d{4}-?\d{2}-?\d{2}T\d{2}:?\d{2}:?\d{2}(?:[.-]\d+)?Z")
_HEX = re.compile(r"\b[0-9a-f]{64}\b")


def snapshot(root: Path) -> dict[str, str]:
    """Every path under plans/ and every file's text, with times and digests masked."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for name in dirnames:
            out[_STAMP.sub("<T>", os.path.join(rel_dir, name)) + "/"] = ""
        for name in filenames:
            rel = os.path.join(rel_dir, name)
            if rel in (os.path.join(".maker", "lock"), os.path.join(".maker", "generation")):
                continue  # the lock, and a hint for readers' caches: neither is state
            text = Path(dirpath, name).read_text(encoding="utf-8", errors="replace")
            out[_STAMP.sub("<T>", rel)] = _HEX.sub("<H>", _STAMP.sub("<T>", text))
    return out


def in_progress(project: Path) -> PlanStore:
    """Three steps; step 1 approved, with a handoff and notes; step 2 in progress."""
    store = linear(project, 3, policy="never")
    lifecycle.start_step(store, 1)
    accept_handoff(store, handoff(1, discoveries=["The API is in src/api.py"]))
    approval.approve_step(store, 1, "user")
    lifecycle.start_step(store, 2, session_id="s-1")
    return store


def awaiting(project: Path) -> PlanStore:
    """As ``in_progress``, with step 2's complete handoff accepted: it awaits approval."""
    store = in_progress(project)
    accept_handoff(store, handoff(2, decisions=["Kept the old schema"]))
    return store


def stopped(project: Path) -> PlanStore:
    """As ``in_progress``, with step 2 put back to pending: nothing runs."""
    store = in_progress(project)
    lifecycle.reset_step(store, 2)
    return store
