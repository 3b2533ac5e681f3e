"""The unit tests' moves in a ``/maker:run``: begin it (as ``maker loop begin`` does),
an executor's accepted handoff and the run's verdict on it, the person's "Approve N and
the rest", a large step (six files) handed off."""

from __future__ import annotations

import json

from harness.step_plans import handoff
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import APPROVE_REST_LABEL
from maker.executor.loop.next_action import loop_lock, next_action
from maker.executor.loop.words import answered, executor_said
from maker.executor.state.run import begin_run
from maker.hooks.decisions import answer_decision
from maker.store.plan_store import PlanStore

SESSION, PROMPT = "session-1", "prompt-1"
LARGE = [f"f{i}.py" for i in range(6)]
"""A step's files past the review threshold."""


def begin(store: PlanStore, parallel: int | None = None, session: str = SESSION) -> str:
    """A person's ``/maker:run``: the run begun or resumed, and its next action."""
    with loop_lock(store), store.lock():
        begin_run(store, session, parallel)
    return next_action(store, session, PROMPT, typed=True).said


def finish(store: PlanStore, n: int, usage: dict[str, int] | None = None,
           files: list[str] | None = None) -> str:
    """Step ``n``'s executor hands off (``files`` changed) and returns: the verdict."""
    if files:
        for name in files:
            (store.project / name).write_text("x = 1\n")
        accept_handoff(store, handoff(n, files_changed=files))
    else:
        accept_handoff(store, handoff(n, summary=f"Did step {n} of the plan."))
    return executor_said(store, {"outcome": "accepted", "step": n}, SESSION, PROMPT,
                         usage or {})


def approve_rest(store: PlanStore, verdict: str) -> str:
    """The person answers the verdict's question with "Approve N and the rest"."""
    question = json.loads(verdict.split("\nask: ", 1)[1])
    text = question["questions"][0]["question"]
    n = int(text.split("approve step ")[1].split()[0])
    told = answer_decision(store, question, {"answers": {text: APPROVE_REST_LABEL.format(n=n)}},
                           SESSION, PROMPT)
    return answered(store, told or "", SESSION, PROMPT)

