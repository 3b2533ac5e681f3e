"""Votes on what code does: how often a code step's vote lands right code (a script).

Twenty small code tasks (a function of two numbers that the base gets wrong), each with
six kinds of sample, real code and real tests: right (two texts of it), a wrong result
(off by one, with a test that agrees with it), a crash, a vacuous test (wrong code, a
test that passes on the base), and a deleted test (wrong code, an existing test
removed). For each task the six kinds' folders are run against one another's tests, the
step's check (the project's pytest) and twice on the base, by ``maker.verify.cross_runs``
(real git, real pytest, side by side); that gives every outcome any draw of them could
have. Then, for per-sample success p = 0.6, 0.7, 0.8 (a sample is right with p, else
one of the four errors, equally), and K = 1, 2, 3, votes are simulated as
``maker.engine.code_vote`` runs them (K at first, then as many as the leader's lead
lacks, at most 4·K, decided by ``maker.voting.behaviour``) and the script prints:

1. the step's success (the winner is right), against the law ``p_step`` (one rival), the
   samples a vote draws, and how many runs of pytest it takes (each batch: the check
   and the tests in each sample's folder, the check and two runs on the base);
2. the wall time of one cross run of the six kinds, side by side against one folder at a
   time.

    .venv/bin/python benchmarks/bench_code_votes.py [--trials N] [--tasks N] [--seed N]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from maker.verify.cross_runs import SIDE_BY_SIDE, SampleTree, cross_run
from maker.verify.detect import VerifyCommand
from maker.voting import p_step, wilson_interval
from maker.voting.behaviour import CodeSample, Outcomes, decide

# (name, the right expression of a and b)
TASKS = [("add", "a + b"), ("sub", "a - b"), ("mul", "a * b"), ("biggest", "max(a, b)"),
         ("smallest", "min(a, b)"), ("gap", "abs(a - b)"), ("mean2", "(a + b) / 2"),
         ("hyp2", "a * a + b * b"), ("twice_sum", "2 * (a + b)"), ("sq_diff", "(a - b) ** 2"),
         ("mod_sum", "(a + b) % 7"), ("first_or", "a if a else b"), ("prod_plus", "a * b + a"),
         ("neg_sum", "-(a + b)"), ("cube_a", "a ** 3 + b"), ("halve", "(a + b) // 2"),
         ("signum", "(a > b) - (a < b)"), ("lerp", "a + (b - a) / 4"),
         ("power", "a ** 2 * b"), ("wrap", "(a * 3 + b) % 10")]
KINDS = ("right", "right2", "wrong", "crash", "vacuous", "deleted")
ERRORS = ("wrong", "crash", "vacuous", "deleted")
PYTEST = [sys.executable, "-m", "pytest"]
CHECK = VerifyCommand("test", f"{sys.executable} -m pytest -q -p no:cacheprovider "
                      "-o addopts= -o pythonpath=src")


def _value(expr: str, a: int, b: int) -> object:
    return eval(expr, {}, {"a": a, "b": b})  # (the table's own expressions)


def _files(name: str, expr: str, kind: str) -> dict[str, str | None]:
    """What a sample of ``kind`` leaves: file -> text (None: deleted)."""
    cases = [(3, 4), (-2, 5), (7, 0)]
    code = {"right": f"def {name}(a, b):\n    return {expr}\n",
            "right2": f"def {name}(a, b):\n    result = {expr}\n    return result\n",
            "crash": f"def {name}(a, b):\n    raise ValueError('not yet')\n"}.get(
        kind, f"def {name}(a, b):\n    return ({expr}) + 1\n")
    wrong = kind in ("wrong", "vacuous", "deleted")
    asserts = "".join(f"    assert {name}({a}, {b}) == {_value(expr, a, b)!r}"
                      f"{' + 1' if wrong else ''}\n" for a, b in cases)
    test = (f"from calc import {name}\n\n\ndef test_{name}():\n" +
            (f"    assert callable({name})\n" if kind == "vacuous" else asserts))
    files: dict[str, str | None] = {"src/calc.py": code, "tests/test_calc.py": test}
    if kind == "deleted":
        files["tests/test_old.py"] = None
    return files


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@x", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def _run(command: str, folder: Path, timeout: float) -> int:
    return subprocess.run(command, shell=True, cwd=folder, capture_output=True,
                          timeout=timeout, check=False).returncode


@dataclass
class Task:
    """One task's kinds: their test ids and every outcome a draw of them could have."""

    name: str
    tests: dict[str, tuple[str, ...]]
    outcomes: Outcomes
    diff: dict[str, int]
    seconds: float


