"""The Stop hook and a step executor's SubagentStop, this tree against another, event by
event: ``bench_hooks.py --against BEFORE [--after AFTER] [--pairs N] [--small S]``.

BEFORE and AFTER are plugin roots: a folder (a ``git worktree``, say) or a git ref, which
is extracted with ``git archive`` into a temporary folder; AFTER is this checkout unless
given. Each event runs as Claude Code runs it: ``sh -c '"ROOT/scripts/hook" EVENT'``, a
fresh process, the event's JSON on stdin, the interpreter ``scripts/bootstrap`` caches in
a fresh data dir (the same one for both trees). Each tree's own code builds its projects
(``python hooks_against.py`` with that tree's ``src/`` on PYTHONPATH; it says which
``maker`` it imported), S steps (default 20) each, a fresh project for every event:

- Stop: a step in progress owned by the session (the hook reads it and blocks);
- SubagentStop: step 1 started and oriented, its file written, the executor's complete
  handoff as its final message (walk_handoff.py's event, here in a process of its own).

For each of N pairs (default 300) and each hook, one event on each tree, in a random
order. Every event's wall time and CPU time (user + sys of the whole process tree, from
``getrusage(RUSAGE_CHILDREN)`` before and after; less noisy on a busy machine) is kept;
the figure is the median of the paired differences (after minus before) with a bootstrap
95% interval. A conclusion says slower when the interval lies entirely above 0 (none is
drawn from fewer than 30 pairs). Exits 1 when either hook is slower by either measure.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shlex
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from walk_handoff import make_plan

import maker
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore
from maker_scripted.scenarios import handoff

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ("stop", "subagent-stop")
WARM = 3  # untimed events per tree and hook first (the .pyc files, the file cache)
FEW = 30  # fewer pairs than this: the interval is printed, no conclusion drawn


def client_env(work: Path) -> tuple[dict[str, str], str, list[str]]:
    """The environment Claude Code gives a hook, with a fresh data dir under ``work`` that
    ``scripts/bootstrap`` fills: returns it, the cached interpreter and its dependency
    folders. Raises RuntimeError when bootstrap fails."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE", "MAKER_", "PYTHON", "XDG_DATA_HOME"))}
    # python3 on PATH is this Python's base interpreter, as bootstrap would find it.
    bindir = work / "bin"
    bindir.mkdir()
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    (bindir / "python3").symlink_to(base)
    # The hooks keep their interpreter in $XDG_DATA_HOME/maker (else ~/.local/share/maker,
    # a person's own): here a fresh one, which bootstrap fills.
    data = work / "xdg" / "maker"
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", XDG_DATA_HOME=str(data.parent),
               CLAUDE_PLUGIN_ROOT=str(ROOT), CLAUDE_PLUGIN_DATA=str(data))
    boot = subprocess.run([str(ROOT / "scripts" / "bootstrap"), str(data)], env=env,
                          capture_output=True, text=True, check=False)
    if boot.returncode:
        raise RuntimeError(f"bootstrap failed: {boot.stderr.strip()}")
    python, *deps = (data / "python").read_text().splitlines()
    return env, python, deps


def make_projects(where: Path, count: int, steps: int) -> None:
    """``count`` projects per event under ``where``, built by the ``maker`` imported here."""
    for event in EVENTS:
        for n in range(count):
            project = where / f"{event}-{n}"
            project.mkdir(parents=True)
            store = PlanStore(project / "plans")
            store.write_plan(make_plan(steps))
            start_step(store, 1, force=True, session_id="bench")
            if event == "subagent-stop":
                record_orient(store, 1, "none")
                (project / "f1.txt").write_text("one\n")


def _tree(spec: str, work: Path, name: str) -> Path:
    """A plugin root: ``spec`` itself when it is one, else the git ref extracted."""
    if (Path(spec) / "scripts" / "hook").is_file():
        return Path(spec).resolve()
    dest = work / name
    dest.mkdir()
    subprocess.run(f"git -C {shlex.quote(str(ROOT))} archive {shlex.quote(spec)} "
                   f"| tar -x -C {shlex.quote(str(dest))}", shell=True, check=True)
    return dest


def _stdin(event: str, project: Path) -> bytes:
    common = {"session_id": "bench", "transcript_path": str(project / "t.jsonl"),
              "cwd": str(project), "permission_mode": "default", "stop_hook_active": False}
    if event == "stop":
        return json.dumps(dict(common, hook_event_name="Stop",
                               last_assistant_message="done")).encode()
    return json.dumps(dict(
        common, hook_event_name="SubagentStop", agent_id=uuid.uuid4().hex[:17],
        agent_type="maker:step-executor", agent_transcript_path=str(project / "a.jsonl"),
        last_assistant_message=handoff(1, {"files": ["f1.txt"]}, files=["f1.txt"]))).encode()


