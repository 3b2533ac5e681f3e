"""A worktree step's change lands when its complete handoff arrives: in code, before
the gate accepts it, as ``maker run`` does (``maker.executor.parallel.land``), so the executor has
no ``maker land N`` to remember.

A hook may run only so long (a SubagentHandback's PreToolUse hook 30 s, a SubagentStop
hook 120 s), and the landing runs the project's checks on the merged tree. So it waits
at most ``wait_s`` for them, all told: a landing past that is undone and the executor is
told to run ``maker land N`` itself (a command has no such limit), then hand off again.
A change that cannot land (a conflict, checks that fail on the merged tree) sends the
step to a new worktree on the new base, as ``maker land N`` would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.executor.parallel.land import MAX_LAND_ATTEMPTS, Landing, land_step
from maker.handoff.gate import check_handoff
from maker.store.workspace import LANDED_KEY, worktree_of

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["land_before_accept", "landing_text"]

# What only the landing settles: the change in the main checkout (the files maker
# measures there) and the checks run on the merged tree (the evidence).
_AFTER_LANDING = ("evidence", "files_changed")

def land_before_accept(store: PlanStore, n: int, handoff_text: str,
                       wait_s: float) -> str | None:
    """For step ``n``'s handoff: land its change first when it runs in a worktree, the
    gate reads it as ``complete`` and finds nothing else wrong with it (a handoff the
    gate refuses lands nothing). None when there is nothing to land, or it landed (the
    gate goes on); else what the executor is told (its handoff is not accepted yet)."""
    record = store.load_step(n)
    if worktree_of(store, record) is None or record.meta.get(LANDED_KEY):
        return None
    handoff, problems = check_handoff(store, handoff_text)
    if handoff is None or handoff.status != "complete" or handoff.step != n:
        return None
    if [p for p in problems if p.field not in _AFTER_LANDING]:
        return None  # (the gate refuses it, with every problem; nothing lands)
    landing = land_step(store, n, wait_s)
    if landing.kind in ("landed", "nothing"):
        return None
    if landing.kind == "slow":
        return (f"maker: step {n}'s change did not land: {landing.reason}. Nothing of it "
                f"was kept in the main checkout. Run `maker land {n}` (it waits for the "
                "checks), then deliver your handoff again, unchanged.")
    return landing_text(landing)


def landing_text(landing: Landing) -> str:
    """What the step's executor (or a person) reads of a landing."""
    n = landing.step
    if landing.kind == "landed":
        return (f"maker: step {n}'s change landed in the main checkout "
                f"({len(landing.files)} file(s): {', '.join(landing.files[:20])}), and its "
                "verification passed there. Nothing more is edited for this step: "
                "hand off now.")
    if landing.kind == "nothing":
        return f"maker: step {n} has no worktree change to land ({landing.reason or 'none'})."
    if landing.failed:
        return (f"maker: step {n}'s change could not land: {landing.reason}. It ran on a "
                f"new base {MAX_LAND_ATTEMPTS} times, and the step has failed: hand off "
                "with status: failed and this reason in blockers.")
    return (f"maker: step {n}'s change could not land: {landing.reason}. Nothing of it "
            f"was kept in the main checkout. maker cut a new worktree from the main "
            f"checkout as it is now: {landing.again}. Do the step again there (the same "
            f"relative paths; the other change is in it), then `maker verify --step "
            f"{n}` and hand off again.")
