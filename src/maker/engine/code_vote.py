"""Votes on a code step in a headless run: samples in worktrees, decided by running them.

A step whose tools write is voted on only by what its samples do (``votes: K`` on the step,
or ``maker run --vote K``). Each sample is the same brief done by a fresh session in a
worktree of its own, cut from the same base (the main checkout as it is now), its Bash in
its own box: the first K at once, then as many as the leader's lead still lacks, at most
``SAMPLES_PER_K`` × K in all. As each batch returns:

- a sample is dropped before any test runs (never repaired) when its session failed or
  was cut, the red flagger rejects its answer, its handoff is not a complete one, it
  changed no file, it wrote outside the step's ``writes``, or it weakened the tests
  (``maker.handoff.weak_tests``: deleted, edited, skipped, or no assertion);
- the rest are run against one another's tests and the step's checks
  (``maker.verify.cross_runs``, in a box whose only writable place is a throwaway
  folder), and the vote is counted on what they do (``maker.voting.behaviour``).

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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from maker.core.models import AgentResult
from maker.errors import MakerError, YAMLCleanError
from maker.executor.rules.vote_rules import SAMPLES_PER_K, VoteRecord
from maker.handoff.fields import parse_handoff
from maker.handoff.weak_tests import is_test_file, weakened
from maker.planner.writes import clash
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import BASE_KEY, READY_KEY, WORKTREE_KEY
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
        self.vote: BehaviourVote | None = None

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
        need, bound = self.k, SAMPLES_PER_K * self.k
        while need > 0 and len(self.drawn) < bound:
            batch = range(len(self.drawn), min(len(self.drawn) + need, bound))
            self.drawn += await asyncio.gather(*(self._one(i) for i in batch))
            self.vote = await asyncio.to_thread(self._count, pytest, env)
            if self.vote.decided and self.vote.winner is not None:
                return next(d for d in self.drawn if d.name == self.vote.winner.name), ""
            need = self.vote.need
        return None, self.undecided()

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
        with self.store.lock():
            for d in self.drawn:
                if d.name != keep:
                    worktrees.remove_worktree(self.store.project, d.folder)

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
        lines = sum(max(a, 0) + max(r, 0) for a, r in counts.values())
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
        tests = tuple(f for f in changed if pytest_file(f) and (folder / f).is_file())
        return Sampled(name, folder, result, CodeSample(name, lines), tests)

    def _count(self, pytest: list[str], env: dict[str, str]) -> BehaviourVote:
        """Every sample not flagged run against the others' tests and the step's checks
        (in a box whose only writable place is a throwaway folder), and the vote."""
        live = [d for d in self.drawn if not d.sample.flag]
        scratch = Path(tempfile.mkdtemp(prefix="maker-vote-"))
        try:
            box = step_box(self.store, self.record.number, scratch)

            def run(command: str, folder: Path, timeout: float) -> int:
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
                              d.sample.flag) for d in self.drawn]
        return decide(samples, outcomes or Outcomes(), self.k)
