"""What a person must not miss about a step (maker.handoff.measured.files_note): named on
its question, its approval screen and in maker status, and the step theirs whatever the
policy."""

from __future__ import annotations

from maker.executor.acceptance.review_route import review_need
from maker.executor.loop.status_view import status_summary
from maker.executor.loop.words import approval_screen
from maker.executor.verdicts.outcome import outcome
from maker.store.plan_store import PlanStore

__all__ = ["named_to_the_person"]


def named_to_the_person(store: PlanStore, n: int, said: str, label: str) -> None:
    """Step ``n`` goes to the person under ``auto``; ``said`` is on its question and its
    approval screen, and ``label`` in ``maker status``."""
    assert review_need(store, store.load_step(n), "auto").route == "person"
    asked = outcome(store, n)["ask"]["questions"][0]["question"]
    assert said in asked, asked
    assert said in approval_screen(store)
    assert label in status_summary(store)
