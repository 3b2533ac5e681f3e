"""Accepting a checked handoff: the step's lifecycle transition out of in-progress.

``accept_handoff`` checks (``maker.handoff.gate``), then writes
``plans/handoffs/NN-<slug>.md``, moves the step's status (a complete step waits for
approval unless the plan's policy gives it), adds the new facts to NOTES.md, clears
the in-progress marker and refreshes PLAN.md — or raises ``HandoffRejectedError``
with every problem.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.agent_context import AgentContext
from maker.core.clock import utc_now
from maker.core.models import Handoff, step_refs
from maker.errors import HandoffRejectedError, Problem, StepNotFoundError
from maker.executor.acceptance.approval import hold_or_approve
from maker.executor.protocol.sweep import apply_sweep
from maker.executor.state.lifecycle import set_status
from maker.executor.state.schedule import next_steps
from maker.handoff.evidence import project_dir
from maker.handoff.gate import inspect_handoff
from maker.handoff.measured import (
    BASE_FIELD,
    LATER_FIELD,
    MEASURED_FIELD,
    NESTED_FIELD,
    STALE_FIELD,
    TESTS_FIELD,
    code_run_later,
    nested_repositories,
)
from maker.handoff.on_base import passes_on_base
from maker.handoff.weak_tests import weakened_tests
from maker.store.notes import add_notes
from maker.store.records import StepRecord, StoredPlan
from maker.store.workspace import step_project
from maker.tools.git.git_tree import MAX_PATHS
from maker.verify.detect import detect_commands
from maker.yaml_cleaner.dump import canonical_sha256

if TYPE_CHECKING:  # (VoteRecord by type only: a hook's acceptance, with no vote, does not
    # import the vote's rules and maker.voting)
    from maker.executor.rules.vote_rules import VoteRecord
    from maker.store.plan_store import PlanStore
    from maker.verify.result import VerificationRun

__all__ = ["AcceptResult", "accept_handoff", "add_step_facts"]


@dataclass(frozen=True)
class AcceptResult:
    """An accepted handoff: the step's new status, its file, and what can run next."""

    step: int
    status: str
    path: Path
    notes_added: int = 0
    next_steps: list[tuple[int, str]] = field(default_factory=list)  # (number, title)
    was_repaired: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "status": self.status, "path": str(self.path),
                "notes_added": self.notes_added, "was_repaired": self.was_repaired,
                "next": [{"step": n, "title": t} for n, t in self.next_steps]}


def accept_handoff(store: PlanStore, text: str | bytes, vote: VoteRecord | None = None,
                   step: int | None = None) -> AcceptResult:
    """Check a handoff and persist it; returns the step's new status and what is next.

    Writes ``plans/handoffs/NN-<slug>.md`` (all handoff fields, ``accepted_at``, and
    ``inputs``: the sha256 of every step output this step read), moves the step to
    the handoff's status, adds new discoveries, decisions and blockers to NOTES.md,
    clears the in-progress marker and refreshes PLAN.md.
    ``vote``: the record of the vote that chose this answer (``maker run``'s samples
    or the plugin's ballots), kept in the handoff. ``step``: the step the answering
    executor works on, when maker knows it (a handoff naming another is refused). Raises
    HandoffRejectedError with every problem.
    """
    with store.lock():
        checked = inspect_handoff(store, text, step)
        handoff, plan, record, run = checked.handoff, checked.plan, checked.record, checked.run
        if handoff is None or checked.problems or plan is None or record is None:
            raise HandoffRejectedError(checked.problems, f"handoff for step {record.number}"
                                       if record is not None else "handoff")
        from maker.executor.protocol.orient import pending_deviation

        if pending_deviation(record) is not None:  # the deviation gate comes first
            raise HandoffRejectedError([Problem(
                "status", "the step deviates from the plan and awaits a person's decision "
                "on the revised step; no handoff counts before it", record.number,
                f"a person approves or rejects it: `maker step approve {record.number}` or "
                f"`maker step reject {record.number}`")], f"handoff for step {record.number}")
        accepted = utc_now()
        data: dict[str, Any] = {
            "step": handoff.step,
            "status": handoff.status,
            "accepted_at": accepted,
            "output": handoff.output,
            "summary": handoff.summary,
            "discoveries": handoff.discoveries,
            "decisions": handoff.decisions,
            "blockers": handoff.blockers,
            "for_next_agent": handoff.for_next_agent,
            "files_changed": handoff.files_changed,
            "evidence": [asdict(e) for e in handoff.evidence],
            "inputs": _inputs(store, plan, record),
        }
        if handoff.edge_cases or handoff.proposals:
            data["edge_cases"] = [{"step": n, "note": t} for n, t in handoff.edge_cases]
            data["proposals"] = list(handoff.proposals)
        if handoff.sweep is not None:
            data["sweep"] = handoff.sweep
        if handoff.behaviour_kept:
            data["behaviour_kept"] = handoff.behaviour_kept
        if checked.measured is not None:
            data[MEASURED_FIELD] = checked.measured
            # (measured a second time only where a changed path is a repository of its own,
            # or the measure's list was cut short)
            nested = nested_repositories(store, record) if len(checked.measured) >= \
                MAX_PATHS or any((store.project / p / ".git").exists()
                                 for p in checked.measured) else []
            if nested:
                data[NESTED_FIELD] = nested
            later = code_run_later(store, record, checked.measured)
            if later:
                data[LATER_FIELD] = later
            weak = weakened_tests(store, record, checked.measured)
            if weak:
                data[TESTS_FIELD] = weak
            proved = [f for f in passes_on_base(store, record.number, step_project(
                store, record)) if f in checked.measured]
            if proved:
                data[BASE_FIELD] = proved
        if run is not None:
            data["verification"] = {
                "finished_at": run.finished_at, "status": run.status,
                "commands": [{"command": e.command, "exit_code": e.exit_code}
                             for e in run.commands]}
        if checked.was_repaired:
            data["repaired"] = True
        if vote is not None:
            data["vote"] = vote.to_dict()
        stale = _stale(store, plan, record) if handoff.status == "complete" else []
        if stale:
            data[STALE_FIELD] = stale
        path = store.write_handoff(handoff.step, data, _body(store, record, handoff, run))
        added = add_step_facts(store, plan, record, handoff)
        if handoff.status == "complete":
            apply_sweep(store, plan, record.number, handoff)
            status = hold_or_approve(store, plan, record, data)
            upcoming = [(r.number, r.title) for r in next_steps(plan, store)] \
                if status == "complete" else []
            return AcceptResult(handoff.step, status, path, added, upcoming,
                                checked.was_repaired)
        meta: dict[str, Any] = {"finished_at": accepted}
        if handoff.status != "complete":
            meta["reasons"] = handoff.blockers or [handoff.summary.strip()]
        set_status(store, handoff.step, handoff.status, meta, plan=plan)
        upcoming = [(r.number, r.title) for r in next_steps(plan, store)]
        return AcceptResult(handoff.step, handoff.status, path, added, upcoming,
                            checked.was_repaired)


