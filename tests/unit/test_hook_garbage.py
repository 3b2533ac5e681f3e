"""Garbage to every hook: never a traceback, never an internal error, always JSON.

Seeded random hook inputs (wrong types, NUL bytes, paths that are devices, FIFOs,
directories or far too long) against a plan with a step in progress.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.step_plans import linear
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook

VALUES = [None, 5, -1, 1e308, True, "", "s", ".", "/", "/dev/zero", "/etc/passwd",
          "/proc/self/fd/0", "\x00", "a\x00b", "x" * 10_000, [], {}, [1], {"a": 1},
          "maker:step-executor", "maker:planner", "maker:reviewer", "Bash", "Write",
          "../../etc/passwd", "/maker:step two", "/maker:plan " + "y" * 5000,
          {"command": "rm -rf plans"}, {"file_path": "plans/x"}, {"file_path": "\x00"},
          {"command": "\x00"}, {"file_path": 5}, {"file_path": "x" * 10_000}]
KEYS = ["cwd", "session_id", "transcript_path", "agent_transcript_path", "agent_type",
        "agent_id", "tool_name", "tool_input", "prompt", "stop_hook_active",
        "last_assistant_message", "permission_mode"]


@pytest.mark.parametrize("seed", range(3))
def test_garbage_never_breaks_a_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     seed: int) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    store = linear(tmp_path, 3)
    start_step(store, 1, session_id="s")
    rng = random.Random(seed)
    for _ in range(300):
        event = rng.choice(sorted(HANDLERS))
        data = {"hook_event_name": event}
        data.update({k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.randint(0, len(KEYS)))})
        out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
        assert "hit an error" not in out and "hook crashed" not in out, (data, out)
        assert out == "" or isinstance(json.loads(out), dict)
