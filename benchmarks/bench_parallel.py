"""Parallel steps' speed-up, with an in-process scripted model.

    .venv/bin/python benchmarks/bench_parallel.py [--widths 2,4] [--length 3]
                                                  [--answer-s 2.0] [--repeats R] [--quick]

A git project (one commit) and a plan of W independent chains of L steps: chain c's
steps write only ``chain{c}/**`` (``writes``), each depends on the previous step of its
chain only. The same project and plan, copied fresh for each run, is run to the end by
``Orchestrator.run()`` under ``--approve auto`` twice in the same run: serially
(``parallel=1``) and with ``parallel=W``. Everything is maker's real code: the store,
the waves, the worktrees, the executor's orientation and handoff through the gate, the
verification (no command configured: it records "nothing to run") and the landings
(``engine/apart.py``: in a ``python -m maker`` child process when there are checks to
run, else in the run's own process). Only the model is
scripted: each executor session waits ``--answer-s`` seconds (a model's answer: 2 s by
default, far shorter than a real model's tens of seconds, so maker's own time shows), writes
its step's file into its working folder (the step's worktree, or the project), records
its orientation (``maker orient N none``, in process) and answers a valid handoff.

Prints, for each W: the serial and the parallel wall time, the ideal (serial / W), the
ratio parallel / ideal against the goal (within 1.25x), and maker's own
overhead per merge: the mean wall time of a landing (``maker land N``), of a step's
verification in its worktree (``maker verify --step N``) and of making a step's
worktree, and (parallel - ideal) / merges. Exits 1 when a ratio is over the goal.
This is a script, not a test: timings belong on a quiet machine. Run it with
``PYTHONDONTWRITEBYTECODE`` unset (a child ``python -m maker`` compiles every module
again without its bytecode).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

import maker.engine.step_run as step_run_module
import maker.engine.wave_loop as wave_loop_module
from maker.core.models import AgentResult, Plan, PlanStep, TaskConfig
from maker.engine.ledger import Call, Ledger
from maker.engine.orchestrator import Orchestrator
from maker.engine.parts import EngineParts
from maker.engine.stops import EXIT_COMPLETE
from maker.executor.acceptance.approval import set_policy
from maker.executor.protocol.orient import record_orient
from maker.store.plan_store import PlanStore
from maker.verify.detect import ENV_VARS

GOAL = 1.25


def make_plan(width: int, length: int) -> Plan:
    """``width`` chains of ``length`` steps; step ``c * length + i`` is chain c's i-th."""
    steps = []
    total = width * length
    for c in range(width):
        for i in range(length):
            n = c * length + i
            steps.append(PlanStep(
                step=n, task_type="action_step", title=f"Chain {c}, part {i}",
                task_description=f"Write the part {i} file of chain {c}.",
                primary_tools=["Write", "Bash"], fallback_tools=[],
                primary_tool_instructions="Write the file.", fallback_tool_instructions="",
                input_variables=[], output_variable=f"step_{n}_output",
                output_schema="{files: list}",
                next_step_sequence_number=n + 1 if n < total - 1 else -1,
                depends_on=[n - 1] if i else [], writes=[f"chain{c}/**"]))
    return Plan(reasoning="Independent chains.", task="Benchmark parallel steps",
                steps=steps)


def step_file(spec: PlanStep, length: int) -> str:
    return f"chain{spec.step // length}/part{spec.step % length}.txt"


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                    *args], cwd=project, check=True, capture_output=True)


