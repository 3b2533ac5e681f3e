"""The hooks' side of a voting step (``maker.executor.ballots``).

- SubagentStop, step executor (``ballot_stop``): when the step in progress votes, the
  executor's final message becomes a ballot, never accepted on its own; the executor
  is let go (a flagged answer is discarded, not repaired).
- PostToolUse on the Agent tool (``ballot_verdict``): what the main agent reads: the
  ballot, the votes so far, and how many executors to launch next (the votes the
  leader still lacks, less those still running); or that the vote decided the step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maker.hooks import records
from maker.hooks.protocol import HookInput, Output, message

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["ballot_stop", "ballot_verdict"]


def _votes(tally: Any) -> str:
    listed = [f"{t[1]} for {t[0]}" for t in tally if isinstance(t, list) and len(t) == 2] \
        if isinstance(tally, list) else []
    return ", ".join(listed) or "none yet"


def _what(facts: dict[str, Any]) -> str:
    kind = facts.get("ballot")
    if kind == "duplicate":
        return "its answer was NOT counted (one ballot per executor, within the vote's bound)"
    if facts.get("flag"):
        return f"its answer was flagged and does not vote ({str(facts['flag'])[:300]})"
    return f"its answer was recorded as a vote for {facts.get('answer')}"


def ballot_stop(hook: HookInput, store: PlanStore, step: int, text: str) -> Output | None:
    """Record the executor's answer as a ballot when step ``step`` votes; None when it
    does not (the answer then goes through the gate as before)."""
    from maker.executor.ballots import cast

    result = cast(store, step, hook.agent_id, text)
    if result is None:
        return None
    facts = result.facts()
    records.record(hook, "ballot", **facts)
    said = {"accepted": f"the vote decided step {step} ({result.status})",
            "failed": f"step {step} FAILED: " + "; ".join(result.reasons)}.get(
        result.outcome, f"{_what(facts)}; votes so far: {_votes(facts['tally'])}")
    return message(f"maker: ballot {result.ballots} of at most {result.bound} on step "
                   f"{step}: {said}.")


def ballot_verdict(store: PlanStore, step: int, facts: dict[str, Any]) -> tuple[str, bool]:
    """maker's verdict on an executor whose answer was a ballot: ``(text, whole)``;
    ``whole`` False: a note on the vote, which the usual verdict follows. The votes and
    what to do next are read now, under the plan lock, not when the ballot was cast:
    the client may run the executors' hooks in any order."""
    from maker.executor.ballots import current_votes, launch_instruction, returned
    from maker.executor.outcome import outcome

    k, bound = facts.get("k"), facts.get("bound")
    with store.lock():
        running = returned(store, step, str(facts.get("agent") or ""))
        now = outcome(store, step)
        if now["status"] == "in-progress":
            votes, ballots, need = current_votes(store, step)
            return (f"the executor returned; {_what(facts)}. Votes so far: "
                    f"{_votes([list(v) for v in votes])}: no answer leads by {k} yet (the "
                    f"leader needs {need} more), after {ballots} of at most {bound} "
                    f"executors. The step is still in progress. Next: "
                    f"{launch_instruction(store, step, running)}.", True)
    if now["status"] == "failed":
        reasons = now["reasons"] or facts.get("reasons") or []
        return ("FAILED: its vote ended without an accepted answer. Reasons:\n"
                + "\n".join(f"- {r}" for r in reasons)
                + f"\nTell the user that the step failed and why; `maker step reset {step}` "
                "puts it back to try again. End your reply with the line STEP_FAILED.", True)
    vote = (store.read_handoff(step) or {}).get("vote")
    vote = vote if isinstance(vote, dict) else {}
    tally = [[t.get("answer"), t.get("votes")] for t in vote.get("tally") or []
             if isinstance(t, dict)]
    return (f"decided by a vote (the answer {tally[0][0] if tally else '(not recorded)'} led "
            f"by {k}; votes: {_votes(tally)}; {vote.get('samples')} executors, "
            f"{vote.get('flagged')} flagged)", False)
