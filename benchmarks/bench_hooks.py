"""What maker's Stop hook costs on every stop, against a bare Python start, in one run.

    .venv/bin/python benchmarks/bench_hooks.py [--runs N] [--steps S]

Runs the hook exactly as Claude Code does (``scripts/hook stop`` through ``sh -c``,
the hook's JSON on stdin) and times, median of N runs each:

- a project with no ``plans/``: against ``python3 -c pass``. Goal: at most 0.4x,
  i.e. no Python start at all;
- a project with an S-step plan (default 2,000) and a step in progress (the hook
  reads its state and blocks the stop): against ``python3 -c "import yaml"``.
  Goal: at most 3x.

Both baselines are measured twice: with the real interpreter (what the launcher
caches), and with ``python3`` as found on PATH (a pyenv shim here, as for many
users). The goals are judged against the real interpreter, the stricter one.
Exits 1 when a goal is missed. A script, not a test: timings need a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from maker.core.models import Plan, PlanStep
from maker.executor.lifecycle import start_step
from maker.store.plan_store import PlanStore

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "scripts" / "hook"
IDLE_LIMIT = 0.4
ACTIVE_LIMIT = 3.0


def _time(cmd: str, stdin: bytes, env: dict[str, str], cwd: Path, runs: int,
          before: object = None) -> float:
    samples = []
    for _ in range(runs):
        if callable(before):
            before()
        t0 = time.perf_counter()
        subprocess.run(["sh", "-c", cmd], input=stdin, env=env, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _plan(steps: int) -> Plan:
    return Plan(reasoning="A long chain.", task="Benchmark the Stop hook", steps=[
        PlanStep(step=n, task_type="action_step", title=f"Step {n} of the chain",
                 task_description=f"Do part {n} of the work.", primary_tools=["Read", "Edit"],
                 fallback_tools=["Bash"], primary_tool_instructions="",
                 fallback_tool_instructions="",
                 input_variables=[f"step_{n - 1}_output.result"] if n else [],
                 output_variable=f"step_{n}_output", output_schema="{result: string}",
                 next_step_sequence_number=n + 1 if n < steps - 1 else -1)
        for n in range(steps)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()

    real = os.path.realpath(sys.executable)
    path_python = shutil.which("python3") or real
    work = Path(tempfile.mkdtemp(prefix="maker-bench-hooks-"))
    try:
        idle = work / "idle"
        busy = work / "busy"
        idle.mkdir()
        busy.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE", "MAKER_"))}
        env.update(MAKER_PYTHON=sys.executable, CLAUDE_PLUGIN_ROOT=str(ROOT),
                   CLAUDE_PLUGIN_DATA=str(work / "data"))

        store = PlanStore(busy / "plans")
        store.write_plan(_plan(args.steps))
        start_step(store, args.steps // 2, force=True, session_id="bench")
        attempts = store.state_dir / "attempts"

        def fresh_counters() -> None:  # each timed stop is a first stop, not a repeat
            shutil.rmtree(attempts, ignore_errors=True)

        stdin = json.dumps({"session_id": "bench", "transcript_path": "/dev/null",
                            "hook_event_name": "Stop", "stop_hook_active": False,
                            "permission_mode": "default", "last_assistant_message": "done",
                            "cwd": ""}).encode()
        hook = f'"{HOOK}" stop'
        rows: list[tuple[str, float]] = []

        def measure(label: str, cmd: str, cwd: Path, before: object = None) -> float:
            run_env = dict(env, CLAUDE_PROJECT_DIR=str(cwd))
            value = _time(cmd, stdin, run_env, cwd, args.runs, before)
            rows.append((label, value))
            return value

        base_pass = measure("python3 -c pass (real interpreter)", f'"{real}" -c pass', idle)
        measure("python3 -c pass (python3 on PATH)", f'"{path_python}" -c pass', idle)
        base_yaml = measure('python3 -c "import yaml" (real interpreter)',
                            f'"{real}" -c "import yaml"', idle)
        measure('python3 -c "import yaml" (python3 on PATH)',
                f'"{path_python}" -c "import yaml"', idle)
        idle_t = measure("Stop hook, no plans/", hook, idle)
        active_t = measure(f"Stop hook, {args.steps}-step plan, step in progress", hook, busy,
                           fresh_counters)
        probe = subprocess.run(["sh", "-c", hook], input=stdin, capture_output=True,
                               env=dict(env, CLAUDE_PROJECT_DIR=str(busy)), cwd=busy, check=False)
        fresh_counters()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"Stop hook cost, median of {args.runs} runs each")
    print(f"{'what':58} {'ms':>8}")
    for label, value in rows:
        print(f"{label:58} {value * 1000:8.1f}")
    idle_ratio = idle_t / base_pass
    active_ratio = active_t / base_yaml
    print()
    print(f"no plans:       {idle_ratio:5.2f}x python3 -c pass          (goal <= {IDLE_LIMIT}x)")
    print(f"step in progress: {active_ratio:5.2f}x python3 -c 'import yaml' (goal <= "
          f"{ACTIVE_LIMIT}x)")
    decision = json.loads(probe.stdout or b"{}").get("decision")
    print(f"(the busy hook answered decision={decision!r}: it really checked the step)")
    ok = idle_ratio <= IDLE_LIMIT and active_ratio <= ACTIVE_LIMIT and decision == "block"
    print("ok" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
