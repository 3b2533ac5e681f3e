"""Votes on a code step in a headless run: samples in worktrees, decided by running them.

A step whose tools write is voted on only by what its samples do (``votes: K`` on the step,
or ``maker run --vote K``). Each sample is the same brief done by a fresh session in a
worktree of its own, cut from the same base (the main checkout as it is now), its Bash in
its own box: the first K at once, then as many as the leader's lead still lacks, at most
``SAMPLES_PER_K`` × K in all. As each batch returns:

- a sample is dropped before any test runs (never repaired) when its session failed or
  was cut, the red flagger rejects its answer, its handoff is not a complete one, it
  changed no file, it wrote outside the step's ``writes``, it weakened the tests
  (``maker.handoff.weak_tests``: deleted, edited, skipped, or no assertion), it changed
  how the tests run (a ``conftest.py`` can rewrite every outcome; pytest's config,
  ``sitecustomize.py``, a ``.pth``), or it added no test (its diff is counted over its
  code alone, so a sample with no test would win by its smaller one);
- the rest are run against one another's tests and the step's checks
  (``maker.verify.cross_runs``, each folder in a box of its own, with a ``/tmp`` of its
  own, under ``plans/.maker/votes/``), and the vote is counted on what they do
  (``maker.voting.behaviour``); a sample whose tests gave no result (a hang) is dropped.

A sample's code runs inside pytest when its tests import it: code that rewrites pytest's
reports as it is imported could still fool the vote; the winner goes through the gate,
the review and the person's approval all the same. The run stopped (Ctrl-C) removes the
samples' worktrees (those whose sessions were still at work too), each with its box's own
``/tmp``, and the vote's scratch, and starts no further test run; a killed run's are
removed when the step's vote starts again.

The winner (the smallest diff of the behaviour that leads by K) becomes the step's own
worktree, and the step goes on as a step run beside others does: verified there, landed
into the main checkout, through the gate, the review and the person's approval. The other
samples' worktrees are removed. No lead within the bound: the step fails with the matrix.
The vote's record (its matrix: the shared tests, each sample's outcomes, flags and diff
sizes) goes into the handoff and the ledger.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from maker.core.models import AgentResult
from maker.core.paths import step_tmp_dir
from maker.errors import MakerError, YAMLCleanError
from maker.executor.rules.vote_rules import SAMPLES_PER_K, VoteRecord
from maker.handoff.fields import parse_handoff
from maker.handoff.weak_tests import is_test_file, weakened
from maker.planner.writes import clash
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import BASE_KEY, READY_KEY, WORKTREE_KEY
from maker.tools.box.boundary import workspace_key
from maker.tools.git import worktrees
from maker.tools.git.git_tree import file_diff, line_counts
from maker.verify.check_run import run_check, step_box
from maker.verify.cross_runs import SampleTree, cross_run
from maker.verify.detect import VerifyCommand, detect_commands
from maker.verify.pytest_runs import pytest_file, pytest_runner
from maker.voting.behaviour import BehaviourVote, CodeSample, Outcomes, decide
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["CodeVote", "Sampled"]

_RUN_S = 300.0  # one run of the tests (or of a check) in a sample's folder, at most


@dataclass
class Sampled:
    """One sample: its session's answer (None: it failed or was cut), its worktree."""

    name: str
    folder: Path
    result: AgentResult | None
    sample: CodeSample
    tests: tuple[str, ...] = ()


