"""Votes on a code step in a headless run: samples in worktrees, decided by running them.

A step whose tools write is voted on only by what its samples do (``votes: K`` on the step,
or ``maker run --vote K``). Each sample is the same brief done by a fresh session in a
worktree of its own, cut from the same base (the main checkout as it is now), its Bash in
its own box: the first K at once, then as many as the leader's lead still lacks, at most
``SAMPLES_PER_K`` × K in all. As each batch returns:

- a sample is dropped before any test runs (never repaired) when its session failed or
  was cut, the red flagger rejects its answer, its handoff is not a complete one, it
  changed no file, the gate would refuse its handoff on what applies to a sample, it
  wrote outside the step's ``writes``, it weakened the tests, it changed how the tests
  run, or it added no test (``maker.engine.code_sample``);
- where the step asks (``probe: true``), one more session, the probe, writes only tests
  of the step's interface, with the first samples; its tests join every sample's row
  (``maker.engine.code_probe``);
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
worktree, with the probe's tests that chose it (``code_probe.copy_tests``), and the step
goes on as a step run beside others does: verified there, landed into the main checkout,
through the gate, the review and the person's approval. The other samples' worktrees are
removed. The winner's answer and the vote's record are kept with it
(``maker.engine.code_winner``): a run killed before the step landed goes on from them.
No lead within the bound: the step fails with the matrix. The vote's record (its matrix:
the shared tests, each sample's outcomes, flags and diff sizes) goes into the handoff and
the ledger.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from maker.core.models import AgentResult
from maker.core.paths import step_tmp_dir
from maker.engine.code_probe import PROBE, chose, copy_tests, probe_matrix
from maker.engine.code_sample import Sampled, measure
from maker.engine.code_winner import forget, save, with_files
from maker.errors import MakerError
from maker.executor.rules.vote_rules import SAMPLES_PER_K, VoteRecord
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import BASE_KEY, READY_KEY, WORKTREE_KEY
from maker.tools.box.boundary import workspace_key
from maker.tools.git import worktrees
from maker.verify.check_run import run_check, step_box
from maker.verify.cross_runs import SampleTree, cross_run
from maker.verify.detect import VerifyCommand, detect_commands
from maker.verify.pytest_runs import pytest_runner
from maker.voting.behaviour import BehaviourVote, CodeSample, Outcomes, decide

__all__ = ["CodeVote", "Draw"]

_RUN_S = 300.0  # one run of the tests (or of a check) in a sample's folder, at most
Draw = Callable[[StepRecord], Awaitable[AgentResult | None]]


class CodeVote:
    """The vote on step ``record``'s code (``k``: the lead it needs); ``draw(record)``
    runs one session of the brief for the copy of the step that names a sample's
    worktree, and says its answer (None when it failed or was cut); ``probe`` as
    ``draw``, of the probe's brief (``code_probe.probe_prompt``): drawn once where the
    step asks for a probe."""

    def __init__(self, store: PlanStore, record: StepRecord, k: int, flagger: RedFlagger,
                 draw: Draw, probe: Draw | None = None) -> None:
        self.store, self.record, self.k = store, record, k
        self.flagger, self.draw = flagger, draw
        self.probing = probe if record.spec.probe else None
        self.drawn: list[Sampled] = []
        self.probe: Sampled | None = None  # (drawn with the first samples)
        self.made: dict[str, Path] = {}  # (every sample's worktree, its session done or not)
        self.vote: BehaviourVote | None = None
        self.commit = self.tree = ""
        self.landed: tuple[list[str], dict[str, str]] = ([], {})  # (the probe's tests)
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
                drawing = [self._one(f"s{i + 1}", self.draw) for i in batch]
                if self.probing is not None and not self.drawn:  # (with the first ones)
                    drawing.append(self._one(PROBE, self.probing))
                got = await asyncio.gather(*drawing)
                self.drawn += [d for d in got if d.name != PROBE]
                self.probe = next((d for d in got if d.name == PROBE), self.probe)
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
            old = [*folder.glob(f"step-{self.record.number}-s*-*"),
                   *folder.glob(f"step-{self.record.number}-{PROBE}-*")]
            forget(self.store, self.record.number, old)  # (a winner kept, never landed)
            for stale in old:
                self._remove(stale)
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
        flags = "; ".join(f"{n}: {w}" for n, w in [
            *(vote.flags if vote else {}).items(),
            *([(PROBE, vote.probe_flag)] if vote and vote.probe_flag else [])])
        return (f"the vote on the step's code was undecided: no behaviour led by {self.k} "
                f"after {len(self.drawn)} samples (columns: "
                f"{', '.join(vote.columns) if vote else '-'}; rows: {rows or 'none'}; "
                f"flagged: {flags or 'none'})")

    def record_of(self) -> VoteRecord:
        """The vote as the handoff and the ledger keep it, its matrix (and its probe's
        session, why its tests were not used, the columns they gave) included."""
        vote, probe = self.vote, self.probe
        rows = dict(vote.rows) if vote else {}
        flags = dict(vote.flags) if vote else {}
        matrix = {"columns": list(vote.columns) if vote else [],
                  "rows": {n: list(r) for n, r in rows.items()}, "flags": flags,
                  "diff_lines": {d.name: d.sample.diff_lines for d in self.drawn}}
        if probe is not None:
            matrix[PROBE] = probe_matrix(probe.result.session_id if probe.result else None,
                                         vote.probe_flag if vote else probe.sample.flag,
                                         vote.columns if vote else (), *self.landed)
        sessions = [*self.drawn, *([probe] if probe else [])]  # (the probe's costs too)
        return VoteRecord(
            k=self.k, decided=bool(vote and vote.decided), samples=len(self.drawn),
            flagged=len(flags), margin=(vote.tally[0][1] - (vote.tally[1][1] if len(
                vote.tally) > 1 else 0)) if vote and vote.tally else 0,
            tally=tuple((" ".join(r), n) for r, n in vote.tally) if vote else (),
            flag_reasons=tuple(f"{n}: {w}"[:200] for n, w in flags.items())[:5],
            ballots=tuple(d.result.session_id if d.result else None for d in self.drawn),
            cost_usd=round(sum(d.result.cost_usd for d in sessions if d.result), 6),
            matrix=matrix)

    def flagged(self) -> list[str]:
        """Why each sample the vote dropped was dropped, and the probe's tests unused."""
        vote = self.vote
        said = {d.name: d.sample.flag for d in self.drawn if d.sample.flag}
        said.update({n: w for n, w in (vote.flags if vote else {}).items() if n not in said})
        return [f"sample {n}: {w}" for n, w in said.items()] + (
            [f"the probe: {vote.probe_flag}"] if vote and vote.probe_flag else [])

    def keep(self, winner: Sampled) -> tuple[AgentResult, VoteRecord]:
        """The winner's worktree becomes the step's own, the probe's tests that chose it
        copied in; every other sample's is removed. Returns the winner's answer (its
        ``files_changed`` naming those tests too) and the vote's record, both kept with
        the worktree (``code_winner.save``)."""
        assert winner.result is not None  # (a sample with no answer is flagged)
        self.landed = self._land_probe(winner)
        result, kept = with_files(winner.result, self.landed[0]), self.record_of()
        with self.store.lock():
            record = self.store.load_step(self.record.number)
            record.meta.update({WORKTREE_KEY: self._rel(winner.name), BASE_KEY: self.commit,
                                READY_KEY: True, "measured_from": self.tree})
            save(self.store, self.record.number, self._rel(winner.name), result, kept)
            self.store.save_step(record)
        self.drop(keep=winner.name)
        return result, kept

    def _land_probe(self, winner: Sampled) -> tuple[list[str], dict[str, str]]:
        """The probe's test files that chose ``winner`` (``code_probe.chose``), copied
        into its worktree (``code_probe.copy_tests``): those that landed, and why any
        other did not."""
        vote, probe = self.vote, self.probe
        if vote is None or probe is None or vote.probe_flag or winner.name not in vote.rows:
            return [], {}
        files, left = chose(vote.columns, vote.rows[winner.name])
        end = worktrees.snapshot(winner.folder)
        theirs = worktrees.changes(winner.folder, self.tree, end) if end else None
        landed, more = copy_tests(probe.folder, winner.folder, files,
                                  list(self.record.spec.writes or []), theirs)
        return landed, {**left, **more}

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

    async def _one(self, name: str, draw: Draw) -> Sampled:
        """Sample (or the probe) ``name``: its worktree, its session, and what it did."""
        rel = self._rel(name)
        folder = self.store.root / rel
        with self.store.lock():  # (on the loop's thread: the lock is the process's)
            worktrees.remove_worktree(self.store.project, folder)  # (a killed run's)
            worktrees.add_worktree(self.store.project, folder, self.commit)
            self.made[name] = folder
        sample = self.store.load_step(self.record.number)  # (a copy: never saved)
        sample.meta.update({WORKTREE_KEY: rel, BASE_KEY: self.commit, READY_KEY: True,
                            "measured_from": self.tree})
        result = await draw(sample)
        return await asyncio.to_thread(
            measure, name, folder, result, flagger=self.flagger, tree=self.tree,
            writes=list(self.record.spec.writes or []), store=self.store, record=sample,
            probe=name == PROBE)

    def _count(self, pytest: list[str], env: dict[str, str]) -> BehaviourVote:
        """Every sample not flagged run against the others' tests and the step's checks
        (in a box whose only writable place is a throwaway folder), and the vote."""
        live = [d for d in self.drawn if not d.sample.flag]
        probe = self.probe
        probes = [SampleTree(PROBE, probe.folder, probe.tests)] if probe and live and \
            not probe.sample.flag else []
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
                pytest=pytest, checks=checks, timeout=_RUN_S, probes=probes
            ) if live else (None, {})
        except OSError as exc:
            raise MakerError(f"maker could not run the samples' tests: {exc}") from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        samples = [CodeSample(d.name, d.sample.diff_lines, known.get(d.name, ()),
                              d.sample.flag or ("its tests gave no result (a hang, or "
                                                "pytest's crash)" if d.tests and not
                                                known.get(d.name) else None))
                   for d in self.drawn]
        probed = None if probe is None or not (live or probe.sample.flag) else \
            CodeSample(PROBE, 0, known.get(PROBE, ()), probe.sample.flag)
        return decide(samples, outcomes or Outcomes(), self.k, probe=probed)