def make_project(root: Path, width: int, length: int) -> Path:
    """A git project with one commit, its plan stored under ``plans/`` (policy auto)."""
    project = root / "project"
    project.mkdir(parents=True)
    (project / "README.md").write_text("A benchmark project.\n")
    for c in range(width):
        (project / f"chain{c}").mkdir()
        (project / f"chain{c}" / "README.md").write_text(f"Chain {c}.\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    store = PlanStore(project / "plans")
    store.write_plan(make_plan(width, length), "Benchmark parallel steps")
    set_policy(store, "auto", "benchmark")
    return project


class Timings:
    """Wall times of maker's own parts of a parallel run, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.landed = 0

    def mean(self, name: str) -> float:
        got = self.seconds.get(name) or []
        return sum(got) / len(got) if got else 0.0

    def count(self, name: str) -> int:
        return len(self.seconds.get(name) or [])


@contextmanager
def timed_parts(timings: Timings) -> Iterator[None]:
    """Time the landings, the verifications in worktrees and the worktrees' making, by
    wrapping the names the engine calls them by."""
    land = getattr(step_run_module, "land_apart")  # noqa: B009 (names not exported)
    verify = getattr(step_run_module, "verify_apart")  # noqa: B009
    start = getattr(wave_loop_module, "start_in_worktree")  # noqa: B009

    def wrap(name: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any) -> Any:
            began = time.perf_counter()
            result = await call(*args)
            timings.seconds[name].append(time.perf_counter() - began)
            if name == "land" and result.get("kind") == "landed":
                timings.landed += 1
            return result
        return timed

    def start_timed(*args: Any) -> Any:
        began = time.perf_counter()
        try:
            return start(*args)
        finally:
            timings.seconds["worktree"].append(time.perf_counter() - began)

    setattr(step_run_module, "land_apart", wrap("land", land))  # noqa: B010
    setattr(step_run_module, "verify_apart", wrap("verify", verify))  # noqa: B010
    setattr(wave_loop_module, "start_in_worktree", start_timed)  # noqa: B010
    try:
        yield
    finally:
        setattr(step_run_module, "land_apart", land)  # noqa: B010
        setattr(step_run_module, "verify_apart", verify)  # noqa: B010
        setattr(wave_loop_module, "start_in_worktree", start)  # noqa: B010


class _Session:
    """One executor session: a model's answer time, then the step's file, its
    orientation and its handoff."""

    def __init__(self, store: PlanStore, where: Path, answer_s: float, length: int) -> None:
        self.store, self.where, self.answer_s, self.length = store, where, answer_s, length

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        await asyncio.sleep(self.answer_s)
        record_orient(self.store, step.step, "none")  # (`maker orient N none`)
        rel = step_file(step, self.length)
        path = self.where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"step {step.step}\n")
        output = {"step": step.step, "status": "complete", "output": {"files": [rel]},
                  "summary": f"Wrote {rel}.", "files_changed": [rel]}
        return AgentResult(output, yaml.safe_dump(output, sort_keys=False), tokens=10,
                           cost_usd=0.0001, duration_ms=int(self.answer_s * 1000))


def run_once(template: Path, width: int, length: int, parallel: int, answer_s: float,
             timings: Timings) -> float:
    """Seconds to run a fresh copy of ``template``'s plan to its end."""
    root = Path(tempfile.mkdtemp(prefix="maker-bench-parallel-"))
    try:
        project = root / "project"
        shutil.copytree(template, project, symlinks=True)
        store = PlanStore(project / "plans")

        def factory(*, cwd: Path | None = None, **_: Any) -> _Session:
            return _Session(store, cwd or project, answer_s, length)

        ledger = Ledger(store)
        parts = EngineParts(runner_factory=factory, ledger=ledger, call_type=Call,
                            session_id="bench")
        orch = Orchestrator(store, parts, parallel=parallel)
        with timed_parts(timings):
            began = time.perf_counter()
            result = asyncio.run(orch.run())
            elapsed = time.perf_counter() - began
        if result.exit_code != EXIT_COMPLETE:
            raise SystemExit(f"the run (--parallel {parallel}) did not complete: "
                             f"{result.message}")
        steps = width * length
        if len(ledger.calls()) != steps:
            raise SystemExit(f"expected {steps} ledger entries, found {len(ledger.calls())}")
        for n in range(steps):
            rel = step_file(store.load_step(n).spec, length)
            if (project / rel).read_text() != f"step {n}\n":
                raise SystemExit(f"step {n}'s file {rel} is not in the main checkout")
        return elapsed
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(width: int, length: int, answer_s: float, repeats: int) -> dict[str, Any]:
    """Best of ``repeats`` serial and parallel runs of the same plan, interleaved; the
    parallel run's parts as measured in its best run."""
    root = Path(tempfile.mkdtemp(prefix="maker-bench-template-"))
    try:
        template = make_project(root, width, length)
        serial: list[float] = []
        parallel: list[tuple[float, Timings]] = []
        for _ in range(repeats):
            serial.append(run_once(template, width, length, 1, answer_s, Timings()))
            timings = Timings()
            parallel.append((run_once(template, width, length, width, answer_s, timings),
                             timings))
        best_par, parts = min(parallel, key=lambda p: p[0])
        return {"serial": min(serial), "parallel": best_par, "parts": parts}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", default="2,4", help="the Ws (default 2,4)")
    parser.add_argument("--length", type=int, default=3, help="steps per chain (default 3)")
    parser.add_argument("--answer-s", type=float, default=2.0,
                        help="seconds the scripted model takes per answer (default 2.0)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="best of R runs of each (default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: W=2, chains of 2, 0.2 s answers, once")
    args = parser.parse_args(argv)
    if args.quick:
        args.widths, args.length, args.answer_s, args.repeats = "2", 2, 0.2, 1
    widths = [int(w) for w in args.widths.split(",")]
    for var in ENV_VARS.values():  # no verification command: maker's time and the model's
        os.environ[var] = ""
    os.environ.pop("MAKER_PLANS_DIR", None)
    home = tempfile.mkdtemp(prefix="maker-bench-home-")
    os.environ["HOME"] = home  # the seal key and anything else per-user: private
    print(f"chains of {args.length} steps, {args.answer_s:g} s per answer, best of "
          f"{args.repeats}; cores: {os.cpu_count()}, load: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    ok = True
    try:
        for w in widths:
            got = measure(w, args.length, args.answer_s, args.repeats)
            serial, par, parts = got["serial"], got["parallel"], got["parts"]
            ideal = serial / w
            ratio = par / ideal
            merges = max(parts.landed, 1)
            verdict = "within" if ratio <= GOAL else "OVER"
            ok = ok and ratio <= GOAL
            print(f"W={w}: serial {serial:6.2f} s, --parallel {w} {par:6.2f} s, ideal "
                  f"{ideal:6.2f} s, ratio {ratio:.2f}x ({verdict} the {GOAL}x goal)")
            print(f"     {parts.landed} merges; per merge: landing (maker land) "
                  f"{parts.mean('land') * 1000:.0f} ms, verification in the "
                  f"worktree (maker verify) {parts.mean('verify') * 1000:.0f} ms, "
                  f"worktree made {parts.mean('worktree') * 1000:.0f} ms; "
                  f"(parallel - ideal) / merges {(par - ideal) / merges * 1000:.0f} ms")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