def _run(root: Path, event: str, project: Path, env: dict[str, str]) -> tuple[float, float]:
    """One event on one tree: (wall, cpu) seconds. Raises RuntimeError when the hook did
    not do its work (a wrong answer times nothing worth comparing)."""
    stdin = _stdin(event, project)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(["sh", "-c", f'"{root}/scripts/hook" {event}'], input=stdin,
                          cwd=project, env=dict(env, CLAUDE_PROJECT_DIR=str(project),
                                                CLAUDE_PLUGIN_ROOT=str(root)),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - began
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime
    if event == "stop":
        worked = json.loads(done.stdout or b"{}").get("decision") == "block"
    else:
        status = PlanStore(project / "plans").load_step(1).status
        worked = status in ("awaiting-approval", "complete")
    if not worked:
        raise RuntimeError(f"{root}: {event} did not do its work in {project}: "
                           f"{done.stdout.decode()[-300:]}")
    return wall, cpu


def median_interval(diffs: list[float], rounds: int = 4000,
                    seed: int = 1) -> tuple[float, float, float]:
    """The median of ``diffs`` and a bootstrap 95% interval for it (percentiles of the
    medians of ``rounds`` resamples with replacement)."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(diffs, k=len(diffs)))
                     for _ in range(rounds))
    return (statistics.median(diffs), medians[int(rounds * 0.025)],
            medians[int(rounds * 0.975) - 1])


def _verdict(lo: float, hi: float, pairs: int) -> str:
    if pairs < FEW:
        return "too few pairs to judge"
    if lo > 0:
        return "SLOWER"
    return "faster" if hi < 0 else "no difference shown"


def against(before: str, after: str | None, pairs: int, steps: int, work: Path) -> int:
    """Runs the comparison in ``work`` and prints it; returns the exit code."""
    env, python, _ = client_env(work)
    trees = {"before": _tree(before, work, "before-tree"),
             "after": _tree(after, work, "after-tree") if after else ROOT}
    for name, root in trees.items():
        made = subprocess.run(
            [sys.executable, __file__, str(work / name), str(pairs + WARM), str(steps)],
            env=dict(os.environ, PYTHONPATH=str(root / "src")), capture_output=True,
            text=True, check=False)
        imported = made.stdout.strip()
        if made.returncode or not imported.startswith(str(root / "src")):
            print(f"{name}: building its projects failed (imported {imported!r}): "
                  f"{made.stderr[-500:]}")
            return 1
        hooked = subprocess.run([str(root / "scripts" / "launch"), "-c",
                                 "import maker; print(maker.__file__)"], env=env,
                                capture_output=True, text=True, check=False).stdout.strip()
        print(f"{name}: {root} (its projects built by {imported}; its hooks import "
              f"{hooked})")
        if not hooked.startswith(str(root / "src")):
            return 1
    rng = random.Random(pairs)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {
        (event, name): [] for event in EVENTS for name in trees}
    loads = [os.getloadavg()[0]]
    for n in range(pairs + WARM):
        for event in EVENTS:
            order = list(trees)
            rng.shuffle(order)
            for name in order:
                took = _run(trees[name], event, work / name / f"{event}-{n}", env)
                if n >= WARM:
                    times[(event, name)].append(took)
        if n % 50 == 0:
            loads.append(os.getloadavg()[0])
    loads.append(os.getloadavg()[0])

    print(f"\n{pairs} pairs per hook, each pair in a random order; {os.cpu_count()} cores, "
          f"load (1 min) {min(loads):.1f} to {max(loads):.1f}, mean {statistics.mean(loads):.1f}")
    print(f"interpreter: {python}; {steps}-step plans, a fresh project per event")
    print(f"{'hook':14} {'measure':5} {'before':>8} {'after':>8} {'after-before':>13} "
          f"{'95% interval':>17}  (ms, medians)")
    slower = False
    for event in EVENTS:
        for i, measure in enumerate(("wall", "cpu")):
            was = [t[i] * 1000 for t in times[(event, "before")]]
            now = [t[i] * 1000 for t in times[(event, "after")]]
            mid, lo, hi = median_interval([b - a for a, b in zip(was, now, strict=True)])
            slower = slower or (lo > 0 and pairs >= FEW)
            print(f"{event:14} {measure:5} {statistics.median(was):8.1f} "
                  f"{statistics.median(now):8.1f} {mid:+13.2f} {lo:+8.2f} to {hi:+6.2f}  "
                  f"{_verdict(lo, hi, pairs)}")
    return 1 if slower else 0


if __name__ == "__main__":  # (the projects' builder, run by against() in each tree)
    make_projects(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    print(maker.__file__)
