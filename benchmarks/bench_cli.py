"""What a ``maker`` command costs the plugin, against ``maker --version``, in one run.

    .venv/bin/python benchmarks/bench_cli.py [--runs N]

The plugin runs ``maker`` several times a step: a ``/maker:`` line's ``maker request``
or ``maker step begin``, the executor's ``maker orient`` and ``maker context``, the main
session's ``maker step outcome`` and ``maker status``. Each runs as the plugin runs it,
``bin/maker`` (``scripts/launch``: the cached interpreter, isolated, the plugin's
``src/``), in a project with a 3-step plan whose step 1 is in progress.

The baseline is ``bin/maker --version``, measured in the same run: the same launch, the
interpreter and click, and no command's module. A command's ratio is what its own
module's imports and its work add. Goals, on medians: the commands that read (``request``,
``next``, ``orient``) at most 2x the baseline; every other command here at most 3.5x.
Every command runs N times, interleaved (one of each in turn, so that a busy machine's
load falls on all alike). Exits 1 when a goal is missed. A script, not a test: timings
need a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from maker.core.models import Plan, PlanStep
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

ROOT = Path(__file__).resolve().parent.parent
MAKER = ROOT / "bin" / "maker"
READ_LIMIT = 2.0
OTHER_LIMIT = 3.5
BASELINE = ("--version",)
COMMANDS: list[tuple[tuple[str, ...], float]] = [
    (("request", "plan", "--session", "s"), READ_LIMIT),
    (("next",), READ_LIMIT),
    (("orient", "1"), READ_LIMIT),
    (("context", "1"), OTHER_LIMIT),
    (("status", "--exit-zero"), OTHER_LIMIT),
    (("step", "outcome", "1"), OTHER_LIMIT),
    (("handoff", "check", "-"), OTHER_LIMIT),
]


def _project(root: Path) -> None:
    steps = [PlanStep(step=n, task_type="action_step", title=f"Step {n}",
                      task_description=f"Do part {n}.", primary_tools=["Read", "Edit"],
                      fallback_tools=["Bash"], primary_tool_instructions="",
                      fallback_tool_instructions="",
                      input_variables=[f"step_{n - 1}_output.result"] if n else [],
                      output_variable=f"step_{n}_output", output_schema="{result: string}",
                      next_step_sequence_number=n + 1 if n < 2 else -1)
             for n in range(3)]
    store = PlanStore(root / "plans")
    store.write_plan(Plan(reasoning="Three parts.", task="Benchmark the CLI", steps=steps))
    start_step(store, 1, force=True, session_id="s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        _project(project)
        env = {**os.environ, "XDG_DATA_HOME": str(Path(tmp) / "data"),
               "CLAUDE_PLUGIN_DATA": str(Path(tmp) / "plugin-data")}
        env.pop("MAKER_PYTHON", None)
        every = [BASELINE, *(c for c, _ in COMMANDS)]
        for cmd in every:  # the interpreter found and cached, each module compiled once
            subprocess.run([str(MAKER), *cmd], cwd=project, env=env, input="",
                           capture_output=True, check=False)
        times: dict[tuple[str, ...], list[float]] = {c: [] for c in every}
        for _ in range(args.runs):
            for cmd in every:
                start = time.perf_counter()
                subprocess.run([str(MAKER), *cmd], cwd=project, env=env, input="",
                               capture_output=True, check=False)
                times[cmd].append(time.perf_counter() - start)
    base = statistics.median(times[BASELINE])
    print(f"{'command':28} {'median ms':>9} {'best ms':>8} {'ratio':>6}  goal")
    print(f"{'maker --version (baseline)':28} {base * 1000:9.1f} "
          f"{min(times[BASELINE]) * 1000:8.1f} {1.0:6.2f}")
    missed = []
    for cmd, limit in COMMANDS:
        median = statistics.median(times[cmd])
        ratio = median / base
        name = "maker " + " ".join(cmd)
        ok = ratio <= limit
        print(f"{name[:28]:28} {median * 1000:9.1f} {min(times[cmd]) * 1000:8.1f} "
              f"{ratio:6.2f}  <= {limit}x {'ok' if ok else 'MISSED'}")
        if not ok:
            missed.append(name)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.runs} runs each")
    if missed:
        print("goal missed: " + ", ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
