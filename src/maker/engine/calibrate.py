"""``maker calibrate STEP``: how often do isolated samples of one step agree, and what
lead would the law ask for?

Draws ``samples`` isolated executor sessions of the step's brief, a few at once,
exactly as a vote would (``maker.engine.vote_step``: the same key, the same red flags),
without starting the step or changing any file but the ledger. The agreement rate is
the share of the voting samples that gave the most common answer; taken as one
sample's success ``p`` (it assumes the most common answer is the right one: read the
tally), the law gives the smallest lead ``k`` that reaches a whole-task success
``target`` over ``steps`` voted steps, for ``p`` and for the low end of its 95%
interval.

A code step is not sampled on its own (each sample would repeat its writes): its ``p``
comes from the votes on its code already in the ledger (``maker.engine.code_vote``), the
share of the counted samples that voted with the winning behaviour.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from maker.core.models import AgentResult, PlanStep
from maker.engine.ledger import Ledger
from maker.engine.parts import EngineParts
from maker.engine.vote_step import answer_key
from maker.errors import InputError, Problem
from maker.executor.launch.brief import build_brief
from maker.executor.rules.vote_rules import answer_form, label, side_effect_free
from maker.handoff.against_plan import check_output
from maker.handoff.fields import parse_handoff
from maker.store.plan_store import PlanStore
from maker.store.records import StoredPlan
from maker.voting import k_min, wilson_interval

__all__ = ["PARALLEL", "Calibration", "calibrate", "from_code_votes"]

PARALLEL = 3  # sessions drawn at once


@dataclass
class Calibration:
    step: int
    title: str
    samples: int
    flagged: list[str]
    tally: list[tuple[str, int]]  # each answer as readable JSON, most common first
    steps: int  # the plan length the law is asked about
    target: float
    cost_usd: float
    k: int | None = None  # None: p <= 0.5, voting cannot converge
    k_low: int | None = None  # for the low end of p's 95% interval
    interval: tuple[float, float] = (0.0, 0.0)
    notes: list[str] = field(default_factory=list)

    @property
    def voted(self) -> int:
        return self.samples - len(self.flagged)

    @property
    def agreement(self) -> float:
        return self.tally[0][1] / self.voted if self.voted else 0.0


def _flag(plan: StoredPlan, spec: PlanStep, result: AgentResult, parts: EngineParts) -> str:
    """Why a sample would not vote ("" when it would): a red flag, or a handoff the gate
    would refuse for its fields or its output."""
    bad, why = parts.flagger.check_with_reason(result)
    if bad:
        return why
    data = result.output if isinstance(result.output, dict) else {}
    _, problems = parse_handoff(data)
    if data.get("step") != spec.step:
        problems.append(Problem("step", f"says step {data.get('step')!r}, not {spec.step}"))
    output = data.get("output")
    if isinstance(output, dict):
        check_output(plan, plan.get(spec.step), data.get("status"), output, problems)
    return "; ".join(str(p) for p in problems[:3])


def from_code_votes(store: PlanStore, plan: StoredPlan, n: int, target: float,
                    steps: int | None) -> Calibration | None:
    """A code step's calibration from the votes on its code in the ledger (None: none):
    one sample's success taken as the share of the counted samples that voted with the
    winning behaviour of its vote, summed over the votes."""
    votes = [c.detail for c in Ledger(store).calls() if c.kind == "vote" and c.step == n
             and isinstance(c.detail, dict) and isinstance(c.detail.get("matrix"), dict)]
    if not votes:
        return None
    spec = plan.get(n).spec
    samples = sum(int(v.get("samples") or 0) for v in votes)
    flagged = sum(int(v.get("flagged") or 0) for v in votes)
    won = sum(int(t[0].get("votes") or 0) for v in votes
              for t in [v.get("tally") or [{}]] if isinstance(t[0], dict))
    voting = sum(1 for r in plan.steps if (r.spec.votes or 1) > 1) or 1
    out = Calibration(n, spec.title, samples, ["flagged in a vote on its code"] * flagged,
                      [("with the leading behaviour of its vote", won),
                       ("with another", samples - flagged - won)], steps or voting, target,
                      sum(float(v.get("cost_usd") or 0.0) for v in votes))
    out.notes.append(f"from {len(votes)} vote(s) on the step's code in the ledger (its "
                     "samples were not drawn again)")
    if out.voted:
        out.interval = wilson_interval(won, out.voted)
        p, low = out.agreement, out.interval[0]
        out.k = k_min(out.steps, p, target) if p > 0.5 else None
        out.k_low = k_min(out.steps, low, target) if low > 0.5 else None
    return out


async def calibrate(store: PlanStore, parts: EngineParts, n: int, samples: int, *,
                    target: float = 0.95, steps: int | None = None) -> Calibration:
    """Sample step ``n`` ``samples`` times (see the module docstring). Raises InputError
    for a step whose tools have side effects; every sample goes to the ledger (kind
    ``calibrate``)."""
    plan = store.load()
    record = plan.get(n)
    spec = record.spec
    if not side_effect_free(spec):
        from_votes = from_code_votes(store, plan, n, target, steps)
        if from_votes is not None:
            return from_votes
        tools = ", ".join(spec.primary_tools + spec.fallback_tools)
        raise InputError(f"step {n} ({spec.title}) uses {tools}: sampling it {samples} "
                         "times would repeat its side effects. A code step's p comes from "
                         "its votes on code (`votes: K`, run by maker run or /maker:run), "
                         "and the ledger holds none for it yet; or calibrate a step whose "
                         "tools only read")
    brief = build_brief(store, plan, n)
    gate = asyncio.Semaphore(PARALLEL)
    model = parts.model_for(record)

    async def one(attempt: int) -> AgentResult:
        async with gate:
            budget = parts.call_budget()
            limits = parts.limits(store, record)
            session = parts.runner_factory(max_budget_usd=budget, model=model, **limits)
            result = await session.run(spec, brief, parts.config)
        parts.record_answer("calibrate", n, attempt, result, model)
        return result

    results = await asyncio.gather(*(one(i) for i in range(1, samples + 1)))
    flags = [_flag(plan, spec, r, parts) for r in results]
    voted = [r for r, why in zip(results, flags, strict=True) if not why]
    counts = Counter(answer_key(spec, r) for r in voted)
    shown = {answer_key(spec, r): label(answer_form(spec, r.output)) for r in reversed(voted)}
    voting = sum(1 for r in plan.steps if side_effect_free(r.spec)) or 1
    out = Calibration(n, spec.title, samples, [w for w in flags if w],
                      [(shown[key], n) for key, n in counts.most_common()], steps or voting,
                      target,
                      sum(r.cost_usd for r in results))
    if not out.voted:
        out.notes.append("every sample was flagged: fix the step (or its brief) first")
        return out
    out.interval = wilson_interval(out.tally[0][1], out.voted)
    p, low = out.agreement, out.interval[0]
    out.k = k_min(out.steps, p, target) if p > 0.5 else None
    out.k_low = k_min(out.steps, low, target) if low > 0.5 else None
    if out.k is None:
        out.notes.append("agreement is not above one half: voting cannot converge on this "
                         "step; make it smaller or clearer")
    return out
