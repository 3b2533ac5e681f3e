"""What a vote on a step's answer compares and discards: one home for the plugin's
ballots (``maker.executor.ballots``, ``/maker:step``) and the engine's samples
(``maker.engine.vote_step``, ``maker run --vote``).

- Sampling a step more than once is safe only without side effects: a conditional
  step, or a step whose tools all only read (:func:`side_effect_free`).
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
from maker.tools.registry import READ_ONLY_TOOLS

if TYPE_CHECKING:
    from maker.red_flag.red_flagger import RedFlagger
    from maker.store.plan_store import PlanStore

__all__ = ["SAMPLES_PER_K", "answer_form", "flag", "label", "side_effect_free"]

SAMPLES_PER_K = 4


def side_effect_free(spec: PlanStep) -> bool:
    """Whether the step's answer can be sampled more than once without side effects: a
    conditional step, or a step whose tools (primary and fallback) all only read."""
    tools = [*spec.primary_tools, *spec.fallback_tools]
    return spec.is_conditional or all(t in READ_ONLY_TOOLS for t in tools)


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
