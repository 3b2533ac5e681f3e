"""A step executor's answer arrives: all that maker does with it, in order, in one call.

    the step it works for ─▶ its run (not an earlier one) ─▶ a pending deviation
      ─▶ a ballot (a step that votes) ─▶ its change lands (a step in a worktree)
      ─▶ the gate ─▶ a refusal counted against ``gate_attempts``

``arrive`` does it under one hold of the plan's lock, which is one transaction: a crash
at any point leaves the plan as it was before the answer, or as the answer made it.
Only a worktree step's landing runs outside it (its checks may take a minute, and other
steps' hooks must not wait on them); the gate then takes the lock again and checks the
run anew. The hook that calls it only reads the event and writes the answer
(``maker.hooks.deliver``): what the agent is told, and the record of the outcome that
maker's verdict is worded from, are both in the ``Arrival``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from maker.errors import HandoffRejectedError, MakerError, PlanFileError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.parallel.land_gate import land_before_accept
from maker.executor.protocol.orient import autoapproved, decide_deviation, pending_deviation
from maker.executor.rules.step_rules import settings
from maker.executor.state.attempts import AGAIN, clear, keep_answer, refuse_handoff
from maker.executor.verdicts.verdict import ballot_said, votes_said
from maker.executor.votes.ballots import cast
from maker.executor.votes.runs import end_agent
from maker.store.active import member, run_of, wave_of
from maker.store.workspace import worktree_of

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["Arrival", "Arriving", "arrive"]


@dataclass(frozen=True)
class Arrival:
    """What became of an answer. ``outcome`` names it for maker's verdict (its
    ``facts`` beside it); ``said`` is what the agent is told; ``again``: it must answer
    again (its answer was refused and it may correct it); ``final``: the answer was its
    one deliverable (a later stop of the same agent changes nothing)."""

    outcome: str
    said: str
    again: bool = False
    final: bool = True
    facts: dict[str, Any] = field(default_factory=dict)


class Arriving(Protocol):
    """The agent whose answer arrives, as the front end knows it."""

    agent_id: str
    land_wait_s: float  # how long its change may take to land, within the hook's time

    def bound_run(self) -> list[Any] | None:
        """The run it was bound to already (its launch, its first call), or None."""

    def bind(self, run: list[Any]) -> list[Any] | None:
        """Bind it to ``run`` unless it is bound already; the run it is bound to."""


def arrive(store: PlanStore, text: str, agent: Arriving) -> Arrival:
    """Everything maker does with step executor ``agent``'s answer ``text``."""
    with store.lock():
        found = _its_run(store, text, agent)
        if isinstance(found, Arrival):
            return _ended(store, agent, found)
        step, key = found
        before = _before_the_gate(store, step, text, agent)
        if before is not None:
            return _ended(store, agent, before)
        apart = worktree_of(store, store.load_step(step)) is not None
        if not apart:
            return _ended(store, agent, _gate(store, step, key, text))
    try:
        said = land_before_accept(store, step, text, agent.land_wait_s)
    except MakerError as exc:
        said = (f"maker: step {step}'s change could not land: {exc}. Run `maker land "
                f"{step}` to see why, then deliver your handoff again.")
    if said is not None:
        return Arrival("not-landed", said, again=True, final=False, facts={"step": step})
    with store.lock():
        again = _its_run(store, text, agent)
        if isinstance(again, Arrival) or again[0] != step:
            arrival = again if isinstance(again, Arrival) else Arrival(
                "stale", f"maker: step {step}'s run ended while its change landed; its "
                "answer was not recorded.", facts={"step": step})
            return _ended(store, agent, arrival)
        return _ended(store, agent, _gate(store, step, key, text))


