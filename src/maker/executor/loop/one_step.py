"""``/maker:step`` of a step whose code is voted on: a run of that one step in maker's
engine.

A code step with ``votes: K`` is decided by K to 4·K samples, each a whole session in a
worktree of its own (``maker.engine.code_vote``). The client's subagents would share the
main checkout, so ``maker step begin`` starts such a step as it starts any (its
dependencies, ``--force``, who owns it) and hands it to maker's engine: a run of the
plan limited to that step (``maker.executor.state.run.begin_run``'s ``only``), its stretch
started by maker in the background, the main agent woken when it ends
(``maker.hooks.wake``). The engine runs the step's every gate, as in ``/maker:run``; the
main session holds one line until the step's deviation or approval question, or its end.

:func:`one_step_next` is what such a run does next once no approval is due: the step's
deviation question, the engine again, or its end, with ``/maker:step``'s own last line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.errors import MakerError
from maker.executor.loop.actions import Action, ask, stop, stretch
from maker.executor.protocol.orient import deviation_question, pending_deviation
from maker.executor.rules.vote_rules import engine_votes
from maker.executor.state.lifecycle import default_step
from maker.executor.state.run import end_run, stop_run
from maker.executor.state.schedule import SKIPPED, plan_schedule

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["one_step_next", "vote_said", "voted_code"]


def one_step_next(store: PlanStore, n: int) -> Action:
    """The next action of the run of step ``n`` alone (its approval is asked before):
    ``maker step begin`` started the step, so one no longer in progress or done was put
    back by a person."""
    record = store.load_step(n)
    if record.status == "in-progress":
        dev = pending_deviation(record)
        return ask(deviation_question(n, dev)) if dev is not None else stretch()
    if record.status == "pending":  # (a person reset it meanwhile: theirs to start again)
        return stop(store, f"step {n} ({record.title}) is pending again; `/maker:step {n}` "
                           "runs it again")
    if record.status in ("failed", "blocked"):
        why = "; ".join(str(r) for r in record.meta.get("reasons") or [])[:400]
        return stop(store, f"step {n} ({record.title}) is {record.status}"
                           f"{': ' + why if why else ''}. A person decides: `/maker:reset {n}` "
                           f"puts it back, then `/maker:step {n}` runs it again")
    if record.status != "complete":  # (awaiting approval: next_action asks it first)
        return stop(store, f"step {n} ({record.title}) is {record.status}")
    plan = store.load()
    statuses = plan_schedule(store, plan).statuses.values()
    if all(s in ("complete", SKIPPED) for s in statuses):
        end_run(store)
    else:
        stop_run(store, f"step {n} ran alone (/maker:step); /maker:run goes on from here")
    by = record.meta.get("approved_by")
    return Action("done", f"maker: step {n} ({record.title}) is complete"
                          f"{f' (approved by {by})' if by else ''}.{vote_said(store, record)}"
                          "\nTell the user so in a sentence or two, and end with the line "
                          "STEP_COMPLETE.")


def vote_said(store: PlanStore, record: StepRecord) -> str:
    """The vote on the step's code, in a sentence ("" when its handoff keeps none)."""
    vote = (store.read_handoff(record.number) or {}).get("vote")
    if not isinstance(vote, dict) or not isinstance(vote.get("samples"), int):
        return ""
    tally = vote.get("tally") if isinstance(vote.get("tally"), list) else []
    won = tally[0].get("votes") if tally and isinstance(tally[0], dict) else None
    flagged = vote.get("flagged") if isinstance(vote.get("flagged"), int) else 0
    return (f" Its code won a vote: {vote['samples']} samples"
            + (f", {won} of them doing the same" if isinstance(won, int) else "")
            + (f", {flagged} dropped by a red flag" if flagged else "") + ".")


def voted_code(store: PlanStore, number: int | None) -> bool:
    """Whether the engine votes on the code of the step ``/maker:step`` starts
    (``number``, else the one a start takes up)."""
    if number is None:
        try:
            plan = store.load()
            number = default_step(plan, plan_schedule(store, plan))
        except MakerError:
            return False
    return engine_votes(store, number)
