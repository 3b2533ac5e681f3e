"""Which steps vote, and what a vote on a step's answer compares and discards: one
home for the plugin's ballots (``maker.executor.votes.ballots``, ``/maker:step``) and the
engine's samples (``maker.engine.vote_step``, ``maker run``).

- How many votes (:func:`step_votes`): the lead the winning answer needs is the
  step's own ``votes``; else, for a step that can be sampled without side effects
  (its tools all only read), the run's ``--vote K`` (``maker run`` only: the plugin has
  no such setting), or :data:`DEFAULT_CONDITIONAL_VOTES` for a conditional step, whose
  answer steers the rest of the plan; else 1 (no vote). ``votes: 1`` turns voting off
  for a step. A step whose tools may write is never sampled twice (the linter refuses
  ``votes`` on one): each sample would do its writes.

- Sampling a step more than once is safe only without side effects: a step whose
  tools all only read (:func:`side_effect_free`), conditional or not.
- What two answers must share (:func:`answer_form`): a conditional step's status and
  chosen ``next_step`` (its reason is prose, which two right answers never share); any
  other step's status and whole ``output``. Equality is ``maker.voting.canonical``'s.
- A sample does not vote (:func:`flag`) when the red flagger rejects it or the gate
  would refuse its handoff: every problem but the verification evidence, which is
  checked for the winner alone.
- At most :data:`SAMPLES_PER_K` × K samples (flagged ones count) before the vote ends
  undecided.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from maker.core.models import AgentResult, PlanStep
from maker.handoff.gate import inspect_handoff
from maker.tools.registry import only_read
from maker.voting import Tally, canonical

if TYPE_CHECKING:
    from maker.red_flag.red_flagger import RedFlagger
    from maker.store.plan_store import PlanStore

__all__ = ["DEFAULT_CONDITIONAL_VOTES", "SAMPLES_PER_K", "answer_form", "flag", "label",
           "launch_limit", "side_effect_free", "step_votes", "tally"]

SAMPLES_PER_K = 4

DEFAULT_CONDITIONAL_VOTES = 2
"""The lead a conditional step without ``votes`` needs: one wrong branch is outvoted at
the cost of two executors when they agree."""


def step_votes(spec: PlanStep, run_votes: int = 1) -> int:
    """The lead step ``spec``'s winning answer needs (1: no vote). ``run_votes``: the
    run's ``--vote K`` (``maker run``; 1 elsewhere)."""
    if spec.votes:
        return spec.votes
    if not side_effect_free(spec):
        return 1
    if run_votes > 1:
        return run_votes
    return DEFAULT_CONDITIONAL_VOTES if spec.is_conditional else 1


def tally(k: int, ballots: list[dict[str, Any]]) -> Tally[dict[str, Any]]:
    """The vote so far, replayed from the ballots in the order they were cast (each a
    mapping with its ``answer`` and ``flag``); ballots after the decision are ignored."""
    counted: Tally[dict[str, Any]] = Tally(k, key=lambda b: canonical(b.get("answer")),
                                           flagged=lambda b: b.get("flag"))
    for ballot in ballots:
        if counted.decided:
            break
        counted.add(ballot)
    return counted


def launch_limit(k: int, ballots: list[dict[str, Any]]) -> int:
    """How many executors may run a step at once: 1 when it does not vote (``k`` 1);
    else the votes its leader still lacks (so that no answer arrives after the vote is
    decided), within the bound of :data:`SAMPLES_PER_K` × K ballots."""
    if k == 1:
        return 1
    counted = tally(k, ballots)
    return max(1, min(counted.need(), SAMPLES_PER_K * k - len(counted.ballots)))


def side_effect_free(spec: PlanStep) -> bool:
    """Whether the step's answer can be sampled more than once without side effects:
    its tools (primary and fallback) all only read. A conditional step's tools may
    write too: then each sample would do its writes."""
    return only_read([*spec.primary_tools, *spec.fallback_tools])


def answer_form(spec: PlanStep, data: Any) -> list[Any]:
    """The JSON form of what two answers (handoff mappings) must share."""
    data = data if isinstance(data, dict) else {}
    output = data.get("output")
    if spec.is_conditional and isinstance(output, dict):
        return [data.get("status"), output.get("next_step")]
    return [data.get("status"), output]


def flag(store: PlanStore, flagger: RedFlagger, result: AgentResult) -> str | None:
    """Why a sample does not vote, or None."""

    bad, why = flagger.check_with_reason(result)
    if bad:
        return why
    problems = [p for p in inspect_handoff(store, result.raw_response).problems
                if p.field != "evidence"]
    return "; ".join(str(p) for p in problems[:3]) if problems else None


def label(key: Any) -> str:
    """An answer as a message names it (at most 120 characters)."""
    text = json.dumps(key, ensure_ascii=False, default=str)
    return text if len(text) <= 120 else text[:117] + "..."
