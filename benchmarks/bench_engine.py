"""The headless engine's own overhead per step, with an in-process scripted model.

    .venv/bin/python benchmarks/bench_engine.py [--sizes 10,100,1000] [--repeats R]

For each size N: a linear plan of N trivial steps (step k reads step k-1's output) is
stored, then ``Orchestrator.run()`` runs it to the end under ``--approve auto`` with
the real store, transactions, brief, red flagger, gate, verification (no command
configured: it records "nothing to run"), approval, events and the real ledger in
``plans/``. Only the model is scripted: each executor session answers the step's
handoff at once, in process, without the SDK. So the time is maker's alone.

Prints the time per step at each size and the ratio of the largest size's per-step
time to the smallest's (the baseline, measured in the same run). Goal: the
per-step time at 1,000 steps within 1.5x of that at 10 — nothing read or rendered per
step grows with the plan. Exits 1 when the ratio is over the goal.
This is a script, not a test: timings belong on a quiet machine, not in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from maker.core.models import AgentResult, Plan, PlanStep, TaskConfig
from maker.engine.ledger import Call, Ledger
from maker.engine.orchestrator import Orchestrator
from maker.engine.parts import EngineParts
from maker.engine.stops import EXIT_COMPLETE
from maker.executor.acceptance.approval import set_policy
from maker.store.plan_store import PlanStore
from maker.verify.detect import ENV_VARS

GOAL = 1.5


def make_plan(steps: int) -> Plan:
    return Plan(reasoning="A benchmark chain.", task="Benchmark the engine", steps=[
        PlanStep(step=n, task_type="action_step", title=f"Trivial step {n}",
                 task_description=f"Answer the handoff of step {n}.",
                 primary_tools=["Read"], fallback_tools=[], primary_tool_instructions="",
                 fallback_tool_instructions="",
                 input_variables=[f"step_{n - 1}_output.result"] if n else [],
                 output_variable=f"step_{n}_output", output_schema="{result: string}",
                 next_step_sequence_number=n + 1 if n < steps - 1 else -1)
        for n in range(steps)])


class _Session:
    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        output = {"step": step.step, "status": "complete", "output": {"result": "ok"},
                  "summary": f"Did step {step.step}."}
        return AgentResult(output, yaml.safe_dump(output, sort_keys=False), tokens=10,
                           cost_usd=0.0001, duration_ms=1)


def _factory(**_: Any) -> _Session:
    return _Session()


def run_once(steps: int) -> float:
    """Seconds to run a stored plan of ``steps`` steps to its end."""
    root = Path(tempfile.mkdtemp(prefix="maker-bench-engine-"))
    try:
        store = PlanStore(root / "plans")
        store.write_plan(make_plan(steps), "Benchmark the engine")
        set_policy(store, "auto", "benchmark")
        ledger = Ledger(store)
        parts = EngineParts(runner_factory=_factory, ledger=ledger, call_type=Call,
                            session_id="bench")
        orch = Orchestrator(store, parts)
        began = time.perf_counter()
        result = asyncio.run(orch.run())
        elapsed = time.perf_counter() - began
        if result.exit_code != EXIT_COMPLETE:
            raise SystemExit(f"the run did not complete: {result.message}")
        if len(ledger.calls()) != steps:
            raise SystemExit(f"expected {steps} ledger entries, found {len(ledger.calls())}")
        return elapsed
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeats", type=int, default=3,
                        help="best of R runs per size (default 3; the largest size once)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    for var in ENV_VARS.values():  # no verification command: the engine's time only
        os.environ[var] = ""
    os.environ.pop("MAKER_PLANS_DIR", None)
    home = tempfile.mkdtemp(prefix="maker-bench-home-")
    os.environ["HOME"] = home  # the seal key and anything else per-user: private
    per_step: dict[int, float] = {}
    try:
        for n in sizes:
            repeats = 1 if n == max(sizes) and len(sizes) > 1 else args.repeats
            best = min(run_once(n) for _ in range(repeats))
            per_step[n] = best / n
            print(f"{n:>6} steps: {best:8.2f} s in all, {per_step[n] * 1000:8.2f} ms per step "
                  f"(best of {repeats})")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    small, large = min(sizes), max(sizes)
    ratio = per_step[large] / per_step[small]
    verdict = "within" if ratio <= GOAL else "OVER"
    print(f"per step at {large} / per step at {small}: {ratio:.2f}x "
          f"({verdict} the {GOAL}x goal)")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
