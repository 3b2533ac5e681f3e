"""One step of a headless run: samples, red flags, verification, the gate, the fix loop.

    start_step ─▶ executor session ─▶ red-flagged? ──yes──▶ StepFlagged, a FRESH sample
                                         │ no                (at most ``max_samples``)
                                         ▼
                 status complete? ─▶ run_verification ──failed──▶ fix loop: the SAME
                                         │ passed                session resumed with the
                                         ▼                       failure's tail
                                 accept_handoff ──refused──▶ a new session with every
                                         │                   problem (``gate_attempts``    
                                         ▼                   answers in all)
                     complete | awaiting-approval | blocked | failed

The fix loop (seed 004, ``max_fix_attempts``) resumes the session that answered
(``resume`` with the session id its ResultMessage reported): it keeps what it read and
did, and reads only what failed. When that session cannot be resumed (no id, or the
resumed call fails), a fresh session gets the brief, its previous answer and the
failure instead. A flagged answer and a refused handoff always get a fresh session:
MAKER's rule is to resample, not to repair in context. The working tree keeps every
attempt's edits, and the feedback says so. Every call goes to the ledger: kind
``executor``, ``fix`` or, for a discarded answer, ``flagged``.

The seeds: docs/architecture.md#the-seeds.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from maker.core.events import Event, StepFailed, StepFlagged, StepStarted
from maker.core.models import AgentResult
from maker.core.sdk import bounded
from maker.engine.apart import land_apart, land_feedback, verify_apart
from maker.engine.code_probe import probe_prompt
from maker.engine.code_vote import CodeVote, Draw
from maker.engine.code_winner import kept_winner
from maker.engine.deviation import after_answer, stop_reason
from maker.engine.feedback import failure, fix_feedback, refusal_feedback
from maker.engine.parts import EngineParts
from maker.engine.vote_step import code_lead, record_of, undecided_reason, vote_on
from maker.errors import AgentSDKError, HandoffRejectedError, MakerError, SessionTimeoutError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.brief import build_brief
from maker.executor.protocol.orient import pending_deviation
from maker.executor.rules.step_rules import settings
from maker.executor.rules.vote_rules import VoteRecord, step_votes
from maker.executor.state.held_vote import held, hold
from maker.executor.state.lifecycle import fail_step, start_step
from maker.executor.state.run import run_notes
from maker.handoff.on_base import run_on_base
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import worktree_of
from maker.verify.fixes import fix_budget_spent
from maker.verify.runner import run_verification

__all__ = ["StepRun"]


class StepRun:
    """Runs step ``n`` once through; :meth:`events` yields its events, then ``status``
    holds where the step ended (``complete``, ``awaiting-approval``, ``blocked``,
    ``failed``, or ``person``: it stays in progress and a person decides, on a deviation
    or an undecided code vote they said to be asked about) and ``reason`` why."""

    def __init__(self, parts: EngineParts, store: PlanStore, n: int) -> None:
        self.parts = parts
        self.store = store
        self.n = n
        self.status = ""
        self.reason = ""
        self.output: Any = None
        self.next_ready: list[int] = []  # ready after a complete step (the gate's word)
        self._winner: tuple[AgentResult, VoteRecord] | None = None
        self.cost_usd = 0.0
        self._attempt = 0
        self._timeout: float | None = None

    async def events(self) -> AsyncIterator[Event]:
        parts, store, n = self.parts, self.store, self.n
        bounds = settings(store.root)  # a person's tunables: a broken file stops here
        timeout = parts.session_timeout
        self._timeout = bounds.session_timeout if timeout is None else timeout
        started = start_step(store, n, session_id=parts.session_id, take_over=True)
        yield StepStarted(timestamp=time.time(), step=n, title=started.title)
        record = store.load_step(n)  # (one file: the whole plan was checked just now)
        waits = stop_reason(record) if pending_deviation(record) is not None else held(record)
        if waits:  # (still a person's to decide: a deviation, a code vote held for them)
            self.status, self.reason = "person", waits
            return
        brief = build_brief(store, None, n) + run_notes(store, n)
        feedback, kind = "", "executor"
        resume: str | None = None  # the session a fix resumes
        flagged = refused = 0
        voted: AgentResult | None = None  # the winner of a vote, when the step votes
        vote: VoteRecord | None = None
        k = step_votes(record.spec, parts.votes)
        code_k = code_lead(record.spec, parts.votes, store.project, os.environ)
        if k > 1 or code_k > 1:
            async for event in (self._vote(record, brief, k) if k > 1
                                else self._vote_code(record, brief, code_k)):
                yield event
            if self._winner is None:  # undecided: the step failed (or waits) with the tally
                return
            voted, vote = self._winner
            record = store.load_step(n)  # (a code vote's winner: its worktree now)
        while True:
            if voted is not None:  # (not flagged, and in the ledger as a vote)
                result, voted, bad, why = voted, None, False, ""
            else:
                try:
                    result = await self._draw(record, brief, feedback, kind, resume)
                except SessionTimeoutError as exc:  # (in the ledger: _sample put it there)
                    # A session past its bound is a bad sample: discarded, and drawn
                    # again from a fresh session, as a red-flagged answer is.
                    flagged, resume = flagged + 1, None
                    yield StepFlagged(timestamp=time.time(), step=n, reason=str(exc))
                    if flagged >= parts.max_samples:
                        yield self._fail(f"{flagged} sessions in a row were red-flagged or "
                                         f"cut at their bound; the last: {exc}")
                        return
                    continue
                waits = self._deviation(result)
                if waits is None:
                    return  # (a person decides: the run stops for them)
                if waits:
                    self._record(kind, result, record)
                    feedback, kind, resume = waits, "executor", result.session_id
                    continue
                bad, why = parts.flagger.check_with_reason(result)
                self._record(kind if not bad else "flagged", result, record)
            resume = None
            if bad:
                flagged += 1
                yield StepFlagged(timestamp=time.time(), step=n, reason=why)
                if flagged >= parts.max_samples:
                    yield self._fail(f"{flagged} answers in a row were red-flagged; the "
                                     f"last: {why}")
                    return
                continue  # discarded: a fresh sample of the same prompt
            output = result.output
            apart = worktree_of(store, record) is not None  # (run beside others)
            if output.get("status") == "complete":
                run = await verify_apart(store, n) if apart else run_verification(store, step=n)
                if run.passed and not apart:  # (apart: maker verify ran them, in the worktree)
                    run_on_base(store, n)  # (its new tests on the code before it, sealed)
                if run.status == "failed":
                    # The count is maker verify's record of this run of the step.
                    if fix_budget_spent(run.failed_runs, bounds.max_fix_attempts):
                        yield self._fail(f"verification still fails after "
                                         f"{bounds.max_fix_attempts} fix attempts "
                                         f"(max_fix_attempts): {failure(run)}")
                        return
                    feedback = fix_feedback(run, result.raw_response, run.failed_runs,
                                            bounds.max_fix_attempts)
                    kind, resume = "fix", result.session_id
                    continue
                if apart:
                    landing = await land_apart(store, n)
                    if landing["failed"]:
                        yield self._failed(landing["reason"])
                        return
                    if landing["kind"] not in ("landed", "nothing"):  # a run on a new base
                        record = store.load_step(n)
                        brief = build_brief(store, None, n) + run_notes(store, n)
                        feedback, kind = land_feedback(landing), "executor"
                        continue
            try:
                accepted = accept_handoff(store, result.raw_response, vote=vote, step=n)
            except HandoffRejectedError as exc:
                refused += 1
                vote = None  # what the gate sees next is a fresh answer, not the vote's
                if refused >= bounds.gate_attempts:
                    yield self._fail(f"the gate refused {refused} handoffs; the last: "
                                     + "; ".join(str(p) for p in exc.problems))
                    return
                feedback = refusal_feedback(exc.problems, result.raw_response, refused,
                                            bounds.gate_attempts)
                kind = "executor"
                continue
            self.status = accepted.status
            self.output = output.get("output")
            self.next_ready = [number for number, _ in accepted.next_steps]
            if accepted.status in ("blocked", "failed"):
                blockers = output.get("blockers") or [output.get("summary") or "no reason"]
                self.reason = f"the executor handed off {accepted.status}: " + "; ".join(
                    str(b) for b in blockers)
                yield StepFailed(timestamp=time.time(), step=n, reason=self.reason)
            return

    async def _vote(self, record: StepRecord, brief: str, k: int) -> AsyncIterator[Event]:
        """Vote on the step's answer (``maker.engine.vote_step``): isolated samples of
        the brief until one answer leads by ``k``. Sets ``_winner`` (the answer and the
        vote's record), or fails the step with the tally."""
        parts = self.parts

        async def sample() -> AgentResult:
            try:
                result = await self._sample(record, brief, "vote")
            except SessionTimeoutError as exc:  # (in the ledger already): a flagged sample
                return AgentResult(output=None, raw_response="", error=str(exc),
                                   duration_ms=exc.duration_ms, cost_known=False)
            self._record("vote", result, record)
            return result

        vote = await vote_on(self.store, record.spec, parts.flagger, k, sample)
        for reason in vote.flag_reasons:
            yield StepFlagged(timestamp=time.time(), step=self.n, reason=reason)
        kept = record_of(record.spec, vote)
        parts.record("vote", self.n, 0, detail=kept.to_dict(), model=parts.model_for(record),
                     error=None if vote.decided else "undecided")
        if not vote.decided or vote.winner is None:
            yield self._fail(undecided_reason(record.spec, vote))
            return
        self._winner = (vote.winner, kept)

    async def _vote_code(self, record: StepRecord, brief: str, k: int
                         ) -> AsyncIterator[Event]:
        """Vote on the step's code (``maker.engine.code_vote``): samples in worktrees of
        their own, decided by what they do. Sets ``_winner`` (its worktree now the step's),
        or fails the step with the matrix (under ``undecided_code_vote: ask``, a person's
        setting, stops it for them with the matrix instead). A winner a killed run kept
        (``code_winner``) is gone on from: no new vote."""
        if (won := kept_winner(self.store, record)) is not None:
            self._winner = won
            return
        def drawer(prompt: str, kind: str) -> Draw:
            async def draw(sample: StepRecord) -> AgentResult | None:
                try:
                    result = await self._sample(sample, prompt, kind)
                except SessionTimeoutError:  # (in the ledger already): a flagged sample
                    return None
                self._record(kind, result, record)
                return result
            return draw

        vote = CodeVote(self.store, record, k, self.parts.flagger, drawer(brief, "vote"),
                        probe=drawer(probe_prompt(brief), "probe"))
        try:
            winner, why = await vote.run()
        except MakerError as exc:
            vote.drop()
            yield self._fail(f"the vote on the step's code could not run: {exc}")
            return
        won = vote.keep(winner) if winner is not None and winner.result is not None else None
        self.parts.record("vote", self.n, 0, detail=(won[1] if won else vote.record_of()
                                                     ).to_dict(),
                          model=self.parts.model_for(record),
                          error=None if won is not None else "undecided")
        for said in vote.flagged():
            yield StepFlagged(timestamp=time.time(), step=self.n, reason=said)
        if won is None:
            vote.drop()
            if vote.vote is not None and settings(  # (counted, undecided: a person's word)
                    self.store.root).undecided_code_vote == "ask":
                self.status, self.reason = "person", hold(self.store, self.n, why)
                return
            yield self._fail(why)
            return
        self._winner = won

    async def _draw(self, record: StepRecord, brief: str, feedback: str, kind: str,
                    resume: str | None) -> AgentResult:
        """One answer: from the session ``resume`` names, told only ``feedback``; else
        (or when that fails) from a fresh session given ``brief`` + ``feedback``."""
        if resume:
            try:
                result = await self._sample(record, feedback, kind, resume=resume)
            except SessionTimeoutError:
                raise  # (not a session that cannot be resumed: one that hung)
            except AgentSDKError:
                result = None  # (recorded in the ledger by _sample)
            if result is not None and not result.error:
                return result
            if result is not None:
                self._record(kind, result, record)
        return await self._sample(record, brief + feedback, kind)

    async def _sample(self, record: StepRecord, prompt: str, kind: str,
                      resume: str | None = None) -> AgentResult:
        parts = self.parts
        self._attempt += 1
        model = parts.model_for(record)
        budget = parts.call_budget()  # BudgetExceededError: the run stops here
        limits = parts.limits(self.store, record)
        if resume:
            limits["resume"] = resume
        session = parts.runner_factory(max_budget_usd=budget, model=model, **limits)
        began = time.monotonic()
        result: AgentResult | None = None
        try:
            result = await bounded(self._timeout, session.run(record.spec, prompt,
                                                              parts.config),
                                   f"step {self.n}'s {kind}")
            parts.check_stop()  # (what the session said after the stop is not an answer)
            return result
        except SessionTimeoutError as exc:
            parts.check_stop()  # (Ctrl-C at the same moment: an interruption)
            parts.record(kind, self.n, self._attempt, model=model, error=str(exc),
                         cost_known=False, duration_ms=exc.duration_ms)
            raise
        except asyncio.CancelledError:
            # Ctrl-C (or SIGTERM): the session is cut; unless it ended on its own, what
            # it cost is unknown to maker.
            self.cost_usd += result.cost_usd if result is not None else 0.0
            parts.record(kind, self.n, self._attempt, model=model,
                         cost_usd=result.cost_usd if result is not None else 0.0,
                         cost_known=result.cost_known if result is not None else False,
                         duration_ms=int((time.monotonic() - began) * 1000),
                         error="interrupted (the run was stopped during this call"
                               + ("" if result is not None else "; its cost is not known "
                                  "to maker") + ")")
            raise  # the step stays in progress: `maker run` again resumes it
        except AgentSDKError as exc:
            self.cost_usd += exc.cost_usd
            parts.record_answer(kind, self.n, self._attempt, exc, model)
            raise  # the step stays in progress: `maker run` again resumes it

    def _record(self, kind: str, result: AgentResult, record: StepRecord) -> None:
        self.cost_usd += result.cost_usd
        model = self.parts.model_for(record)
        self.parts.record_answer(kind, self.n, self._attempt, result, model)

    def _deviation(self, result: AgentResult) -> str | None:
        """After a session's answer: ``""`` when no deviation is pending, the feedback
        that resumes the session when one was approved by ``STEP_AUTOAPPROVE=1``, None
        when the run stops for a person (``maker.engine.deviation``)."""
        what, said = after_answer(self.store, self.n)
        if what == "stop":
            self._record("executor", result, self.store.load_step(self.n))
            self.status, self.reason = "person", said
            return None
        return said

    def _failed(self, reason: str) -> StepFailed:
        """The step failed already (the code that stopped it recorded why)."""
        self.status, self.reason = "failed", reason
        return StepFailed(timestamp=time.time(), step=self.n, reason=reason)

    def _fail(self, reason: str) -> StepFailed:
        fail_step(self.store, self.n, reason)
        self.status, self.reason = "failed", reason
        return StepFailed(timestamp=time.time(), step=self.n, reason=reason)
