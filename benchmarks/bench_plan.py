"""How long a 10,000-step plan takes to write and to lint, against a bare YAML parse.

    .venv/bin/python benchmarks/bench_plan.py [--steps N] [--repeats R]

Generates a valid plan (realistic fields; inputs read earlier steps' outputs), then
times, best of R runs each:

- ``yaml.safe_load`` of the text: the baseline;
- ``yaml.load`` with ``CSafeLoader``: for information;
- ``maker plan write``'s core path (clean + lint + parse + store write into a
  temporary plans directory), and the real CLI in a subprocess, for information;
- ``maker plan lint``'s core path (clean + lint + parse).

Exits 1 when write takes more than 3x the baseline or lint more than 2x.
This is a script, not a test: timings belong on a quiet machine, not in CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from maker.planner.linter import lint_text
from maker.store.plan_store import PlanStore

WRITE_LIMIT = 3.0
LINT_LIMIT = 2.0
_TOOLS = (["Read", "Grep"], ["Edit", "Bash"], ["Write"], ["Bash"], ["Glob", "Read"],
          ["WebFetch"], ["mcp__github__create_issue"])


def make_plan_yaml(steps: int) -> str:
    """A valid plan of ``steps`` steps, as a planner would write it."""
    out = ["task: Migrate the billing service to the new payments API, keeping tests green",
           "reasoning: >",
           "  Inventory the call sites first, then change them one module at a time,",
           "  running the tests after each change so a failure points at one module.",
           "plan:"]
    for n in range(steps):
        inputs = [] if n == 0 else [f"step_{n - 1}_output.files"]
        if n >= 5:
            inputs.append(f"step_{n - 5}_output.summary")
        nxt = n + 1 if n < steps - 1 else -1
        tools = _TOOLS[n % len(_TOOLS)]
        out += [
            f"  - step: {n}",
            "    task_type: action_step",
            f"    title: update billing module {n}",
            "    task_description: |",
            f"      Update module billing/m{n}.py to call payments.v2.charge() instead of the",
            "      legacy client. Keep the public function signatures unchanged and adjust",
            "      the module's unit tests.",
            f"    primary_tools: [{', '.join(tools)}]",
            "    fallback_tools: [Bash]",
            f"    primary_tool_instructions: Use {tools[0]} on billing/m{n}.py first.",
            "    fallback_tool_instructions: Use Bash with sed only if Edit cannot match.",
            f"    input_variables: [{', '.join(inputs)}]",
            f"    output_variable: step_{n}_output",
            '    output_schema: "{files: list, summary: string, tests_passed: bool}"',
            f"    next_step_sequence_number: {nxt}",
        ]
    return "\n".join(out) + "\n"


def best_of(repeats: int, func: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def core_lint(text: str) -> None:
    plan, problems = lint_text(text)
    if problems or plan is None:
        raise SystemExit("the generated plan does not lint: " + "; ".join(map(str, problems[:5])))


def core_write(text: str, plans_dir: Path) -> None:
    plan, problems = lint_text(text)
    if problems or plan is None:
        raise SystemExit("the generated plan does not lint: " + "; ".join(map(str, problems[:5])))
    PlanStore(plans_dir).write_plan(plan, plan.task)


def cli_write(plan_file: Path, plans_dir: Path) -> None:
    maker = Path(sys.executable).with_name("maker")
    cmd = [str(maker)] if maker.exists() else [sys.executable, "-m", "maker"]
    env = dict(os.environ, MAKER_PLANS_DIR=str(plans_dir))
    result = subprocess.run([*cmd, "plan", "write", str(plan_file)], env=env,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"maker plan write failed ({result.returncode}): {result.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    text = make_plan_yaml(args.steps)
    c_loader = getattr(yaml, "CSafeLoader", None)
    with tempfile.TemporaryDirectory(prefix="maker-bench-") as tmp:
        root = Path(tmp)
        plan_file = root / "plan.yaml"
        plan_file.write_text(text, encoding="utf-8")
        runs = {"write": 0}

        def write_once() -> None:
            runs["write"] += 1
            target = root / f"plans-{runs['write']}"
            core_write(text, target)
            shutil.rmtree(target)

        def cli_once() -> None:
            runs["write"] += 1
            target = root / f"plans-{runs['write']}"
            cli_write(plan_file, target)
            shutil.rmtree(target)

        rows: list[tuple[str, float | None]] = [
            ("yaml.safe_load (baseline)", best_of(args.repeats, lambda: yaml.safe_load(text))),
            ("yaml.load CSafeLoader (info)",
             best_of(args.repeats, lambda: yaml.load(text, Loader=c_loader))
             if c_loader else None),
            ("maker plan write (core)", best_of(args.repeats, write_once)),
            ("maker plan write (CLI subprocess, info)", best_of(min(args.repeats, 3), cli_once)),
            ("maker plan lint (core)", best_of(args.repeats, lambda: core_lint(text))),
        ]
    baseline = rows[0][1]
    assert baseline is not None
    print(f"{args.steps} steps, {len(text) / 1e6:.1f} MB of YAML, best of {args.repeats}")
    print(f"{'what':<42} {'seconds':>9} {'x baseline':>11}")
    for name, seconds in rows:
        if seconds is None:
            print(f"{name:<42} {'n/a':>9}")
        else:
            print(f"{name:<42} {seconds:>9.3f} {seconds / baseline:>10.2f}x")
    timings = dict(rows)
    write, lint = timings["maker plan write (core)"], timings["maker plan lint (core)"]
    assert write is not None and lint is not None
    failed = []
    if write > WRITE_LIMIT * baseline:
        failed.append(f"write {write / baseline:.2f}x > {WRITE_LIMIT}x")
    if lint > LINT_LIMIT * baseline:
        failed.append(f"lint {lint / baseline:.2f}x > {LINT_LIMIT}x")
    if failed:
        print("FAIL: " + "; ".join(failed))
        return 1
    print(f"ok: write <= {WRITE_LIMIT}x and lint <= {LINT_LIMIT}x the safe_load baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
