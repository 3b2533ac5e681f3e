"""Does the step brief stay flat as a plan grows? (a script, not a timed test)

Builds a 2,000-step chain in a temporary directory. Every step reads one earlier
step's output, and every step is accepted in order with a handoff that adds
discoveries and a decision to NOTES.md, as the handoff gate does, and a long summary
(the brief carries those of the previous step and of the steps it depends on). The
brief of steps 10, 1,000 and 1,990 is built at the moment each would start (every
earlier step accepted) and its size printed. Goal: flat, largest / smallest <= 1.05.

Then the same with components: 2,000 steps in 20 components that take turns in runs
of 20 steps, each step depending on the step of its component before it. The brief of
a step of a component carries the NOTES.md facts of its component, of the steps it
depends on and the plan-wide ones (``maker.store.fact_scope``): printed are its size,
and how many facts of other components it carries (goal: 0) against the same step's
brief with no component (every fact of the plan). Exits 1 when a ratio exceeds 1.1 or
a scoped brief carries another component's fact.

    .venv/bin/python benchmarks/bench_brief.py [--steps N]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from maker.core.clock import utc_now
from maker.core.models import Plan, PlanStep
from maker.executor.launch.brief import build_brief
from maker.store.notes import add_notes
from maker.store.plan_store import PlanStore
from maker.store.records import StoredPlan

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


def make_component_plan(n_steps: int, components: int = 20, run: int = 20) -> Plan:
    """``n_steps`` steps; step n is of component ``part-<(n // run) % components>``, and
    reads and depends on the step of its component before it."""
    plan = make_plan(n_steps)
    for spec in plan.steps:
        n = spec.step
        dep = n - 1 if n % run else n - run * (components - 1) - 1
        spec.component = f"part-{(n // run) % components}"
        spec.depends_on = [dep] if dep >= 0 else []
        spec.input_variables = [f"step_{dep}_output.summary"] if dep >= 0 else []
        spec.task_description = f"Implement part {n}, building on what step {dep} produced."
    return plan


def accept(store: PlanStore, n: int, components: dict[int, str | None] | None = None) -> None:
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
              step=n, archive_dir=store.archive_dir, components=components)
    if components and n % 100 == 50:  # a person's note, for every step
        add_notes(store.notes_path, {"decisions": [f"Releases freeze after part {n}; "
                                                   "keep every change behind its flag."]},
                  archive_dir=store.archive_dir, components=components)


_TAGGED = re.compile(r"^- .*\(step (\d+)\)$", re.MULTILINE)


def others(brief: str, plan: StoredPlan, n: int) -> int:
    """How many NOTES.md facts in ``brief`` are of another component than step ``n``'s,
    and of no step it depends on."""
    record = plan.find(n)
    assert record is not None
    notes = brief.split("### Project notes", 1)[1].split("\n## ", 1)[0]
    components = plan.components()
    return sum(1 for m in _TAGGED.finditer(notes)
               if components.get(int(m.group(1))) not in (None, record.spec.component)
               and int(m.group(1)) not in record.depends_on)


def run_components(n_steps: int, probes: list[int]
                   ) -> tuple[dict[int, tuple[int, int, int, int]], float, str]:
    """step -> (scoped size, its other components' facts, unscoped size, its facts of
    other components), the seconds the run took, and NOTES.md's size at the end."""
    out: dict[int, tuple[int, int, int, int]] = {}
    with tempfile.TemporaryDirectory(prefix="maker-bench-") as tmp:
        store = PlanStore(Path(tmp) / "plans")
        t0 = time.perf_counter()
        store.write_plan(make_component_plan(n_steps))
        components = store.load().components()
        for n in range(n_steps):
            if n in probes:
                plan = store.load()
                scoped = build_brief(store, plan, n)
                record = plan.get(n)  # (this plan's copy: the same step with no component)
                record.spec = dataclasses.replace(record.spec, component=None)
                unscoped = build_brief(store, plan, n)
                out[n] = (len(scoped.encode("utf-8")), others(scoped, store.load(), n),
                          len(unscoped.encode("utf-8")), others(unscoped, store.load(), n))
            accept(store, n, components)
        return out, time.perf_counter() - t0, notes_size(store)


def notes_size(store: PlanStore) -> str:
    text = store.notes_path.read_text(encoding="utf-8")
    return (f"NOTES.md at the end: {len(text.encode('utf-8'))} bytes, "
            f"{len(re.findall(r'^- ', text, re.MULTILINE))} facts")


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
        notes = notes_size(store)
    print(f"{n_steps} steps built and accepted in {built:.1f} s; {notes}")
    for n in probes:
        print(f"brief for step {n:>5}: {sizes[n]:>6} bytes  (built in {timings[n] * 1000:.0f} ms)")
    ratio = report_ratio(sizes.values())
    scoped, took, notes = run_components(n_steps, probes)
    print(f"\nwith components: {n_steps} steps in 20 components built and accepted in "
          f"{took:.1f} s; {notes}")
    for n in probes:
        size, other, whole, whole_other = scoped[n]
        print(f"brief for step {n:>5}: {size:>6} bytes, {other} facts of other components "
              f"(with no component: {whole:>6} bytes, {whole_other} of other components)")
    scoped_ratio = report_ratio(s[0] for s in scoped.values())
    leaks = sum(s[1] for s in scoped.values())
    return 0 if max(ratio, scoped_ratio) <= LIMIT and not leaks else 1


def report_ratio(sizes: Iterable[int]) -> float:
    sizes = list(sizes)
    ratio = max(sizes) / min(sizes)
    verdict = "flat" if ratio <= GOAL else ("nearly flat" if ratio <= LIMIT else "GROWS")
    print(f"ratio largest/smallest: {ratio:.3f} (goal <= {GOAL}, limit {LIMIT}): {verdict}")
    return ratio


if __name__ == "__main__":
    sys.exit(main())
