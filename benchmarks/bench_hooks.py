"""What maker's Stop hook costs on every stop, against a clean Python start, in one run.

    .venv/bin/python benchmarks/bench_hooks.py [--runs N] [--steps S] [--small S]
    .venv/bin/python benchmarks/bench_hooks.py --against REF [--after REF] [--pairs N]

(The second: this tree against another, the Stop and SubagentStop hooks event by event;
see ``hooks_against.py``.)

Runs the hook exactly as Claude Code does (``scripts/hook stop`` through ``sh -c``,
the hook's JSON on stdin, no MAKER_PYTHON: the interpreter that ``scripts/bootstrap``
finds and caches in a fresh plugin data dir, as for a user) and times:

- a project with no ``plans/``;
- a project with an S-step plan (default 2,000) and a step in progress owned by this
  session (the hook reads its state and blocks the stop), each stop a first one;
- the same with a small plan (default 20 steps).

The baselines are a **clean interpreter**: the same Python the hook runs (the one
bootstrap cached, by its real path, no version-manager shim), started with ``-I -S``:
no ``site``, so no ``.pth`` file, ``sitecustomize`` or user site-packages runs, and no
``PYTHON*`` variable counts. ``python -I -S -c pass`` is the interpreter's start and
nothing else; ``python -I -S -c "import sys; sys.path.append(D); import yaml"`` (D:
where that Python keeps PyYAML) adds PyYAML and nothing else. ``python -c pass`` with
``site`` as installed is printed too, for reference only.

Goals, each judged on medians: no plans at most 0.6x the clean ``-c pass``;
the busy hook at most 1.5x the clean ``import yaml``; the busy hook on the big plan at
most 1.15x the same hook on the small plan. Every command runs N times, interleaved
(one of each in turn, so that a busy machine's load falls on all of them alike); the
table shows the median, the best and the spread (10th to 90th percentile).
Exits 1 when a goal is missed. A script, not a test: timings need a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hooks_against import against, client_env

from maker.core.models import Plan, PlanStep
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "scripts" / "hook"
IDLE_LIMIT = 0.6
BUSY_LIMIT = 1.5
SCALE_LIMIT = 1.15


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


def _busy(where: Path, steps: int) -> Callable[[], None]:
    """A project whose plan has a step in progress owned by session "bench"; returns
    what resets its stop counter (so that each timed stop is a first stop)."""
    store = PlanStore(where / "plans")
    store.write_plan(_plan(steps))
    start_step(store, steps // 2, force=True, session_id="bench")
    attempts = store.state_dir / "attempts"
    return lambda: shutil.rmtree(attempts, ignore_errors=True)


class Row:
    def __init__(self, label: str, cmd: str, cwd: Path,
                 before: Callable[[], None] | None = None) -> None:
        self.label, self.cmd, self.cwd, self.before = label, cmd, cwd, before
        self.samples: list[float] = []

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def line(self) -> str:
        s = sorted(self.samples)
        lo, hi = s[len(s) // 10], s[min(len(s) - 1, len(s) * 9 // 10)]
        return (f"{self.label:52} {self.median * 1000:7.1f} {s[0] * 1000:7.1f} "
                f"{lo * 1000:7.1f}-{hi * 1000:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--against", metavar="BEFORE",
                        help="instead: this tree against BEFORE (a folder or a git ref), "
                             "the Stop and SubagentStop hooks in interleaved pairs")
    parser.add_argument("--after", metavar="AFTER",
                        help="with --against: the tree to compare (default: this checkout)")
    parser.add_argument("--pairs", type=int, default=300, help="with --against")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="maker-bench-hooks-"))
    try:
        if args.against:
            return against(args.against, args.after, args.pairs, args.small, work)
        try:
            env, python, deps = client_env(work)
        except RuntimeError as e:
            print(e)
            return 1
        yaml_dir = next(d for d in deps if (Path(d) / "yaml").is_dir())

        idle, big, small = work / "idle", work / "big", work / "small"
        for d in (idle, big, small):
            d.mkdir()
        reset_big, reset_small = _busy(big, args.steps), _busy(small, args.small)
        stdin = json.dumps({"session_id": "bench", "transcript_path": "/dev/null",
                            "hook_event_name": "Stop", "stop_hook_active": False,
                            "permission_mode": "default", "last_assistant_message": "done",
                            "cwd": ""}).encode()
        hook = f'"{HOOK}" stop'
        clean = f'"{python}" -I -S'
        rows = {
            "pass": Row("clean python -I -S -c pass", f"{clean} -c pass", idle),
            "yaml": Row('clean python -I -S -c "import yaml"',
                        f"{clean} -c 'import sys; sys.path.append({json.dumps(yaml_dir)}); "
                        "import yaml'", idle),
            "site": Row("(reference) python -c pass, site as installed",
                        f'"{python}" -c pass', idle),
            "idle": Row("Stop hook, no plans/", hook, idle),
            "small": Row(f"Stop hook, {args.small}-step plan, step in progress", hook, small,
                         reset_small),
            "big": Row(f"Stop hook, {args.steps}-step plan, step in progress", hook, big,
                       reset_big),
        }
        for row in rows.values():  # each command works (a broken baseline is no baseline)
            if row.before:
                row.before()
            done = subprocess.run(["sh", "-c", row.cmd], input=stdin, cwd=row.cwd,
                                  env=dict(env, CLAUDE_PROJECT_DIR=str(row.cwd)),
                                  capture_output=True, check=False)
            if done.returncode:
                print(f"{row.label}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
                return 1
        for _ in range(3):  # warm the file cache and the .pyc files, untimed
            for row in rows.values():
                _run(row, stdin, env)
        for _ in range(args.runs):
            for row in rows.values():
                row.samples.append(_run(row, stdin, env))
        answers = {}
        for name in ("small", "big"):
            row = rows[name]
            if row.before:
                row.before()
            out = subprocess.run(["sh", "-c", hook], input=stdin, capture_output=True,
                                 env=dict(env, CLAUDE_PROJECT_DIR=str(row.cwd)), cwd=row.cwd,
                                 check=False)
            answers[name] = json.loads(out.stdout or b"{}").get("decision")
            if row.before:
                row.before()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"Stop hook cost, {args.runs} runs of each command, interleaved")
    print(f"interpreter: {python} (Python {sys.version.split()[0]}), run -I -S")
    print(f"{'what':52} {'median':>7} {'best':>7} {'p10-p90 (ms)':>14}")
    for row in rows.values():
        print(row.line())
    goals = [
        ("no plans", rows["idle"].median / rows["pass"].median, IDLE_LIMIT,
         "x clean python -c pass"),
        ("step in progress", rows["big"].median / rows["yaml"].median, BUSY_LIMIT,
         "x clean python -c 'import yaml'"),
        (f"{args.steps} vs {args.small} steps", rows["big"].median / rows["small"].median,
         SCALE_LIMIT, f"x the same hook on the {args.small}-step plan"),
    ]
    print()
    for name, ratio, limit, what in goals:
        print(f"{name:22} {ratio:5.2f}{what:38} (goal <= {limit}x)")
    ok = all(ratio <= limit for _, ratio, limit, _ in goals)
    print(f"(the busy hooks answered decision={answers['big']!r} and {answers['small']!r}: "
          "they really checked the step)")
    ok = ok and answers["big"] == answers["small"] == "block"
    print("ok" if ok else "GOAL MISSED")
    return 0 if ok else 1


def _run(row: Row, stdin: bytes, env: dict[str, str]) -> float:
    if row.before:
        row.before()
    t0 = time.perf_counter()
    subprocess.run(["sh", "-c", row.cmd], input=stdin, cwd=row.cwd,
                   env=dict(env, CLAUDE_PROJECT_DIR=str(row.cwd)),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