class CodeVote:
    """The vote on step ``record``'s code (``k``: the lead it needs); ``draw(record)``
    runs one session of the brief for the copy of the step that names a sample's
    worktree, and says its answer (None when it failed or was cut)."""

    def __init__(self, store: PlanStore, record: StepRecord, k: int, flagger: RedFlagger,
                 draw: Callable[[StepRecord], Awaitable[AgentResult | None]]) -> None:
        self.store, self.record, self.k = store, record, k
        self.flagger, self.draw = flagger, draw
        self.drawn: list[Sampled] = []
        self.made: dict[str, Path] = {}  # (every sample's worktree, its session done or not)
        self.vote: BehaviourVote | None = None
        self.commit = self.tree = ""
        self.stopped = threading.Event()  # (set: no further test runs start)

    async def run(self) -> tuple[Sampled | None, str]:
        """``(winner, "")``, or ``(None, why the step fails)``."""
        env = dict(os.environ)
        pytest = pytest_runner(self.store.project, env)
        if pytest is None:
            return None, ("a vote on a code step runs the samples' tests against one another, "
                          "and maker runs them with pytest only: this project's test command "
                          "(maker verify's) is not pytest's. Remove `votes` from the step, "
                          "or run it without --vote")
        rel = os.path.relpath(self.store.root, self.store.project)
        self.commit, self.tree = await asyncio.to_thread(
            worktrees.base_commit, self.store.project, "" if rel == "." else rel)
        self._stale()
        need, bound = self.k, SAMPLES_PER_K * self.k
        try:
            while need > 0 and len(self.drawn) < bound:
                batch = range(len(self.drawn), min(len(self.drawn) + need, bound))
                self.drawn += await asyncio.gather(*(self._one(i) for i in batch))
                self.vote = await asyncio.to_thread(self._count, pytest, env)
                if self.vote.decided and self.vote.winner is not None:
                    return next(d for d in self.drawn if d.name == self.vote.winner.name), ""
                need = self.vote.need
        except asyncio.CancelledError:  # (Ctrl-C: no sample's worktree outlives the run)
            self.stopped.set()
            self.drop()
            raise
        return None, self.undecided()

    def _stale(self) -> None:
        """The samples' worktrees (each with its own ``/tmp``) and the scratch a killed run
        of this step left: removed."""
        folder = self.store.root / worktrees.WORKTREES
        with self.store.lock():
            for old in folder.glob(f"step-{self.record.number}-s*-*"):
                self._remove(old)
        shutil.rmtree(self._scratch_root(), ignore_errors=True)

    def _remove(self, folder: Path) -> None:
        """A sample's worktree gone, and its box's own ``/tmp`` (under the plan lock)."""
        shutil.rmtree(step_tmp_dir(self.store.root, self.record.number,
                                   workspace_key(folder)), ignore_errors=True)
        worktrees.remove_worktree(self.store.project, folder)

    def _scratch_root(self) -> Path:
        return self.store.state_dir / "votes" / f"step-{self.record.number}"

    def undecided(self) -> str:
        vote = self.vote
        rows = "; ".join(f"{n}: {' '.join(r)}" for n, r in (vote.rows if vote else {}).items())
        flags = "; ".join(f"{n}: {w}" for n, w in (vote.flags if vote else {}).items())
        return (f"the vote on the step's code was undecided: no behaviour led by {self.k} "
                f"after {len(self.drawn)} samples (columns: "
                f"{', '.join(vote.columns) if vote else '-'}; rows: {rows or 'none'}; "
                f"flagged: {flags or 'none'})")

    def record_of(self) -> VoteRecord:
        """The vote as the handoff and the ledger keep it, its matrix included."""
        vote = self.vote
        rows = dict(vote.rows) if vote else {}
        flags = dict(vote.flags) if vote else {}
        return VoteRecord(
            k=self.k, decided=bool(vote and vote.decided), samples=len(self.drawn),
            flagged=len(flags), margin=(vote.tally[0][1] - (vote.tally[1][1] if len(
                vote.tally) > 1 else 0)) if vote and vote.tally else 0,
            tally=tuple((" ".join(r), n) for r, n in vote.tally) if vote else (),
            flag_reasons=tuple(f"{n}: {w}"[:200] for n, w in flags.items())[:5],
            ballots=tuple(d.result.session_id if d.result else None for d in self.drawn),
            cost_usd=round(sum(d.result.cost_usd for d in self.drawn if d.result), 6),
            matrix={"columns": list(vote.columns) if vote else [],
                    "rows": {n: list(r) for n, r in rows.items()}, "flags": flags,
                    "diff_lines": {d.name: d.sample.diff_lines for d in self.drawn}})

    def keep(self, winner: Sampled) -> None:
        """The winner's worktree becomes the step's own; every other sample's is removed."""
        with self.store.lock():
            record = self.store.load_step(self.record.number)
            record.meta.update({WORKTREE_KEY: self._rel(winner.name), BASE_KEY: self.commit,
                                READY_KEY: True, "measured_from": self.tree})
            self.store.save_step(record)
        self.drop(keep=winner.name)

    def drop(self, keep: str | None = None) -> None:
        """Every sample's worktree but ``keep``'s removed, with its own ``/tmp``; the
        vote's scratch too."""
        with self.store.lock():
            for name, folder in self.made.items():
                if name != keep:
                    self._remove(folder)
        shutil.rmtree(self._scratch_root(), ignore_errors=True)

    def _rel(self, name: str) -> str:
        return os.path.join(worktrees.WORKTREES, f"step-{self.record.number}-{name}-"
                                                 f"{self.commit[:12]}")

    async def _one(self, i: int) -> Sampled:
        name = f"s{i + 1}"
        rel = self._rel(name)
        folder = self.store.root / rel
        with self.store.lock():  # (on the loop's thread: the lock is the process's)
            worktrees.remove_worktree(self.store.project, folder)  # (a killed run's)
            worktrees.add_worktree(self.store.project, folder, self.commit)
            self.made[name] = folder
        sample = self.store.load_step(self.record.number)  # (a copy: never saved)
        sample.meta.update({WORKTREE_KEY: rel, BASE_KEY: self.commit, READY_KEY: True,
                            "measured_from": self.tree})
        result = await self.draw(sample)
        return await asyncio.to_thread(self._measured, name, folder, result)

    def _measured(self, name: str, folder: Path, result: AgentResult | None) -> Sampled:
        """The sample as the vote sees it: its diff, its tests, and a flag found before
        any test runs."""
        def flagged(why: str, lines: int = 0) -> Sampled:
            return Sampled(name, folder, result, CodeSample(name, lines, (), why))

        if result is None:
            return flagged("its session failed or was cut at its bound")
        bad, why = self.flagger.check_with_reason(result)
        if bad:
            return flagged(why)
        try:
            data, _ = YAMLCleaner().clean_mapping(result.raw_response)
        except YAMLCleanError as exc:
            return flagged(f"no handoff: {exc}")
        handoff, problems = parse_handoff(data)
        if handoff is None or handoff.status != "complete":
            return flagged("its handoff is not a complete one: " + (
                "; ".join(str(p) for p in problems[:2]) or str(data.get("status"))))
        end = worktrees.snapshot(folder)
        changed = worktrees.changes(folder, self.tree, end) if end else None
        if not changed or end is None:
            return flagged("it changed no file" if changed == [] else
                           "git could not measure its files")
        counts = line_counts(folder, self.tree, end, changed) or {}
        lines = sum(max(a, 0) + max(r, 0) for f, (a, r) in counts.items()
                    if not is_test_file(f))  # (its code's: tests it adds are no cost)
        writes = list(self.record.spec.writes or [])
        outside = [f for f in changed if writes and not clash([f], writes)]
        if outside:
            return flagged(f"it wrote outside the step's writes: {', '.join(outside[:3])}",
                           lines)
        weak = [w for f in changed if is_test_file(f)
                for d in [file_diff(folder, self.tree, end, f)] if d is not None
                for w in [weakened(f, *d)] if w]
        if weak:
            return flagged(f"it weakens the tests: {'; '.join(weak[:3])}", lines)
        machinery = [f for f in changed if _runs_the_tests(f, folder, self.tree, end)]
        if machinery:
            return flagged("it changes how the tests run (a sample's votes must come from "
                           f"its tests alone): {', '.join(machinery[:3])}", lines)
        tests = tuple(f for f in changed if pytest_file(f) and (folder / f).is_file()
                      and not (folder / f).is_symlink())
        if not tests:
            return flagged("it added no test (a vote compares samples by their tests)",
                           lines)
        return Sampled(name, folder, result, CodeSample(name, lines), tests)

    def _count(self, pytest: list[str], env: dict[str, str]) -> BehaviourVote:
        """Every sample not flagged run against the others' tests and the step's checks
        (in a box whose only writable place is a throwaway folder), and the vote."""
        live = [d for d in self.drawn if not d.sample.flag]
        self._scratch_root().mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="run-", dir=self._scratch_root()))
        try:
            def run(command: str, folder: Path, timeout: float) -> int:
                if self.stopped.is_set():
                    return 130  # (the run was stopped: not run)
                box = step_box(self.store, self.record.number, folder)  # (this folder's)
                return run_check(VerifyCommand("vote", command), 1, 1, folder, env, timeout,
                                 timeout, None, box).exit_code

            checks = [c for c in detect_commands(self.store.project, env)
                      if c.kind != "format"]
            outcomes, known = cross_run(
                self.store.project, self.commit,
                [SampleTree(d.name, d.folder, d.tests) for d in live], scratch, run,
                pytest=pytest, checks=checks, timeout=_RUN_S) if live else (None, {})
        except OSError as exc:
            raise MakerError(f"maker could not run the samples' tests: {exc}") from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        samples = [CodeSample(d.name, d.sample.diff_lines, known.get(d.name, ()),
                              d.sample.flag or ("its tests gave no result (a hang, or "
                                                "pytest's crash)" if d.tests and not
                                                known.get(d.name) else None))
                   for d in self.drawn]
        return decide(samples, outcomes or Outcomes(), self.k)


# What makes pytest run otherwise than the tests say: a sample's votes must come from its
# tests alone (a conftest.py can rewrite every outcome).
_MACHINERY = frozenset({"conftest.py", "pytest.ini", "tox.ini", "setup.cfg",
                        "sitecustomize.py", "usercustomize.py", ".pytest.ini"})


def _runs_the_tests(path: str, folder: Path, start: str, end: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if name in _MACHINERY or name.endswith(".pth"):
        return True
    if name != "pyproject.toml":
        return False
    diff = file_diff(folder, start, end, path)
    return diff is None or any("pytest" in line for line in diff[1])
