"""A step executor's answer in a wave arrives for its own step only (``arrive``): an
executor maker never bound to a step (no launch it saw, no ``maker context N``) records
nothing, whatever its ``step:`` line says; a bound one whose answer names a sibling step
is refused, and the sibling is untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.crash_wave_states import wave_ready
from harness.run_steps import PROMPT, SESSION
from harness.step_plans import handoff
from maker.executor.parallel.worktree_step import start_in_worktree
from maker.hooks import records
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of

EXEC = "maker:step-executor"


def fire(event: str, **data: Any) -> Any:
    data = {"session_id": SESSION, "cwd": os.getcwd(), "hook_event_name": event,
            "prompt_id": PROMPT, **data}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else None


def wave(project: Path) -> PlanStore:
    store = wave_ready(project)
    start_in_worktree(store, 1, "s")
    start_in_worktree(store, 2, "s")
    return store


def test_an_executor_never_bound_records_nothing_for_the_step_it_names(
        plugin_project: Path) -> None:
    store = wave(plugin_project)
    tree = worktree_of(store, store.load_step(2))
    assert tree is not None
    (tree / "b" / "y.txt").write_text("half-done by step 2's own executor\n")
    main = plugin_project / "b" / "y.txt"
    before = main.read_text() if main.exists() else None
    for i in range(4):  # (more than gate_attempts: nothing is counted against step 2)
        said = fire("subagent-stop", agent_id=f"stray{i}", agent_type=EXEC,
                    last_assistant_message=handoff(2) if i == 3 else "step: 2\n")
        assert "does not know which one you worked on" in json.dumps(said)
        assert records.read_record(f"stray{i}")["outcome"] == "no-step"
    assert store.load_step(2).status == "in-progress"
    assert (main.read_text() if main.exists() else None) == before  # (nothing landed)


def test_a_bound_executors_answer_for_a_sibling_step_is_refused(
        plugin_project: Path) -> None:
    store = wave(plugin_project)
    fire("pre-tool-use", agent_id="ag1", agent_type=EXEC, tool_name="Bash",
         tool_input={"command": "maker context 1"})
    said = fire("subagent-stop", agent_id="ag1", agent_type=EXEC,
                last_assistant_message=handoff(2, status="failed", blockers=["sabotage"]))
    assert said["decision"] == "block"
    assert "this handoff says step 2, but the step in progress is step 1" in said["reason"]
    assert [store.load_step(n).status for n in (1, 2)] == ["in-progress", "in-progress"]
