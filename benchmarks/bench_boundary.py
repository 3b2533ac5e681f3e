"""What the OS boundary costs a step executor's Bash call, against the bare call.

A person gains a boundary the kernel holds (nothing the executor runs can write
``plans/``, maker's data or git's config, however it is spelled); they pay for it in
the time each Bash call takes. Goal: at most 30 ms added per call on a 2-core machine.

Measured in one run, interleaved, so a busy machine slows both alike:

- **bare**: ``bash -c CMD``, as the client runs an allowed call;
- **boxed**: ``bash -c`` of the same command as maker rewrites it (``maker-box``), for a
  step in the main checkout (plans/, data dirs, git's config read-only; the key and
  sockets hidden; its own ``/tmp``), the same with no network but its own loopback (a
  step whose tools only read, ``maker verify``'s checks), for a step in its own worktree
  (the main checkout read-only around it), and the box as it was before its own
  ``/tmp`` and network (the shared ``/tmp``, the machine's network), and the main agent's
  own box (every command of the main agent's while a plan exists);
- **a larger tree**: a step in the main checkout of a project holding a copy of maker's
  own sources, tests and docs (some 1,300 files and folders: the box walks below the top
  of the step's folder before and after each command), and, with ``--against``, the box
  of that tree in the same project;
- **decision**: what the PreToolUse decision adds in the hook's process (the box's
  spec, read or written), against the decision with ``boundary: off``.

    .venv/bin/python benchmarks/bench_boundary.py [--runs N] [--command CMD] [--against REF]

``--against REF`` (a checkout or a git ref) adds the box of that tree, its spec made by
its own code for the same project, to the same interleaved run: a change to the box
measured against the box before it.
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

from hooks_against import _tree

from maker.core.models import Plan, PlanStep
from maker.executor.protocol.limits import executor_limits
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.main_bash import steps_repository
from maker.store.plan_store import PlanStore
from maker.tools.box.boundary import boxed_command, protection, wrap
from maker.tools.box.box_spec import spec_for
from maker.tools.box.main_box import main_boxed


def _project(root: Path, copy: bool = False) -> PlanStore:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for part in ("src", "tests", "docs", "benchmarks") if copy else ():
        shutil.copytree(Path(__file__).parents[1] / part, root / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    store = PlanStore(root / "plans")
    step = PlanStep(step=1, title="Bench", task_description="Bench.", task_type="action_step",
                    primary_tools=["Read", "Write", "Bash"], fallback_tools=[],
                    primary_tool_instructions="", fallback_tool_instructions="",
                    input_variables=[], output_variable="step_1_output", output_schema="{}",
                    next_step_sequence_number=-1)
    store.write_plan(Plan(reasoning="Because.", steps=[step], task="Bench"))
    start_step(store, 1)
    record_orient(store, 1, "none")
    return store


_OTHER = """
import json, sys
from pathlib import Path
from maker.tools.box.boundary import boxed_command
_, run = boxed_command(Path(sys.argv[1]), 9, sys.argv[2])
print(json.dumps(run))
"""


def _other_box(ref: str, plans: Path, command: str, work: Path) -> str:
    """``command`` as the tree at ``ref`` boxes it for step 9 of the plan in ``plans``."""
    root = work / "against" if (work / "against").is_dir() else _tree(ref, work, "against")
    out = subprocess.run([sys.executable, "-c", _OTHER, str(plans), command],
                         env={**os.environ, "PYTHONPATH": str(root / "src")},
                         capture_output=True, text=True, check=True).stdout
    return str(json.loads(out))


def _time(command: str, cwd: Path) -> float:
    began = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - began) * 1000


def _row(name: str, samples: list[float], base: float | None) -> str:
    med = statistics.median(samples)
    added = "" if base is None else f"{med - base:+.1f}"
    ratio = "" if base is None else f"{med / base:.1f}x"
    return (f"| {name} | {med:.1f} | {statistics.quantiles(samples, n=10)[-1]:.1f} | "
            f"{added} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--command", default="echo hi > out.txt && cat out.txt")
    parser.add_argument("--against", help="another tree's box in the same run (a ref)")
    args = parser.parse_args()
    found = protection(refresh=True)
    if not found.kernel:
        sys.exit(f"no OS boundary on this machine: {found.how}")
    with tempfile.TemporaryDirectory(prefix="bench-boundary-") as scratch:
        store = _project(Path(scratch) / "project")
        large = _project(Path(scratch) / "large", copy=True)
        entries = sum(len(d) + len(f) for _, d, f in os.walk(large.project))
        tree = store.root / ".maker" / "worktrees" / "step-1-bench"
        (tree / "plans").mkdir(parents=True)
        _, serial = boxed_command(store.root, 1, args.command)
        _, reader = boxed_command(store.root, 3, args.command, network=False)
        _, wave = boxed_command(store.root, 2, args.command, workspace=tree)  # (its own spec)
        shared = Path(scratch) / "shared.spec"  # (the box before its own /tmp and network)
        shared.write_text(spec_for(store.root).text())
        _, main_agent = main_boxed(store.root, args.command, nested=steps_repository)
        _, in_large = boxed_command(large.root, 1, args.command)
        assert serial and reader and wave and main_agent and in_large
        cases = {"bare `bash -c`": (args.command, store.project),
                 "boxed, shared /tmp and network (the box before)": (wrap(args.command, shared),
                                                                    store.project),
                 "boxed, a step in the main checkout": (serial, store.project),
                 "boxed, the same, no network (a reading step, maker verify)": (reader,
                                                                               store.project),
                 "boxed, a step in its own worktree": (wave, tree),
                 "boxed, the main agent's own box (while a plan exists)": (main_agent,
                                                                           store.project),
                 f"boxed, a step in a tree of {entries:,} files and folders": (
                     in_large, large.project)}
        if args.against:
            cases[f"boxed, a step in the main checkout, at {args.against}"] = (
                _other_box(args.against, store.root, args.command, Path(scratch)),
                store.project)
            cases[f"boxed, a step in the tree of {entries:,}, at {args.against}"] = (
                _other_box(args.against, large.root, args.command, Path(scratch)),
                large.project)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (command, cwd) in cases.items():  # (interleaved)
                times[name].append(_time(command, cwd))
        record = store.load_step(1)
        call = {"command": args.command}
        decide: dict[str, list[float]] = {"boundary: off": [], "boundary: auto": []}
        for _ in range(args.runs):
            for setting in decide:
                (store.root / "settings.yaml").write_text(f"boundary: {setting.split()[-1]}\n")
                began = time.perf_counter()
                executor_limits(store, record, "Bash", call, cwd=store.project)
                decide[setting].append((time.perf_counter() - began) * 1000)
    print(f"{found.describe()}; {args.runs} runs each, interleaved; `{args.command}`\n")
    print("| call | median ms | p90 ms | added ms | × bare |")
    print("| --- | ---: | ---: | ---: | ---: |")
    base = statistics.median(times["bare `bash -c`"])
    for name, samples in times.items():
        print(_row(name, samples, None if name.startswith("bare") else base))
    off = statistics.median(decide["boundary: off"])
    for setting, samples in decide.items():
        print(_row(f"the hook's decision, {setting}", samples,
                   None if setting.endswith("off") else off))
    ours = {name: samples for name, samples in times.items()
            if not name.startswith("bare") and ", at " not in name}  # (this tree's boxes)
    added = max(statistics.median(samples) - base for samples in ours.values())
    before = statistics.median(times["boxed, shared /tmp and network (the box before)"])
    now = max(statistics.median(samples) for name, samples in ours.items()
              if name.startswith("boxed, a step") or "no network" in name)
    print(f"\ngoal: at most 30 ms added per call: {'met' if added <= 30 else 'NOT met'} "
          f"(worst case above: {added:+.1f} ms; its own /tmp and network add "
          f"{now - before:+.1f} ms to the box before)")


if __name__ == "__main__":
    main()
