"""A step whose ``depends_on`` is not met: the person decides whether to start it anyway
(seed 004's ``gate_blocked``: ``STEP_BLOCKED`` when they decline; docs/architecture.md#the-seeds).

``/maker:step N`` on such a step does not only refuse: maker asks the user its question
(AskUserQuestion, the input on ``maker step begin``'s ``ask:`` line). The answer is
recorded by the hook that sees it (``maker.hooks.decisions``), never by the model, which
may not fill the answer in itself; starting anyway is recorded on the step as forced, with
what was unmet, as ``/maker:step N --force`` (the typed way, and the way in print mode)
records it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["BLOCKED_LABELS", "BLOCKED_PREFIX", "blocked_question", "person_starts"]

BLOCKED_PREFIX = "maker: start step "
BLOCKED_LABELS = ("Start step {n} anyway", "Do not start step {n}")
_TYPED_S = 3600.0  # a /maker:step typed this long ago is not the one the question was of


def blocked_question(n: int, title: str, missing: dict[int, str]) -> dict[str, Any]:
    """The AskUserQuestion input that asks whether to start step ``n`` although the
    steps in ``missing`` (number → status) are not complete."""
    unmet = ", ".join(f"step {d} is {s}" for d, s in sorted(missing.items()))
    start, stop = (label.format(n=n) for label in BLOCKED_LABELS)
    return {"questions": [{
        "question": f"{BLOCKED_PREFIX}{n} ({title[:60]}) although it depends on unfinished "
                    f"work ({unmet[:200]})?",
        "header": f"Step {n}"[:12],
        "multiSelect": False,
        "options": [
            {"label": start, "description": "It runs on what is there now; maker records "
             "that you started it with its dependencies unmet."},
            {"label": stop, "description": "Nothing starts (STEP_BLOCKED)."},
        ]}]}


def person_starts(store: PlanStore, n: int, start: bool, session_id: str,
                  prompt_id: str) -> str:
    """The user's answer to :func:`blocked_question`: start step ``n`` anyway (forced,
    recorded), or not. What the main agent is told."""
    from maker.errors import MakerError
    from maker.executor.rules.vote_rules import engine_votes
    from maker.executor.state.lifecycle import start_step
    from maker.executor.state.run import ENGINE, ENGINE_SESSION, begin_run
    from maker.executor.votes.ballots import launch_instruction
    from maker.executor.votes.runs import add_turn

    if not start:
        return (f"maker: the user chose not to start step {n}; nothing was started. Tell "
                "them which steps come first, and end with STEP_BLOCKED.")
    engine = engine_votes(store, n)  # (its code is voted on: a run of it in the engine)
    try:
        result = start_step(store, n, force=True,
                            session_id=ENGINE_SESSION if engine else session_id or None)
    except MakerError as exc:
        return (f"maker: step {n} was not started: {exc}. Tell the user, and end with "
                "STEP_BLOCKED.")
    over = "; ".join(str(x) for x in store.load_step(n).meta.get("forced_over") or [])
    if engine:  # (the answer's hook starts its stretch: maker.hooks.wake.answered_in_run)
        with store.lock():
            begin_run(store, session_id, None, ENGINE, only=n, notes=_typed_notes(session_id, n))
        return (f"maker: the user chose to start step {n} although "
                f"{over or 'it was blocked'} (recorded as forced); its code is voted on in "
                "maker's engine.")
    add_turn(store, result.step, session_id, prompt_id)
    return (f"maker: the user chose to start step {n} although {over or 'it was blocked'} "
            f"(recorded as forced).\nSTARTED: step {n} ({result.title}) started with "
            f"--force (recorded).\nNEXT: {launch_instruction(store, n)}, with the user's "
            "notes (if they gave any) verbatim.")


def _typed_notes(session_id: str, n: int) -> str:
    """The notes the person typed after ``/maker:step n`` in this session (what the
    blocked question was asked of), for the engine's sessions; "" for anything else."""
    from maker.errors import RequestError
    from maker.store.requests import load_request, split_step_args

    raw = load_request(session_id, "step", max_age_s=_TYPED_S) if session_id else None
    try:
        number, _, notes = split_step_args(raw or "")
    except RequestError:
        return ""
    return notes if number == n else ""
