"""Which steps vote, and what a vote on a step's answer compares and discards: one
home for the plugin's ballots (``maker.executor.votes.ballots``, ``/maker:step``) and the
engine's samples (``maker.engine.vote_step``, ``maker run``).

- How many votes (:func:`step_votes`): the lead the winning answer needs is the
  step's own ``votes``; else, for a step that can be sampled without side effects
  (its tools all only read), the run's ``--vote K`` (``maker run`` only: the plugin has
  no such setting), or :data:`DEFAULT_CONDITIONAL_VOTES` for a conditional step, whose
  answer steers the rest of the plan; else 1 (no vote). ``votes: 1`` turns voting off
  for a step. A step whose tools may write is never sampled twice in place: each sample
  would do its writes. In maker's engine (``maker run``, ``/maker:run``, and
  ``/maker:step``, which hands it to the engine: ``maker.executor.loop.one_step``) its
  samples each work in a worktree of their own and vote on what their code does
  (:func:`code_votes`, ``maker.engine.code_vote``).

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
- What is kept of a vote (:class:`VoteRecord`, built by :func:`vote_record`): one shape
  for both, in the accepted handoff and, for ``maker run``, in the ledger.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from maker.core.models import AgentResult, PlanStep
from maker.errors import MakerError
from maker.tools.registry import only_read
from maker.voting import Ballot, Tally, Vote, canonical

if TYPE_CHECKING:
    from maker.red_flag.red_flagger import RedFlagger
    from maker.store.plan_store import PlanStore

__all__ = ["DEFAULT_CONDITIONAL_VOTES", "SAMPLES_PER_K", "SHOWN", "VoteRecord", "answer_form",
           "code_votes", "engine_here", "engine_votes", "flag", "label", "launch_limit", "ranked",
           "side_effect_free", "step_votes", "tally", "vote_record"]

T = TypeVar("T")

SAMPLES_PER_K = 4

SHOWN = 5
"""How many distinct answers (and flag reasons) a vote's record or message names."""

DEFAULT_CONDITIONAL_VOTES = 2
"""The lead a conditional step without ``votes`` needs: one wrong branch is outvoted at
the cost of two executors when they agree."""


def step_votes(spec: PlanStep, run_votes: int = 1) -> int:
    """The lead step ``spec``'s winning answer needs (1: no vote). ``run_votes``: the
    run's ``--vote K`` (``maker run``; 1 elsewhere)."""
    if not side_effect_free(spec):
        return 1  # (a code step's samples: code_votes)
    if spec.votes:
        return spec.votes
    if run_votes > 1:
        return run_votes
    return DEFAULT_CONDITIONAL_VOTES if spec.is_conditional else 1


def code_votes(spec: PlanStep, run_votes: int = 1) -> int:
    """The lead a step whose tools write needs among samples of its code, each in a
    worktree of its own (maker's engine: ``maker.engine.code_vote``): its own
    ``votes``, else the run's ``--vote K``; 1 (none) for a step whose tools only read
    (:func:`step_votes`) and for a conditional step."""
    if side_effect_free(spec) or spec.is_conditional:
        return 1
    return spec.votes or run_votes


def engine_here() -> bool:
    """Whether maker's engine can run here: claude-agent-sdk is installed beside maker."""
    return importlib.util.find_spec("claude_agent_sdk") is not None


def engine_votes(store: PlanStore, n: int) -> bool:
    """Whether step ``n``'s code is voted on in maker's engine when ``/maker:step`` runs
    it: its tools write, it asks for ``votes: K`` (the plugin has no ``--vote``), and
    claude-agent-sdk is here."""
    try:
        return code_votes(store.load_step(n).spec) > 1 and engine_here()
    except MakerError:
        return False  # (the start says what is wrong with the step)


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
    from maker.handoff.gate import inspect_handoff

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


def ranked(counts: Mapping[Hashable, int], ballots: Iterable[Ballot[T]],
           answer: Callable[[T], Any]) -> list[tuple[str, int]]:
    """The votes so far, most first (:data:`SHOWN` at most), each answer as a message
    names it: ``answer`` (its :func:`answer_form`) of the first ballot counted with its
    key, not the canonical key it was counted by."""
    first: dict[Hashable, Any] = {}
    for ballot in ballots:
        if ballot.key is not None and ballot.key not in first:
            first[ballot.key] = answer(ballot.answer)
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:SHOWN]
    return [(label(first.get(key, key)), n) for key, n in top]


