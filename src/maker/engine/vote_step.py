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

A step whose tools write is voted on by what its code does (``maker.engine.code_vote``),
which needs the project's tests run by pytest: where they are not, ``--vote K`` leaves
such a step to run once (:func:`code_lead`), and the run says so (:func:`unvoted_code`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Hashable, Mapping
from pathlib import Path

from maker.core.models import AgentResult, Plan, PlanStep
from maker.errors import Problem
from maker.executor.rules.vote_rules import (
    SAMPLES_PER_K,
    VoteRecord,
    answer_form,
    code_votes,
    flag,
    ranked,
    side_effect_free,
    vote_record,
)
from maker.planner.parser import MAX_VOTES
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StoredPlan
from maker.verify.pytest_runs import code_vote_problems, pytest_runner
from maker.voting import Vote, canonical, first_to_ahead_by_k, k_min

__all__ = ["answer_key", "code_lead", "law_votes", "plan_checks", "record_of", "run_votes",
           "undecided_reason", "unvoted_code", "vote_on"]


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


def run_votes(store: PlanStore, votes: int, law: tuple[float, float] | None
              ) -> tuple[int, str]:
    """The run's ``--vote`` lead (with ``law``, ``(p, target)``: :func:`law_votes`'), and
    what to tell the person of it ("" for nothing): the law's K, and what
    :func:`unvoted_code` says. ValueError as :func:`law_votes` raises it."""
    plan, said = store.load(), ""
    if law is not None:
        votes, said = law_votes(plan, *law)
    unvoted = unvoted_code(plan, votes, store.project, os.environ)
    return votes, ". ".join(s for s in (said, unvoted) if s)


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


def plan_checks(project: Path) -> Callable[[Plan], list[Problem]]:
    """What ``maker run``'s planning checks in a linted plan for ``project``: what the
    plugin's planner hook checks, by the same function (``code_vote_problems``: a vote on
    a code step where maker cannot run the project's tests with pytest)."""
    def problems(plan: Plan) -> list[Problem]:
        return code_vote_problems(plan.steps, project, dict(os.environ))
    return problems


def code_lead(spec: PlanStep, run_votes: int, project: Path, env: Mapping[str, str]) -> int:
    """The lead step ``spec``'s code needs in this run (``vote_rules.code_votes``); 1 (it
    runs once) where only the run's ``--vote K`` asks and maker cannot run the project's
    tests with pytest. A step's own ``votes`` stands: the planners refuse it there, and a
    plan edited by hand fails the step with the fix (``maker.engine.code_vote``)."""
    k = code_votes(spec, run_votes)
    if k > 1 and not spec.votes and pytest_runner(project, dict(env)) is None:
        return 1
    return k


def unvoted_code(plan: StoredPlan, run_votes: int, project: Path,
                 env: Mapping[str, str]) -> str:
    """What ``--vote K`` cannot do in this project, in a sentence ("" when nothing): the
    code steps left to do that it would vote on, which :func:`code_lead` runs once."""
    steps = [r.number for r in plan.steps if r.status != "complete" and not r.spec.votes
             and code_votes(r.spec, run_votes) > 1]
    if not steps or pytest_runner(project, dict(env)) is not None:
        return ""
    named = f"step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps[:10]))}" + (
        f" and {len(steps) - 10} more" if len(steps) > 10 else "")
    return (f"--vote {run_votes} cannot vote on code steps in this project: maker compares a "
            "code step's samples by running their tests against one another's code, with "
            "pytest only, and this project's test command (maker verify's) is not pytest's. "
            f"So {named} run{'s' if len(steps) == 1 else ''} once, as without --vote (a step "
            "whose tools only read, and a conditional step, still votes)")
