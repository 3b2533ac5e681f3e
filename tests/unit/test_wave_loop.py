"""`maker run --parallel N`'s loop, with in-process sessions: the budget is
shared, and a budget stop in one step stops every session of the wave at its next await,
each step left in progress and resumable; the next run finishes the plan."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.engine_fakes import FakeBudget, FakeCall, FakeLedger
from harness.step_plans import SWEPT, make_step, write
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.orchestrator import Orchestrator
from maker.engine.parts import EngineParts
from maker.engine.stops import EXIT_BUDGET, EXIT_COMPLETE
from maker.executor.protocol.orient import record_orient
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of

pytestmark = pytest.mark.usefixtures("project")


class Session:
    """Step 2 waits on its model for a long time; every other step answers in 0.2 s, at
    a cost: the first answer spends the run's budget."""

    def __init__(self, store: PlanStore, where: Path, slow: set[int], seen: list[int]) -> None:
        self.store, self.where, self.slow, self.seen = store, where, slow, seen

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        self.seen.append(step.step)
        await asyncio.sleep(30 if step.step in self.slow else 0.2)
        record_orient(self.store, step.step, "none")
        rel = f"chain{step.step % 2}/s{step.step}.txt"
        (self.where / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.where / rel).write_text(f"{step.step}\n")
        output = {"step": step.step, "status": "complete", "output": {"result": "ok"},
                  "summary": "done", "files_changed": [rel], "sweep": SWEPT}
        return AgentResult(output, yaml.safe_dump(output), cost_usd=1.0, duration_ms=1)


def chains(project: Path) -> PlanStore:
    """Steps 1 → 3 (chain 1) and 2 → 4 (chain 0), each chain writing its own folder."""
    for cmd in ("git init -q", "git config user.email a@b", "git config user.name a",
                "git commit -q --allow-empty -m base"):
        subprocess.run(cmd, shell=True, cwd=project, check=True)
    steps = []
    for n, nxt, deps in ((1, 2, []), (2, 3, []), (3, 4, [1]), (4, -1, [2])):
        step = make_step(n, nxt, depends_on=deps)
        object.__setattr__(step, "writes", [f"chain{n % 2}/**"])
        object.__setattr__(step, "primary_tools", ["Write", "Read"])  # (they write files)
        steps.append(step)
    return write(project, steps)


def orchestrate(store: PlanStore, budget: float | None, slow: set[int],
                seen: list[int]) -> Any:
    ledger = FakeLedger()

    def factory(*, cwd: Path | None = None, **_: Any) -> Session:
        return Session(store, cwd or store.project, slow, seen)

    def limits(store: PlanStore, record: Any) -> dict[str, Any]:
        return {"cwd": worktree_of(store, record)}  # (a wave step works in its worktree)

    parts = EngineParts(runner_factory=factory, ledger=ledger, call_type=FakeCall,
                        budget=FakeBudget(budget, ledger) if budget is not None else None,
                        limits=limits)
    return asyncio.run(Orchestrator(store, parts, parallel=2).run())


def test_a_budget_stop_stops_every_session_of_the_wave_and_the_next_run_finishes(
        project: Path) -> None:
    store = chains(project)
    seen: list[int] = []
    began = time.monotonic()
    stopped = orchestrate(store, 0.5, {2}, seen)
    assert stopped.exit_code == EXIT_BUDGET, stopped.message
    assert time.monotonic() - began < 20  # step 2's 30 s wait was cut, not waited out
    assert sorted(seen) == [1, 2]  # step 3 never reached its model: the budget said no
    statuses = {n: store.load_step(n).status for n in (1, 2, 3, 4)}
    assert statuses[2] == "in-progress" and store.load_step(2).meta.get("worktree")
    assert statuses[4] == "pending"

    finished = orchestrate(store, None, set(), seen)
    assert finished.exit_code == EXIT_COMPLETE, finished.message
    assert all(store.load_step(n).status == "complete" for n in (1, 2, 3, 4))
    for n in (1, 2, 3, 4):
        assert (project / f"chain{n % 2}" / f"s{n}.txt").read_text() == f"{n}\n"
    assert not list((store.root / ".maker" / "worktrees").glob("step-*"))
