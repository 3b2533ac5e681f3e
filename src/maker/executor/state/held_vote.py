"""A code step whose vote was undecided, held for a person.

Where a person wrote ``undecided_code_vote: ask`` in ``plans/settings.yaml``, ``maker
run``'s engine does not fail a code step whose samples no behaviour won
(``maker.engine.code_vote``): it records the vote's words (its matrix) on the step, which
stays in progress, and the run stops for the person. Until they decide, every front end
that would run the step again stops there instead, with the same words: ``maker run``
(``maker.engine.step_run``), ``/maker:run`` (``maker.executor.loop.next_action``, in the
engine or with subagents), ``/maker:step`` and ``maker step start``
(:func:`refuse_held`, checked before anything changes); else each would draw another whole
vote, and ``/maker:run``'s stretches would do so again and again. ``maker status`` shows
the step as waiting for the person (:func:`held_note`). A reset or a new start of the step
clears the mark (it is one of ``store.step_file.ATTEMPT_META``): ``maker step reset N``
(or ``/maker:reset N``), then a run, votes anew; ``maker step fail N`` fails it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.errors import StepError
from maker.store.records import in_progress
from maker.store.step_file import HELD_VOTE

if TYPE_CHECKING:
    from collections.abc import Iterable

    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["first_held", "held", "held_note", "hold", "refuse_held"]

_WHY = 4000  # characters of the vote's words kept (a matrix of 4·K samples fits)


def hold(store: PlanStore, n: int, why: str) -> str:
    """Hold step ``n`` (in progress) for a person, ``why`` its undecided vote and matrix;
    return what to tell them (:func:`held`)."""
    with store.lock():
        record = store.load_step(n)
        record.meta[HELD_VOTE] = why[:_WHY]
        store.save_step(record)
    return held(record) or ""


def held(record: StepRecord) -> str | None:
    """What the person is told of step ``record``'s vote held for them, and how they go
    on; None when it is not held."""
    why = record.meta.get(HELD_VOTE)
    if not why or record.status != "in-progress":
        return None
    n = record.number
    return (f"step {n} ({record.title}) waits for a person: {why}. plans/settings.yaml says "
            "`undecided_code_vote: ask`, so the step stays in progress rather than failing. "
            f"A person decides: reset it (`maker step reset {n}` in a terminal, or "
            f"/maker:reset {n}) and run it again (`maker run`, or /maker:run) for a fresh "
            "vote, first making the step clearer (its task, its tests) or taking its "
            f"`votes` away if need be; or fail it (`maker step fail {n} --reason \"…\"` in "
            "a terminal)")


def first_held(records: Iterable[StepRecord]) -> str | None:
    """:func:`held`'s words for the first of ``records`` held for a person; else None."""
    return next((why for r in records if (why := held(r)) is not None), None)


def refuse_held(store: PlanStore, n: int | None) -> None:
    """Refuse to start step ``n`` again while its vote is held for a person: it is in
    progress, and a start would only hand it to another executor, which votes again.
    ``n`` None: the step a start takes up (``lifecycle.default_step``: the one in
    progress). Changes nothing. Raises StepError with :func:`held`'s words, and what
    ``store.load`` raises (no plan, a broken file); a step not in the plan is left to
    the start, which names the steps there are."""
    plan = store.load()
    records = in_progress(plan)[:1] if n is None else [r for r in plan.steps if r.number == n]
    for record in records:
        if (why := held(record)) is not None:
            raise StepError(why, record.number)


def held_note(record: StepRecord) -> str | None:
    """:func:`held`'s words in short, for ``maker status``: why step ``record`` waits for a
    person and what they may do; None when it is not held."""
    if held(record) is None:
        return None
    n = record.number
    return (f"its code vote was undecided, and `undecided_code_vote: ask` holds it for you. "
            f"Reset it and run it again (`maker step reset {n}`, then `maker run`; or "
            f"/maker:reset {n}, then /maker:run), or fail it (`maker step fail {n} --reason "
            "\"…\"`)")
