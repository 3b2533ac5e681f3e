"""A step decided by a vote, for the tests of the plugin's ballots: a conditional step 0
in progress (``branching``), an executor's answer choosing a branch (``chose``), its
SubagentStop fired (``fire_stop``), and what the run's record holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.step_plans import handoff, make_step, write
from maker.executor.state.lifecycle import start_step
from maker.executor.votes.ballots import vote_state
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore

EXECUTOR = "maker:step-executor"


def chose(n: int, reason: str = "seen") -> str:
    """Step 0's handoff choosing step ``n`` next."""
    return handoff(0, output={"next_step": n, "reason": reason})


def branching(root: Path, votes: int | None = 3) -> PlanStore:
    """Step 0, conditional (its vote: ``votes``), in progress; steps 1 and 2 its branches."""
    store = write(root, [make_step(0, -2, conditional=True, votes=votes), make_step(1, -1),
                         make_step(2, -1)])
    start_step(store, 0)
    return store


def ballot_file(store: PlanStore) -> dict[str, Any]:
    """Step 0's run record, where each executor's ballot is kept beside its launch."""
    data: dict[str, Any] = json.loads(
        (store.state_dir / "runs" / "step-00.json").read_text(encoding="utf-8"))
    return data


def launch_limit(store: PlanStore, step: int) -> int:
    """How many executors may run step ``step`` at once, as the vote stands."""
    state = vote_state(store, step)
    return state.limit if state is not None else 1


def fire_stop(project: Path, agent_id: str, message: str, agent: str = EXECUTOR) -> Any:
    """The hook's answer to ``agent_id``'s SubagentStop with ``message``."""
    data = {"session_id": "sess-1", "cwd": str(project), "hook_event_name": "SubagentStop",
            "agent_id": agent_id, "agent_type": agent, "stop_hook_active": False,
            "agent_transcript_path": str(project / "agent.jsonl"),
            "last_assistant_message": message}
    out = run_hook("subagent-stop", HANDLERS["subagent-stop"], stdin=json.dumps(data))
    return json.loads(out) if out else None
