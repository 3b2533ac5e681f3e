"""Voting on one step's answer in a headless run (``maker run --vote K``).

Which steps vote, and by how many, is ``maker.executor.rules.vote_rules.step_votes`` (the
plugin's rule too): a step's own ``votes``; else, where the step's answer can be
sampled without side effects (its tools all only read), ``--vote K``, or a lead of 2
for a conditional step. Several isolated executor
sessions answer the same brief at once; ``maker.voting.first_to_ahead_by_k`` takes the
first answer with ``k`` more votes than any other. A sample is red-flagged, and does
not vote, when the red flagger rejects it or when the gate would refuse its handoff
(every problem but the verification evidence, which the engine itself runs on the
winner afterwards). What is compared:

- a conditional step: its status and the ``next_step`` it chose (its ``reason`` is
  prose, which two right answers never share);
- any other step: its status and its whole ``output``, in canonical form (keys sorted,
  whitespace collapsed).

The winner then goes through the usual path (verification, the gate, approval), with
the vote's record (``vote_rules.VoteRecord``, the plugin's shape: samples, flagged,
margin, tally, the samples' session ids, cost) in its handoff and the ledger. An
undecided vote fails the step with the tally.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable

from maker.core.models import AgentResult, PlanStep
from maker.executor.rules.vote_rules import (
    SAMPLES_PER_K,
    VoteRecord,
    answer_form,
    flag,
    ranked,
    side_effect_free,
    vote_record,
)
from maker.planner.parser import MAX_VOTES
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StoredPlan
from maker.voting import Vote, canonical, first_to_ahead_by_k, k_min

__all__ = ["answer_key", "law_votes", "record_of", "undecided_reason", "vote_on"]


def law_votes(plan: StoredPlan, p: float, target: float) -> tuple[int, str]:
    """The lead the law asks of each voting step, and a sentence saying so: ``k_min``
    over the plan's steps that can be sampled without side effects (at least one),
    per-sample success ``p``, whole-task success ``target``. ValueError for p <= 0.5
    (from ``maker.voting``) and for a lead over ``MAX_VOTES``."""
    voting = sum(1 for r in plan.steps if side_effect_free(r.spec)) or 1
    k = k_min(voting, p, target)
    if k > MAX_VOTES:
        raise ValueError(f"the law asks for a lead of {k} votes per step ({voting} voting "
                         f"steps, per-sample success {p}, target {target}): over maker's "
                         f"limit of {MAX_VOTES}. Make the steps smaller or clearer so one "
                         "sample succeeds more often (`maker calibrate STEP` measures it), "
                         "or aim lower")
    return k, (f"voting: a lead of {k} per voting step (the law's k_min for {voting} voting "
               f"step{'s' if voting != 1 else ''}, per-sample success {p}, target {target})")


def answer_key(spec: PlanStep, result: AgentResult) -> Hashable:
    """What two samples must share to be the same answer (``vote_rules.answer_form``)."""
    return canonical(answer_form(spec, result.output))


async def vote_on(store: PlanStore, spec: PlanStep, flagger: RedFlagger, k: int,
                  sample: Callable[[], Awaitable[AgentResult]]) -> Vote[AgentResult]:
    """The vote on ``spec``'s answer: up to ``k`` samples at once, at most
    ``SAMPLES_PER_K * k`` in all."""
    return await first_to_ahead_by_k(
        sample, k, key=lambda r: answer_key(spec, r),
        flagged=lambda r: flag(store, flagger, r), parallel=k,
        max_samples=SAMPLES_PER_K * k)


def record_of(spec: PlanStep, vote: Vote[AgentResult]) -> VoteRecord:
    """The vote as it goes into the handoff and the ledger: each sample named by its
    session id, the samples' cost summed."""
    return vote_record(vote, lambda r: answer_form(spec, r.output),
                       cast_by=lambda r: r.session_id, cost=lambda r: r.cost_usd)


def undecided_reason(spec: PlanStep, vote: Vote[AgentResult]) -> str:
    """Why an undecided vote failed its step, with the tally."""
    shown = ranked(vote.votes, vote.ballots, lambda r: answer_form(spec, r.output))
    tally = ", ".join(f"{n} for {a}" for a, n in shown)
    return (f"the vote was undecided: no answer led by {vote.k} after {vote.samples} "
            f"samples ({vote.flagged} flagged); votes: {tally or 'none'}")