def _its_run(store: PlanStore, text: str, agent: Arriving) -> tuple[int, str] | Arrival:
    """The step this answer is for and its run's key; or the Arrival when it is for no
    step in progress, or for a run that is over."""
    active = store.read_active() or (store.rebuild_active() if store.exists() else None)
    if not active:
        return Arrival("no-step", "maker: the step executor stopped, but no step is in "
                       "progress, so its answer was not recorded. Start a step with "
                       "`maker step start`.")
    wave = wave_of(active)
    if wave:
        # An executor of a wave is bound to its step at its launch or by its first
        # `maker context N`; one that never was cannot say which step it worked on (its
        # answer's `step:` line is its own word, and may name a sibling's).
        bound = agent.bound_run()
        mine = member(active, bound[0]) if bound and bound[0] in wave else None
        if mine is None:
            shown = ", ".join(map(str, wave))
            return Arrival("no-step", f"maker: steps {shown} run at once, each in its own "
                           "worktree, and maker does not know which one you worked on (you "
                           "never read your brief with `maker context N`), so your answer "
                           "was not recorded.")
        active = mine
    run = run_of(active)
    bound = agent.bind(run)
    if bound is not None and bound != run:
        return Arrival("stale", f"maker: this step executor was launched for an earlier "
                       f"run of step {bound[0]}, which is over; its answer was not "
                       "recorded.", facts={"step": bound[0]})
    step = int(active["step"])
    return step, f"step{step}-{active.get('started_at', '')}"


def _before_the_gate(store: PlanStore, step: int, text: str,
                     agent: Arriving) -> Arrival | None:
    """A pending deviation (a person decides, or ``STEP_AUTOAPPROVE=1`` did), or a
    ballot of a step that votes; None when the answer goes to the gate."""
    try:
        dev = pending_deviation(store.load_step(step))
    except MakerError:
        dev = None
    if dev is not None:
        if autoapproved():
            decide_deviation(store, step, True, "STEP_AUTOAPPROVE=1 (a person's setting)")
            return Arrival("deviation-approved", f"maker: STEP_AUTOAPPROVE=1 (set by a "
                           f"person for this session) approved the revised step {step}. Go "
                           f"on with it now: do the step as revised "
                           f"({str(dev.get('revised_task'))[:500]}), verify, and answer "
                           "with the handoff.", again=True, final=False, facts={"step": step})
        return Arrival("deviation", f"maker: step {step} deviates from the plan (a major "
                       "deviation); it awaits a person's decision before any edit.",
                       facts={"step": step})
    result = cast(store, step, agent.agent_id, text)  # a voting step: a ballot
    if result is None:
        return None
    facts = result.facts()
    said = {"accepted": f"the vote decided step {step} ({result.status})",
            "failed": f"step {step} FAILED: " + "; ".join(result.reasons)}.get(
        result.outcome, f"{ballot_said(facts)}; votes so far: {votes_said(result.tally)}")
    return Arrival("ballot", f"maker: ballot {result.ballots} of at most {result.bound} on "
                   f"step {step}: {said}.", facts=facts)


def _gate(store: PlanStore, step: int, key: str, text: str) -> Arrival:
    """The handoff gate, and a refusal counted against ``gate_attempts``."""
    try:  # a person's bounds (gate_attempts, max_fix_attempts): plans/settings.yaml
        bound = settings(store.root).gate_attempts
        result = accept_handoff(store, text, step=step)
    except PlanFileError as exc:  # (a broken settings file, say): said, never a wedge
        kept = keep_answer(store, step, text)
        return Arrival("unchecked", f"maker: the handoff for step {step} was not checked: "
                       f"{exc}\nIts answer is kept in {kept}. Fix that file, then run "
                       f"/maker:step {step} again.", facts={"step": step,
                                                            "error": str(exc)[:500]})
    except HandoffRejectedError as exc:
        problems = [str(p) for p in exc.problems]
        count, reasons = refuse_handoff(store, step, key, text, problems, bound)
        if reasons is not None:  # the bound is spent: the step failed
            return Arrival("failed", f"maker: step {step} FAILED: its handoff was rejected "
                           f"{count} times. Reasons:\n{_listed(reasons)}",
                           facts={"step": step, "attempts": count, "reasons": reasons})
        return Arrival("rejected", f"maker rejected your handoff for step {step} (attempt "
                       f"{count} of {bound}). Fix every problem below in the handoff YAML, "
                       f"then {AGAIN}:\n{_listed(problems)}", again=True, final=False,
                       facts={"step": step, "attempts": count, "problems": problems})
    clear(store, "handoff", key)
    return Arrival("accepted", f"maker: handoff for step {step} accepted ({result.status}).",
                   facts={"step": step, "status": result.status})


def _ended(store: PlanStore, agent: Arriving, arrival: Arrival) -> Arrival:
    """An answer that was the agent's last: its background launch is over."""
    if arrival.final and store.exists():
        end_agent(store, agent.agent_id)
    return arrival


def _listed(items: list[str]) -> str:
    return "\n".join(f"- {p}" for p in items)
