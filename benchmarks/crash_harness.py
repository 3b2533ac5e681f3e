"""Kill the real `maker` CLI in the middle of every state change, and count the
corrupted outcomes.

For each state-changing command, from a fixed starting state:

1. **every change**: under ``strace -f``, the command is killed with SIGKILL on entry
   to its N-th rename, unlink, mkdir, rmdir or link syscall (each family counted on its
   own), for N = 1, 2, … until it runs to the end;
2. **random moments**: the command is killed after a random delay between half and
   1.5 times the time a clean run takes, where its changes are (``--random`` tries per
   command, 200 by default).

After each kill the next command (``maker status --json``) runs, and the tree of
``plans/`` (timestamps and digests masked) must equal the tree before the command or
the tree after a clean run of it. Anything else is a corrupted outcome. Prints a table
and exits 1 if any outcome was corrupted.

The parallel steps' state changes (``WAVES``) run in a git project: two steps
started in their worktrees ("wave start", two state changes one after the other: the
state between them is accepted too), a step's change landed ("land", ``maker land 1``)
and a landing that conflicts and sends the step to a new base ("land conflict → new
base", ``maker land 1``). Their next command is what ``maker run`` does first (a landing
put back, orphaned worktrees removed, a step's worktree made whole:
``tests/harness/crash_wave_states.after_kill``), and the state compared is the plans
folder, the main checkout's files, each worktree's and git's list of worktrees. Their
kill points are maker's own changes (strace follows no git child: its counts are per
process, and a git killed alone is a failed git, not a killed maker); the random kills
kill the whole process group, git's children in the middle of their work included.

    python benchmarks/crash_harness.py [--random 200] [--only "step start"] [--src DIR]

Needs strace for part 1 (Debian: `apt-get install strace`); without it, part 1 is
skipped and said so. Part 2 needs nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"  # the folder that holds the tests' harness/
sys.path.insert(0, str(TESTS))

from harness.crash_states import awaiting, in_progress, snapshot, stopped  # noqa: E402
from harness.crash_wave_states import (  # noqa: E402
    scratch_left,
    wave_conflict,
    wave_ready,
    wave_snapshot,
    wave_working,
)
from harness.step_plans import handoff  # noqa: E402
from maker.store.plan_store import PlanStore  # noqa: E402
from maker.store.seal import key_path  # noqa: E402

MAKER = [sys.executable, "-c", "from maker.cli.main import main; main()"]
FAMILIES = {
    "rename": "rename,renameat,renameat2",
    "unlink": "unlink,unlinkat,rmdir",
    "mkdir": "mkdir,mkdirat",
    "link": "link,linkat",
}
NEW_PLAN = """reasoning: Again.
plan:
  - step: 1
    task_type: action_step
    title: Write it
    task_description: Write the thing.
    primary_tools: [Read]
    fallback_tools: []
    input_variables: []
    output_variable: step_1_output
    output_schema: "{result: string}"
    next_step_sequence_number: -1
