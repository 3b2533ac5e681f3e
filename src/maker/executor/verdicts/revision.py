"""A person's rejection with notes runs the step again at once (seed 004: "revisions loop
through implement → verify → handoff again"; docs/architecture.md#the-seeds): the user should
not have to start it by hand.

A rejection without notes is a stop: the step is back to pending and the flow ends with
``STEP_REJECTED`` (maker's meaning of the sentinel: the person turned the work down,
at the final approval or at the deviation gate; seed 004 also uses it for a coder's plan
rejected at its own gate, which maker has no equivalent of). With notes, the step starts
again in the same session, its brief carrying the notes, and the flow goes on to a new
handoff and a new approval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["run_again"]


def run_again(store: PlanStore, n: int, notes: str, by: str, session_id: str,
              prompt_id: str) -> str:
    """Step ``n`` was just sent back by ``by`` with ``notes``: start it again now, for the
    session that asked. What the main agent is told."""
    from maker.errors import MakerError
    from maker.executor.state.lifecycle import start_step
    from maker.executor.state.run import ENGINE, ENGINE_SESSION, run_mode
    from maker.executor.votes.ballots import launch_instruction
    from maker.executor.votes.runs import add_turn

    engine = run_mode(store) == ENGINE  # (a run in maker's engine: its sessions run it)
    try:
        result = start_step(store, n, session_id=ENGINE_SESSION if engine else
                            session_id or None)
    except MakerError as exc:
        return (f"maker: {by} rejected step {n}; it is back to pending with the notes "
                f"{notes!r}, but it could not start again now ({exc}). Tell the user that "
                f"/maker:step {n} runs it again, and end with STEP_REJECTED.")
    if engine:
        return (f"maker: {by} sent step {n} back with the notes {notes!r}; maker's engine "
                f"runs it again, with them in its brief, as the run goes on (or "
                f"`/maker:step {n}`).")
    add_turn(store, n, session_id, prompt_id)
    return (f"maker: {by} sent step {n} back with the notes {notes!r}; it runs again now, "
            "with them in its brief (no need to start it by hand).\n"
            f"STARTED: step {n} ({result.title}) started again (revision).\n"
            f"NEXT: {launch_instruction(store, n)}. Then go on as maker's verdict on it says.")
