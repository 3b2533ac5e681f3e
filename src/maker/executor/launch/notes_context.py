"""Persistent context across agents (seed 002, docs/architecture.md#the-seeds), kept where the
plugin keeps it.

Seed 002's ``ContextManager`` for maker: before a step's agent runs,
:meth:`NotesContext.get_context_for_prompt` gives what earlier agents left (the
previous agent's ``for_next_agent`` and the plan's NOTES.md facts, exactly as the
plugin's brief shows them); after it answers, :meth:`NotesContext.update_from_result`
adds its discoveries, decisions and blockers to NOTES.md with the gate's own call.

The seed scopes both by ``component_id``; maker names the step, and the step's
``component`` in the plan is the scope: a step of component ``api`` is given the facts
of ``api``'s steps, of the steps it depends on and the plan-wide ones, and the facts
it adds are ``api``'s (trimmed per component, so another's cannot push them out).

``summary`` and ``for_next_agent`` are not NOTES.md facts: they belong to the step's
handoff file, which only the gate writes (``maker.executor.acceptance.accept.accept_handoff``), and
the next agent reads them from there (``maker.executor.launch.previous_work.previous_handoff``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maker.core.models import AgentResult
from maker.executor.acceptance.accept import add_step_facts
from maker.executor.launch.previous_work import BriefBudget, persistent_context
from maker.handoff.against_plan import check_output, red_flags
from maker.handoff.fields import parse_handoff
from maker.red_flag.red_flagger import RedFlagger

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["NotesContext"]


class NotesContext:
    """The persistent context of the plan in ``store`` (``plans/``), for one agent at a time.

    ``budget`` bounds what goes into a prompt (default: the brief's).
    """

    def __init__(self, store: PlanStore, budget: BriefBudget | None = None) -> None:
        self.store = store
        self.budget = budget or BriefBudget()

    def get_context_for_prompt(self, step: int) -> str:
        """The "Context from previous work" section for ``step``'s agent (Markdown),
        scoped to the step's component when it has one.

        Raises PlanFileError for plan files that cannot be read.
        """
        return persistent_context(self.store, self.store.load(), step, self.budget)

    def update_from_result(self, result: AgentResult, step: int) -> int:
        """Add the discoveries, decisions and blockers of ``step``'s answer to NOTES.md;
        returns how many facts were new.

        Only an answer that maker would take counts: one the red flagger passes, that
        reads as a handoff of ``step`` (its fields of the right types, its ``step`` the
        one that ran) and that the gate's checks against the plan pass (the output
        against the step's schema, the handoff's red flags). The verification evidence
        is the one check left to the caller, which runs it after. Anything else adds
        nothing: a discarded or refused answer's facts are not facts. Facts are tagged
        with the step and its attempt, and scoped to the current plan, as the gate does.
        """
        flagged, _ = RedFlagger().check_with_reason(result)
        if flagged or not isinstance(result.output, dict):
            return 0
        handoff, problems = parse_handoff(result.output)
        if handoff is None or problems or handoff.step != step:
            return 0
        plan, output = self.store.load(), result.output.get("output")
        if isinstance(output, dict):  # as the gate checks it (maker.handoff.gate)
            check_output(plan, plan.get(step), result.output.get("status"), output, problems)
        red_flags(output, result.raw_response, problems)
        if problems:
            return 0
        facts = {"discoveries": handoff.discoveries, "decisions": handoff.decisions,
                 "blockers": handoff.blockers}
        if not any(facts.values()):
            return 0
        with self.store.lock():
            plan = self.store.load()
            record = plan.get(step)
            return add_step_facts(self.store, plan, record, handoff)
