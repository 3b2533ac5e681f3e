"""Does the step brief stay flat as a plan grows? (a script, not a timed test)

Builds a 2,000-step chain in a temporary directory. Every step reads one earlier
step's output, and every step is accepted in order with a handoff that adds
discoveries and a decision to NOTES.md, as the handoff gate does, and a long summary
(the brief carries those of the previous step and of the steps it depends on). The
brief of steps 10, 1,000 and 1,990 is built at the moment each would start (every
earlier step accepted) and its size printed. Goal: flat, largest / smallest <= 1.05.
Exits 1 when the ratio exceeds 1.1.

    .venv/bin/python benchmarks/bench_brief.py [--steps N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from maker.core.clock import utc_now
from maker.core.models import Plan, PlanStep
from maker.executor.launch.brief import build_brief
from maker.store.notes import add_notes
from maker.store.plan_store import PlanStore

GOAL = 1.05
LIMIT = 1.1


def make_plan(n_steps: int) -> Plan:
    steps = []
    for n in range(n_steps):
        ref = max(0, n - 1 - n % 7)  # one earlier output, not always the previous one
        steps.append(PlanStep(
            step=n, task_type="action_step", title=f"Implement part {n} of the feature",
            task_description=f"Implement part {n}, building on what step {ref} produced.",
            primary_tools=["Read", "Edit", "Bash"], fallback_tools=["Grep"],
            primary_tool_instructions="Read the module, edit it, run the tests with Bash.",
            fallback_tool_instructions="Grep for call sites when the module is unclear.",
            input_variables=[f"step_{ref}_output.summary"] if n else [],
            output_variable=f"step_{n}_output",
            output_schema="{summary: string, files: [string]}",
            next_step_sequence_number=n + 1 if n + 1 < n_steps else -1))
    return Plan(reasoning="A long chain of small steps.", steps=steps,
                task="Build a feature in many small, verified steps")


def accept(store: PlanStore, n: int) -> None:
    """What the gate persists for a complete step: its handoff file and its NOTES facts."""
    discoveries = [f"Step {n} found that module_{n}_{i} caches its results per request; "
                   f"callers must not assume fresh data across requests (finding {i})."
                   for i in range(4)]
    decisions = [f"Step {n} kept the public API of module_{n} unchanged so that older "
                 "callers keep working; new behaviour sits behind a flag."]
    store.write_handoff(n, {
        "step": n, "status": "complete", "accepted_at": utc_now(),
        "output": {"summary": f"part {n} implemented and tested",
                   "files": [f"src/module_{n}.py", f"tests/test_module_{n}.py"]},
        "summary": f"Implemented part {n}: module_{n} now caches per request, its public "
                   "API is unchanged, and the new behaviour sits behind a flag that is off "
                   "by default; the tests cover both settings of the flag." * 3,
        "discoveries": discoveries,
        "decisions": decisions, "blockers": [],
        "for_next_agent": f"Part {n} is done; its tests live in tests/test_module_{n}.py and "
                          "run in about a second. Start from the module it left behind.",
        "files_changed": [f"src/module_{n}.py"], "evidence": [],
    }, f"# Handoff for step {n}\n")
    add_notes(store.notes_path, {"discoveries": discoveries, "decisions": decisions},
              step=n, archive_dir=store.archive_dir)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    n_steps = args.steps
    probes = sorted({10, min(1000, n_steps // 2), n_steps - 10})
    sizes: dict[int, int] = {}
    timings: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="maker-bench-") as tmp:
        store = PlanStore(Path(tmp) / "plans")
        t0 = time.perf_counter()
        store.write_plan(make_plan(n_steps))
        for n in range(n_steps):
            if n in probes:
                plan = store.load()
                start = time.perf_counter()
                brief = build_brief(store, plan, n)
                timings[n] = time.perf_counter() - start
                sizes[n] = len(brief.encode("utf-8"))
            accept(store, n)
        built = time.perf_counter() - t0
    print(f"{n_steps} steps built and accepted in {built:.1f} s")
    for n in probes:
        print(f"brief for step {n:>5}: {sizes[n]:>6} bytes  (built in {timings[n] * 1000:.0f} ms)")
    ratio = max(sizes.values()) / min(sizes.values())
    verdict = "flat" if ratio <= GOAL else ("nearly flat" if ratio <= LIMIT else "GROWS")
    print(f"ratio largest/smallest: {ratio:.3f} (goal <= {GOAL}, limit {LIMIT}): {verdict}")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