def _stale(store: PlanStore, plan: StoredPlan, record: StepRecord) -> list[str]:
    """For a step that never oriented (its tools only read: orient gates edits), what
    orient's code would have found major now (an input that changed under it), which
    no policy takes; [] for a step that oriented (orient enforced it then)."""
    if record.meta.get("orient"):
        return []
    from maker.executor.protocol.orient import findings

    return [f.text for f in findings(store, plan, record.number) if f.major][:10]


def _inputs(store: PlanStore, plan: StoredPlan, record: StepRecord) -> list[dict[str, Any]]:
    """What this step read: each referenced step's output variable and its sha256."""
    refs = [n for n in step_refs(record.spec.input_variables) if n != record.number]
    if not refs:
        return []
    outputs = store.outputs(only=refs, plan=plan)
    out: list[dict[str, Any]] = []
    for n in refs:
        try:
            var = plan.get(n).spec.output_variable
        except StepNotFoundError:
            continue
        value = outputs.get(var)
        out.append({"step": n, "output_variable": var,
                    "sha256": canonical_sha256(value) if var in outputs else None})
    return out


def _body(store: PlanStore, record: StepRecord, handoff: Handoff,
          run: VerificationRun | None) -> str:
    parts = [f"# Step {record.number} handoff: {record.title}", "",
             f"**Status:** {handoff.status}", "", "## Summary", "", handoff.summary.strip()]
    if handoff.for_next_agent.strip():
        parts += ["", "## For the next agent", "", handoff.for_next_agent.strip()]
    for title, items in (("Discoveries", handoff.discoveries), ("Decisions", handoff.decisions),
                         ("Blockers", handoff.blockers),
                         ("Files changed", handoff.files_changed)):
        if items:
            parts += ["", f"## {title}", ""] + [f"- {i.strip()}" for i in items]
    orient = record.meta.get("orient")
    if isinstance(orient, dict) and orient.get("deviation") in ("minor", "major"):
        approved = f", approved by {orient['approved_by']}" if orient.get("approved_by") else ""
        parts += ["", "## Orient", "", f"A {orient['deviation']} deviation from the plan"
                  f"{approved}: {orient.get('what_changed') or '(not described)'}"]
    if handoff.edge_cases:
        parts += ["", "## Edge cases for later steps (written into their Edge cases)", ""] + [
            f"- step {n}: {t}" for n, t in handoff.edge_cases]
    if handoff.proposals:
        parts += ["", "## Proposals (changes of scope: the user accepts or drops them)",
                  ""] + [f"- {t}" for t in handoff.proposals]
    parts += ["", "## Verification run by maker", "", *_verification_lines(store, handoff, run)]
    if handoff.evidence:
        parts += ["", "## Claimed by the executor (not verified)", ""] + [
            f"- `{e.command}` → exit {e.exit_code}" for e in handoff.evidence]
    return "\n".join(parts)


def _verification_lines(store: PlanStore, handoff: Handoff,
                        run: VerificationRun | None) -> list[str]:
    """What ``maker verify`` ran for this handoff (its sealed run): only this is evidence."""
    if run is not None:
        return [f"- `{e.command}` → exit {e.exit_code}" for e in run.commands] + [
            "", f"Recorded by `maker verify` at {run.finished_at}: {run.status}."]
    if not detect_commands(project_dir(store)):
        return ["none: no verification command is known for this project"]
    return [f"none: the step ended {handoff.status}, and only a complete step needs a "
            "passing `maker verify` run"]


def add_step_facts(store: PlanStore, plan: StoredPlan, record: StepRecord,
                   handoff: Handoff | AgentContext) -> int:  # (or a reviewer's context)
    """Add the handoff's discoveries, decisions and blockers to NOTES.md, tagged with the
    step and its attempt and scoped to the plan (and trimmed per component); returns how
    many facts were new."""
    return add_notes(store.notes_path, {"discoveries": handoff.discoveries,
                                        "decisions": handoff.decisions,
                                        "blockers": handoff.blockers},
                     step=record.number, archive_dir=store.archive_dir,
                     attempt=int(record.meta.get("resets") or 0) + 1,
                     plan=plan.created_at or None, components=plan.components())
