"""How often one run of a step failed verification, and seed 004's ``max_fix_attempts``
rule (docs/architecture.md#the-seeds) on that count (:func:`fix_budget_spent`: its one
home, below the gate that reads it; ``maker.executor.rules.step_rules`` lists it with the
other rules of a step).

``maker verify --step N`` records, in the step's sealed evidence, which run of the step
it verified (the step's ``started_at``) and how many runs failed in that run of the step
so far. A new run of the step (a reset, a retry) counts afresh. The count is maker's own
record, so the executor can neither reset it nor claim it: the engine's fix loop, the
plugin's ``maker verify`` and the gate all read it here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.verify.result import VerificationRun

__all__ = ["budget_note", "failed_runs", "fix_budget_spent", "spent", "spent_problem",
           "step_attempt", "stop_text"]


def fix_budget_spent(failed_runs: int, max_fix_attempts: int) -> bool:
    """Whether one run of a step whose verification failed ``failed_runs`` times has
    spent its fix budget: each of the first ``max_fix_attempts`` failures is followed by
    a fix; one more failure spends it (``maker run``'s fix loop, ``maker verify --step
    N`` and the gate all ask here)."""
    return failed_runs > max_fix_attempts


def step_attempt(store: PlanStore, step: int | None) -> str:
    """Which run of ``step`` a verification belongs to: its ``started_at`` ("" for no
    step, no plan, or a step not started). Raises StepNotFoundError for a wrong number."""
    if step is None or not store.exists():
        return ""
    store.step_path(step)  # StepNotFoundError, naming the steps, for a wrong number
    return str(store.load_step(step).meta.get("started_at") or "")


def failed_runs(previous: VerificationRun | None, attempt: str, status: str) -> int:
    """The failing runs of a step's run ``attempt`` once a run that ended ``status`` is
    recorded: the count in the step's ``previous`` record when it is sealed and of the
    same run of the step, plus one if this run failed."""
    before = previous.failed_runs if previous is not None and previous.sealed \
        and previous.attempt == attempt else 0
    return before + (status == "failed")


def spent(run: VerificationRun | None, attempt: str, bound: int) -> bool:
    """Whether ``run``, a step's recorded verification, shows the fix budget of the
    step's run ``attempt`` spent (``bound``: its ``max_fix_attempts``)."""
    return run is not None and run.sealed and run.attempt == attempt \
        and fix_budget_spent(run.failed_runs, bound)


def budget_note(run: VerificationRun, bound: int) -> str:
    """What ``maker verify --step N`` adds to a run of a started step: after a failure,
    how many failing runs are left; once the budget is spent (even if this run passed),
    that the executor must stop and hand back ``failed``."""
    if run.step is None or not run.attempt:
        return ""
    if fix_budget_spent(run.failed_runs, bound):
        return stop_text(run.step, run.failed_runs, bound)
    if run.status != "failed":
        return ""
    left = bound - run.failed_runs + 1
    return (f"fix attempts: this is failing run {run.failed_runs} in this run of step "
            f"{run.step}; after {left} more failing run{'s' if left != 1 else ''} the fix "
            f"budget (max_fix_attempts: {bound}, plans/settings.yaml) is spent. Fix what "
            f"fails, then run `maker verify --step {run.step}` again.")


def stop_text(step: int, failures: int, bound: int) -> str:
    return (f"STOP: verification failed {failures} times in this run of step {step}, and "
            f"max_fix_attempts is {bound} (plans/settings.yaml): the fix budget is spent. "
            f"Do not fix further: hand off now with `status: failed`, what still fails in "
            f"`blockers`, and what you tried in `summary`. maker refuses a `complete` "
            f"handoff for this run of the step.")


def spent_problem(run: VerificationRun, bound: int) -> str:
    """The gate's reason to refuse a complete handoff once the fix budget is spent."""
    return (f"verification failed {run.failed_runs} times in this run of the step, over "
            f"max_fix_attempts ({bound}, plans/settings.yaml): the fix budget is spent")