"""

# name: (starting state, command arguments, stdin)
COMMANDS: dict[str, tuple[Callable[[Path], PlanStore], list[str], str | None]] = {
    "plan write": (stopped, ["plan", "write", "-"], NEW_PLAN),
    "step start": (stopped, ["step", "start", "2"], None),
    "handoff accept": (in_progress, ["handoff", "accept", "-"],
                       handoff(2, discoveries=["Found x"])),
    # Seed 004's protocol (docs/architecture.md#the-seeds): the sweep's edge case written into
    # step 3's file and a proposal kept, in the gate's transaction; orient's major
    # deviation recorded.
    "handoff accept swept": (in_progress, ["handoff", "accept", "-"],
                             handoff(2, edge_cases=[{"step": 3, "note": "an empty list"}],
                                     proposals=["Paginate the export"])),
    "orient major": (in_progress, ["orient", "2", "major", "--what", "moved", "--revised",
                                   "Do it the new way"], None),
    "step fail": (in_progress, ["step", "fail", "2", "--reason", "It broke"], None),
    "step reset": (awaiting, ["step", "reset", "2"], None),
    "step approve": (awaiting, ["step", "approve", "2"], None),
    "step reject": (awaiting, ["step", "reject", "2", "--notes", "Use the new schema"], None),
}

_STORE = ("from pathlib import Path; from maker.store.plan_store import PlanStore; "
          "s = PlanStore(Path('plans').resolve())")
_START = "from maker.executor.parallel.worktree_step import start_in_worktree as go; go(s, {}, 's')"
_LAND = "import sys; sys.argv = ['maker', 'land', '1']; from maker.cli.main import main; main()"
_NEXT = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(TESTS)!r}); {_STORE}; "
         "from harness.crash_wave_states import after_kill; after_kill(s)"]
# name: (starting state, its state changes (Python, one after another), the exit status)
WAVES: dict[str, tuple[Callable[[Path], PlanStore], list[str], int]] = {
    "wave start": (wave_ready, [_START.format(1), _START.format(2)], 0),
    "land": (wave_working, [_LAND], 0),
    "land conflict → new base": (wave_conflict, [_LAND], 1),  # (exit 1: not landed)
}

SRC = REPO / "src"  # the maker whose CLI is killed (--src: another checkout's, to compare)


def _env(project: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MAKER_", "CLAUDE")) and not k.endswith("_CMD")}
    # The same user as the harness, whose key sealed the starting state's approvals.
    env.update(PYTHONDONTWRITEBYTECODE="1", HOME=str(project.parent / "home"),
               PYTHONPATH=str(SRC), XDG_DATA_HOME=str(key_path().parent.parent))
    for var in ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"):
        env[var] = ""  # no verification command: the handoff needs no evidence
    return env


class Fixture:
    wave = False

    def __init__(self, base: Path, name: str) -> None:
        self.base, self.name = base, name
        self.setup, self.args, self.stdin = COMMANDS[name]
        self.count = 0

    def state(self, project: Path) -> dict[str, str]:
        return snapshot(project / "plans")

    def fresh(self) -> Path:
        self.count += 1
        project = self.base / f"{self.name.replace(' ', '-')}-{self.count}" / "project"
        (project.parent / "home").mkdir(parents=True)
        project.mkdir()
        cwd = os.getcwd()
        os.chdir(project)
        try:
            self.setup(project)
        finally:
            os.chdir(cwd)
        return project

    def run(self, project: Path, prefix: list[str] | None = None,
            kill_after: float | None = None) -> int:
        # A person's decision (approve, reject) runs at a terminal: give it one.
        tty = self.args[:2] in (["step", "approve"], ["step", "reject"])
        pair = os.openpty() if tty else None
        proc = subprocess.Popen([*(prefix or []), *MAKER, *self.args], cwd=project,
                                env=_env(project),
                                stdin=pair[1] if pair else subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if pair:
            os.close(pair[1])
            try:
                if kill_after is not None:
                    time.sleep(kill_after)
                    proc.kill()
                return proc.wait()
            finally:
                os.close(pair[0])  # the terminal's other end stays open while it runs
        assert proc.stdin is not None
        try:  # the whole input first: a command waiting for its stdin does nothing
            proc.stdin.write((self.stdin or "").encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        if kill_after is not None:
            time.sleep(kill_after)
            proc.kill()
        return proc.wait()

    def next_command(self, project: Path) -> None:
        subprocess.run([*MAKER, "status", "--json"], cwd=project, env=_env(project),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


class WaveFixture(Fixture):
    """A command of ``WAVES``: its stages (``upto``: the first ones only) in one Python
    process, in its own process group (a random kill takes its git children too)."""

    wave = True

    def __init__(self, base: Path, name: str) -> None:
        self.base, self.name = base, name
        self.setup, self.stages, self.rc = WAVES[name]
        self.count, self.upto = 0, len(self.stages)

    def state(self, project: Path) -> dict[str, str]:
        got = wave_snapshot(project)
        got.update({f"scratch {k}": "" for k in scratch_left(project)})
        return got

    def run(self, project: Path, prefix: list[str] | None = None,
            kill_after: float | None = None) -> int:
        code = "; ".join([_STORE, *self.stages[:self.upto]])
        proc = subprocess.Popen([*(prefix or []), sys.executable, "-c", code], cwd=project,
                                env=_env(project), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        if kill_after is not None:
            time.sleep(kill_after)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # (a git the kill left behind)
        return rc

    def next_command(self, project: Path) -> None:
        subprocess.run(_NEXT, cwd=project, env=_env(project), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)


def _after_kill(fx: Fixture, project: Path, old: dict[str, str], new: dict[str, str],
                where: str, between: list[dict[str, str]] | None = None) -> str:
    """Run the next command, then judge what it sees: ``old``, ``new`` (or a state
    ``between`` the stages of a wave command) or ``corrupted`` (a corrupted project is
    kept, and named, for a look)."""
    fx.next_command(project)
    after = fx.state(project)
    outcome = ("old" if after == old else "new" if after == new or after in (between or [])
               else "corrupted")
    if outcome == "corrupted":  # (copied out of the run's temporary folder, which goes)
        kept = Path(tempfile.mkdtemp(prefix="maker-crash-kept-")) / "project"
        shutil.copytree(project, kept, symlinks=True)
        unlike = sorted(k for k in set(old) | set(after) if old.get(k) != after.get(k))
        print(f"  corrupted: {fx.name}, {where}: kept in {kept}; unlike the old state in "
              f"{unlike[:6]}")
    else:
        shutil.rmtree(project.parent)
    return outcome


def every_change(fx: Fixture, old: dict[str, str], new: dict[str, str],
                 between: list[dict[str, str]]) -> dict[str, int]:
    tally = {"old": 0, "new": 0, "corrupted": 0}
    follow = [] if fx.wave else ["-f"]  # (a wave's git children: see the docstring)
    for family, calls in FAMILIES.items():
        for n in range(1, 500):
            project = fx.fresh()
            rc = fx.run(project, ["strace", *follow, "-qq", "-o", os.devnull, "-e",
                                  f"trace={calls}", "-e",
                                  f"inject={calls}:signal=KILL:when={n}"])
            if rc != -9 and rc != 137:
                want = fx.rc if isinstance(fx, WaveFixture) else 0
                assert rc == want, f"{fx.name}: the command failed on its own (exit {rc})"
                break
            tally[_after_kill(fx, project, old, new, f"killed at {family} #{n}",
                              between)] += 1
    return tally


def random_kills(fx: Fixture, old: dict[str, str], new: dict[str, str], tries: int,
                 span: float, rng: random.Random,
                 between: list[dict[str, str]]) -> dict[str, int]:
    tally = {"old": 0, "new": 0, "corrupted": 0}
    for _ in range(tries):
        project = fx.fresh()
        # The changes come last, after the interpreter starts: aim at the run's end.
        fx.run(project, kill_after=rng.uniform(0.5 * span, 1.5 * span))
        tally[_after_kill(fx, project, old, new, "random kill", between)] += 1
    return tally


def _between(fx: Fixture) -> list[dict[str, str]]:
    """The states after each stage but the last of a wave command (clean runs)."""
    if not isinstance(fx, WaveFixture):
        return []
    out = []
    for upto in range(1, len(fx.stages)):
        fx.upto = upto
        project = fx.fresh()
        assert fx.run(project) == 0, f"{fx.name}: a clean run of its first stages failed"
        out.append(fx.state(project))
    fx.upto = len(fx.stages)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=200, help="random kills per command")
    parser.add_argument("--only", action="append", help="run only this command (repeatable)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--src", type=Path, help="kill the CLI of this src/ instead "
                        "(for example an older checkout's, to compare)")
    args = parser.parse_args()
    global SRC
    SRC = args.src.resolve() if args.src else SRC
    rng = random.Random(args.seed)
    have_strace = shutil.which("strace") is not None
    if not have_strace:
        print("strace not found: the kill-before-every-change part is skipped "
              "(apt-get install strace)")
    names = args.only or [*COMMANDS, *WAVES]
    unknown = [n for n in names if n not in COMMANDS and n not in WAVES]
    if unknown:
        parser.error(f"--only {unknown[0]!r} is not a command the harness knows; "
                     f"choose from: {', '.join(repr(n) for n in [*COMMANDS, *WAVES])}")
    total_bad = 0
    print(f"{'command':<24} {'kill points':>11} {'corrupted':>9}   "
          f"{'random kills':>12} {'old/new':>9} {'corrupted':>9}")
    with tempfile.TemporaryDirectory(prefix="maker-crash-") as tmp:
        for name in names:
            fx = WaveFixture(Path(tmp), name) if name in WAVES else Fixture(Path(tmp), name)
            between = _between(fx)
            project = fx.fresh()
            old = fx.state(project)
            began = time.perf_counter()
            want = fx.rc if isinstance(fx, WaveFixture) else 0
            assert fx.run(project) == want, f"{name}: a clean run failed"
            span = time.perf_counter() - began
            new = fx.state(project)
            assert new != old, f"{name}: a clean run changed nothing"
            every = every_change(fx, old, new, between) if have_strace else None
            rand = random_kills(fx, old, new, args.random, span, rng, between)
            bad = rand["corrupted"] + (every["corrupted"] if every else 0)
            total_bad += bad
            points = f"{sum(every.values())}" if every else "skipped"
            print(f"{name:<24} {points:>11} {every['corrupted'] if every else '-':>9}   "
                  f"{args.random:>12} {rand['old']:>4}/{rand['new']:<4} "
                  f"{rand['corrupted']:>9}", flush=True)
    print(f"corrupted outcomes in all: {total_bad}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
