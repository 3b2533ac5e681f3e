"""The walk of one handoff's arrival: what a SubagentStop costs in files, climbs, locks
and reads (a script, not a test).

    .venv/bin/python benchmarks/walk_handoff.py [--steps N] [--reads] [--runs R]

Builds a plan of N steps (default 20) in a temporary project, starts step 1 as a
session would, writes the file it names, and fires the step executor's SubagentStop
with its handoff in-process, through the hooks' one entry (``run_hook``), as the client
would send it. While that one event runs it counts:

- **files crossed**: maker's modules whose code ran;
- **climbs back**: how often a call into the core returned into ``maker.hooks``, and into
  ``hooks/deliver.py`` (the hook sequencing the core, instead of one call that does the
  arrival);
- **plan locks**: calls of ``maker.store.atomic.plan_lock`` (every hold, a nested one
  included), and how many of them took the lock anew (each such is a transaction of its
  own: a crash between two leaves the first one's writes);
- **file reads**: files opened for reading (the audit hook's ``open`` events), and how
  many distinct ones.

The figures are counts, not times: they do not depend on the machine. ``--reads`` lists
the files read; ``--runs R`` also times R events without the profiler (a new project
each, the median). A before and after of the event as the client runs it, in a process of
its own: ``bench_hooks.py --against REF``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import FrameType
from typing import Any

import maker
from maker.core.models import Plan, PlanStep
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker_scripted.scenarios import handoff

PACKAGE = str(Path(maker.__file__).parent)
HOOKS = str(Path(PACKAGE) / "hooks")


def make_plan(steps: int) -> Plan:
    return Plan(reasoning="A chain.", task="Walk a handoff", steps=[
        PlanStep(step=n, task_type="action_step", title=f"Step {n}",
                 task_description=f"Write f{n}.txt.", primary_tools=["Read", "Write"],
                 fallback_tools=[], primary_tool_instructions="",
                 fallback_tool_instructions="", input_variables=[],
                 output_variable=f"step_{n}_output", output_schema="{files: [string]}",
                 next_step_sequence_number=n + 1 if n < steps - 1 else -1)
        for n in range(steps)])


class Walk:
    """What one event did, counted by a profiler and an audit hook."""

    def __init__(self) -> None:
        self.on = False
        self.files: set[str] = set()
        self.climbs = 0
        self.deliver_climbs = 0
        self.locks = 0
        self.fresh_locks = 0
        self.reads: list[str] = []

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on or event not in ("call", "return"):
            return
        where = frame.f_code.co_filename
        if not where.startswith(PACKAGE):
            return
        if event == "call":
            self.files.add(where[len(PACKAGE) + 1:])
            if frame.f_code.co_name == "plan_lock" and where.endswith("atomic.py"):
                self.locks += 1
            return
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename.startswith(HOOKS) \
                and not where.startswith(HOOKS):
            self.climbs += 1
            self.deliver_climbs += caller.f_code.co_filename.endswith("deliver.py")

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on or event != "open":
            return
        path, mode = args[0], args[1]
        if isinstance(path, (str, bytes)) and (mode is None or "r" in str(mode)) \
                and "w" not in str(mode or "") and "a" not in str(mode or ""):
            self.reads.append(path.decode() if isinstance(path, bytes) else path)
        if isinstance(path, str) and path.endswith("/.maker/lock") and "a" in str(mode):
            self.fresh_locks += 1  # (a nested hold opens nothing: the outer one holds it)


def scenario(steps: int, walk: Walk) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="maker-walk-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        store = PlanStore(project / "plans")
        store.write_plan(make_plan(steps))
        start_step(store, 1, force=True, session_id="walk")
        record_orient(store, 1, "none")
        (project / "f1.txt").write_text("one\n")
        text = handoff(1, {"files": ["f1.txt"]}, files=["f1.txt"])
        stdin = json.dumps({
            "session_id": "walk", "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project), "permission_mode": "default",
            "hook_event_name": "SubagentStop", "stop_hook_active": False,
            "agent_id": uuid.uuid4().hex[:17], "agent_type": "maker:step-executor",
            "agent_transcript_path": str(project / "a.jsonl"),
            "last_assistant_message": text})
        walk.on = True
        began = time.perf_counter()
        try:
            out = run_hook("subagent-stop", HANDLERS["subagent-stop"], stdin=stdin)
        finally:
            took = time.perf_counter() - began
            walk.on = False
        status = store.load_step(1).status
    return {"answer": json.loads(out or "{}"), "status": status, "took": took}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--reads", action="store_true", help="list the files read")
    parser.add_argument("--runs", type=int, default=0,
                        help="also time N events (no profiler), median in ms")
    args = parser.parse_args()
    warm = Walk()  # (a first event imports modules: their reads are not the walk's)
    sys.setprofile(warm.profile)
    scenario(args.steps, warm)
    walk = Walk()
    sys.addaudithook(lambda event, a: walk.audit(event, a))
    sys.setprofile(walk.profile)
    try:
        done = scenario(args.steps, walk)
    finally:
        sys.setprofile(None)
    print(f"one step executor's SubagentStop, a complete handoff accepted "
          f"({args.steps}-step plan; the step is {done['status']}):")
    print(f"  maker modules whose code ran (files crossed): {len(walk.files)}")
    print(f"  calls into the core that returned into maker.hooks (climbs back): "
          f"{walk.climbs}, of which into hooks/deliver.py: {walk.deliver_climbs}")
    print(f"  plan lock holds: {walk.locks}, of which taken anew (not nested): "
          f"{walk.fresh_locks}")
    print(f"  files opened for reading: {len(walk.reads)} ({len(set(walk.reads))} distinct)")
    if args.reads:
        from collections import Counter

        for path, n in Counter(walk.reads).most_common():
            print(f"    {n:3} {path}")
    if args.runs:
        import statistics

        quiet = Walk()
        times = [scenario(args.steps, quiet)["took"] for _ in range(args.runs)]
        print(f"  the event's time, median of {args.runs} (no profiler): "
              f"{statistics.median(times) * 1000:.1f} ms")
    return 0 if done["status"] == "awaiting-approval" or done["status"] == "complete" else 1


if __name__ == "__main__":
    sys.exit(main())