@dataclass(frozen=True)
class VoteRecord:
    """A vote on a step's answer as maker keeps it, one shape for the plugin's ballots
    and ``maker run``'s samples: in the accepted handoff (its ``vote``) and, for
    ``maker run``, in the ledger's ``vote`` call (its ``detail``)."""

    k: int  # the lead the winning answer needed
    decided: bool
    samples: int  # the answers counted, flagged ones included
    flagged: int  # of those, the ones the red flags discarded
    margin: int  # the leader's votes less the runner-up's
    tally: tuple[tuple[str, int], ...] = ()  # (answer, votes), most first: ``ranked``
    flag_reasons: tuple[str, ...] = ()  # the first SHOWN, 200 characters each at most
    # Who gave each counted answer, in order: the executor subagent's agent_id (the
    # plugin), the sample's session_id (``maker run``, as its ledger calls name it).
    ballots: tuple[str | None, ...] = ()
    cost_usd: float | None = None  # the samples' cost; None where maker cannot know it
    # A vote on what code does (``maker.engine.code_vote``): the shared tests and checks
    # (``columns``), each sample's outcomes over them (``rows``), flags and diff sizes.
    matrix: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON and YAML hold it."""
        return {"k": self.k, "decided": self.decided, "samples": self.samples,
                "flagged": self.flagged, "margin": self.margin,
                "tally": [{"answer": a, "votes": n} for a, n in self.tally],
                "flag_reasons": list(self.flag_reasons), "ballots": list(self.ballots),
                "cost_usd": self.cost_usd,
                **({"matrix": self.matrix} if self.matrix is not None else {})}

    @classmethod
    def from_dict(cls, data: object) -> VoteRecord:
        """The record ``to_dict`` wrote, or an older maker did: the plugin's had no
        ``cost_usd``, the engine's no ``ballots``. A field that is missing or not of its
        type (a hand edit) reads as unknown: 0, False, empty or None."""
        data = data if isinstance(data, Mapping) else {}

        def number(name: str) -> int:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        def items(name: str) -> Sequence[Any]:
            value = data.get(name)
            return value if isinstance(value, Sequence) and not isinstance(value, str) \
                else ()

        cost = data.get("cost_usd")
        return cls(
            k=number("k"), decided=data.get("decided") is True, samples=number("samples"),
            flagged=number("flagged"), margin=number("margin"),
            tally=tuple((str(t.get("answer")), t["votes"]) for t in items("tally")
                        if isinstance(t, Mapping) and isinstance(t.get("votes"), int)),
            flag_reasons=tuple(str(r) for r in items("flag_reasons")),
            ballots=tuple(b if b is None else str(b) for b in items("ballots")),
            cost_usd=float(cost) if isinstance(cost, (int, float))
            and not isinstance(cost, bool) else None,
            matrix=dict(data["matrix"]) if isinstance(data.get("matrix"), Mapping) else None)


def vote_record(vote: Vote[T], answer: Callable[[T], Any],
                cast_by: Callable[[T], str | None],
                cost: Callable[[T], float] | None = None) -> VoteRecord:
    """The record of ``vote``: each answer named by ``answer`` (its :func:`answer_form`),
    each ballot by ``cast_by`` (who gave it); ``cost``: what one answer cost, where
    maker knows it (``maker run``; None: the record's ``cost_usd`` is None)."""
    return VoteRecord(
        k=vote.k, decided=vote.decided, samples=vote.samples, flagged=vote.flagged,
        margin=vote.margin, tally=tuple(ranked(vote.votes, vote.ballots, answer)),
        flag_reasons=tuple(r[:200] for r in vote.flag_reasons[:SHOWN]),
        ballots=tuple(cast_by(b.answer) for b in vote.ballots),
        cost_usd=None if cost is None else round(sum(cost(b.answer) for b in vote.ballots), 6))