def prepare(root: Path, name: str, expr: str, side_by_side: int = SIDE_BY_SIDE) -> Task:
    project = root / name
    (project / "src").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "src" / "calc.py").write_text(f"def {name}(a, b):\n    return 0\n")
    (project / "tests" / "test_old.py").write_text("def test_old():\n    assert True\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    base = _git(project, "rev-parse", "HEAD")
    trees = []
    for kind in KINDS:
        folder = root / f"{name}-{kind}"
        _git(project, "worktree", "add", "-q", "--detach", str(folder), base)
        for rel, text in _files(name, expr, kind).items():
            if text is None:
                (folder / rel).unlink()
            else:
                (folder / rel).write_text(text)
        trees.append(SampleTree(kind, folder, ("tests/test_calc.py",)))
    began = time.perf_counter()
    outcomes, known = cross_run(project, base, trees, root / f"{name}-scratch", _run,
                                pytest=PYTEST, checks=[CHECK], side_by_side=side_by_side)
    seconds = time.perf_counter() - began
    diff = {k: 4 if k == "right" else 5 for k in KINDS}
    return Task(name, known, outcomes, diff, seconds)


def vote(task: Task, draw: list[str], k: int) -> tuple[bool | None, int, int]:
    """One vote on ``task``: samples drawn in the order of ``draw`` (kinds), K at first,
    then what the lead lacks. ``(right?, samples, pytest runs)``; None: undecided."""
    drawn: list[str] = []
    runs, need, bound = 0, k, 4 * k
    while need > 0 and len(drawn) < bound:
        drawn += draw[len(drawn):min(len(drawn) + need, bound)]
        samples, outcomes = _as_drawn(task, drawn)
        live = sum(1 for s in samples if not s.flag)
        runs += 2 * live + 3  # (check and tests per folder; check and two on the base)
        counted = decide(samples, outcomes, k)
        if counted.decided and counted.winner is not None:
            kind = drawn[int(counted.winner.name[1:])]
            return kind.startswith("right"), len(drawn), runs
        need = counted.need
    return None, len(drawn), runs


def _as_drawn(task: Task, drawn: list[str]) -> tuple[list[CodeSample], Outcomes]:
    """The drawn samples and their outcomes, from the kinds': each draw's tests its own."""
    names = [f"s{i}" for i in range(len(drawn))]
    outcomes = Outcomes(base_checks=dict(task.outcomes.base_checks))

    def mine(i: int, test: str) -> str:
        return f"{names[i]}:{test.partition(':')[2]}"

    for i, kind in enumerate(drawn):
        outcomes.checks[names[i]] = dict(task.outcomes.checks[kind])
        for test in task.tests[kind]:
            outcomes.base[mine(i, test)] = task.outcomes.base[test]
    for i, kind in enumerate(drawn):
        for j, other in enumerate(drawn):
            for test in task.tests[other]:
                outcomes.runs[(names[i], mine(j, test))] = task.outcomes.runs[(kind, test)]
    samples = [CodeSample(names[i], task.diff[kind],
                          tuple(mine(i, t) for t in task.tests[kind]),
                          "it weakens the tests: tests/test_old.py (deleted)"
                          if kind == "deleted" else None) for i, kind in enumerate(drawn)]
    return samples, outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200, help="votes per task and cell")
    parser.add_argument("--tasks", type=int, default=len(TASKS))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-code-votes-") as tmp:
        began = time.perf_counter()
        tasks = [prepare(Path(tmp), n, e) for n, e in TASKS[:args.tasks]]
        prepared = time.perf_counter() - began
        one = min(tasks, key=lambda t: t.seconds)
        alone = prepare(Path(tmp) / "alone", one.name, dict(TASKS)[one.name], 1).seconds
    print(f"{len(tasks)} tasks, 6 kinds each, run against one another in {prepared:.0f} s "
          f"(real git and pytest); {args.trials} votes per task and cell\n")
    print("| p | K | step success | 95% interval | law p_step | samples a vote | "
          "pytest runs a vote | undecided |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for p in (0.6, 0.7, 0.8):
        for k in (1, 2, 3):
            right = undecided = samples = runs = total = 0
            for task in tasks:
                for _ in range(args.trials):
                    draw = [rng.choice(("right", "right2")) if rng.random() < p
                            else rng.choice(ERRORS) for _ in range(4 * k)]
                    ok, n, r = vote(task, draw, k)
                    total += 1
                    right += ok is True
                    undecided += ok is None
                    samples += n
                    runs += r
            low, high = wilson_interval(right, total)
            print(f"| {p} | {k} | {right / total:.3f} | {low:.3f} to {high:.3f} | "
                  f"{p_step(p, k):.3f} | {samples / total:.2f} | {runs / total:.1f} | "
                  f"{undecided / total:.3f} |")
    print(f"\nOne cross run of the six kinds ({one.name}): {one.seconds:.1f} s side by side "
          f"({SIDE_BY_SIDE} at once), {alone:.1f} s one folder at a time "
          f"({alone / one.seconds:.2f}x).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
