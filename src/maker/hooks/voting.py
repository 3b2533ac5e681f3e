"""The hooks' side of a voting step (``maker.executor.votes.ballots``).

SubagentStop, step executor (``ballot_stop``): when the step in progress votes, the
executor's final message becomes a ballot, never accepted on its own; the executor is
let go (a flagged answer is discarded, not repaired). What the main agent then reads
(the ballot, the votes so far, how many executors to launch next) is maker's verdict
(``maker.executor.verdicts.verdict``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.hooks import records
from maker.hooks.protocol import HookInput, Output, message

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["ballot_stop"]


def ballot_stop(hook: HookInput, store: PlanStore, step: int, text: str) -> Output | None:
    """Record the executor's answer as a ballot when step ``step`` votes; None when it
    does not (the answer then goes through the gate as before)."""
    from maker.executor.verdicts.verdict import ballot_said, votes_said
    from maker.executor.votes.ballots import cast

    result = cast(store, step, hook.agent_id, text)
    if result is None:
        return None
    facts = result.facts()
    records.record(hook, "ballot", **facts)
    said = {"accepted": f"the vote decided step {step} ({result.status})",
            "failed": f"step {step} FAILED: " + "; ".join(result.reasons)}.get(
        result.outcome, f"{ballot_said(facts)}; votes so far: {votes_said(result.tally)}")
    return message(f"maker: ballot {result.ballots} of at most {result.bound} on step "
                   f"{step}: {said}.")
