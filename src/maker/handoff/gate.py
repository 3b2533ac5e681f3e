"""The handoff gate: a step executor's final answer, checked by code.

``check_handoff`` turns raw model text into a ``Handoff`` and lists every problem
at once, each with its fix, written for the model that has to correct itself.
Accepting a checked handoff is a lifecycle transition: ``maker.executor.acceptance.accept``.

The stages, each with its own module and typed result:

- the handoff's fields with their types (docs/protocol.md#the-handoff: ``step``,
  ``status``, ``output``, ``summary`` required; the lists, ``for_next_agent`` and
  ``evidence`` optional): ``maker.handoff.fields``;
- against the plan (``maker.handoff.against_plan``): ``step`` is the step in progress;
  a complete step's ``output`` has every top-level key of its ``output_schema``; a
  complete conditional step's ``output.next_step`` is -1 or another step of the plan;
  a blocked step names its blockers; the red flags of ``maker.red_flag``;
- the evidence (``maker.handoff.evidence``): when the project has verification
  commands, a complete step needs a recorded ``maker verify --step N`` run that passed
  after the step started, sealed by maker: a handoff cannot just claim ``exit_code: 0``,
  and a run file written by hand is refused;
- orientation (seed 004, docs/architecture.md#the-seeds: orient comes before implement): a
  complete step whose tools can write has recorded ``maker orient N ...``;
- the files the step changed, measured by maker (``maker.handoff.measured``):
  ``files_changed`` names every one and nothing else;
- tests that can fail (``maker.handoff.on_base``): a step that changed code has a test
  that fails on the code before it, or says why none can (``behaviour_kept``).

A sample of a vote on a step's code is checked on the stages that apply to it in its own
worktree (:func:`check_sample`) and dropped where one refuses its handoff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maker.core.models import Handoff
from maker.errors import Problem
from maker.errors import YAMLCleanError as _YAMLCleanError
from maker.handoff.against_plan import check_oriented, check_output, red_flags, target_step
from maker.handoff.evidence import check_evidence, check_landed
from maker.handoff.fields import FORMAT_HINT, is_int, parse_handoff
from maker.handoff.measured import check_measured
from maker.handoff.on_base import check_can_fail
from maker.handoff.sweep import check_sweep, check_sweep_record
from maker.store.records import StepRecord, StoredPlan, in_progress
from maker.yaml_cleaner.cleaner import YAMLCleaner

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.verify.result import VerificationRun

__all__ = ["CheckedHandoff", "check_handoff", "check_sample", "inspect_handoff"]


@dataclass(frozen=True)
class CheckedHandoff:
    """What the gate found in a step executor's answer.

    ``handoff`` is None when its fields cannot be read; ``plan`` and ``record`` (the
    step in progress) once the plan was read; ``run`` is the sealed verification run
    behind a complete step, when the project has verification commands; ``measured``
    the files the step changed as maker measured them (None: not measured).
    """

    handoff: Handoff | None
    problems: list[Problem] = field(default_factory=list)
    was_repaired: bool = False
    plan: StoredPlan | None = None
    record: StepRecord | None = None
    run: VerificationRun | None = None
    measured: list[str] | None = None


def check_handoff(store: PlanStore, text: str | bytes) -> tuple[Handoff | None, list[Problem]]:
    """``(handoff, problems)`` for a step executor's raw answer; never raises on bad text.

    The handoff is None when its fields cannot be read; otherwise it is returned
    even when it breaks a rule of the plan (those are in ``problems``). Errors of
    the plan itself (no plan, a broken step file) are raised as MakerError.
    """
    checked = inspect_handoff(store, text)
    return checked.handoff, checked.problems


def inspect_handoff(store: PlanStore, text: str | bytes,
                    expected: int | None = None) -> CheckedHandoff:
    """Like ``check_handoff``, with what accepting needs: the plan, the step, the run.
    ``expected``: the step its executor works on (of several in progress, only that one
    may be the one the handoff names)."""
    try:
        data, was_repaired = YAMLCleaner().clean_mapping(text)
    except _YAMLCleanError as exc:
        return CheckedHandoff(None, [Problem("handoff", f"no handoff YAML found: {exc}",
                                             fix=FORMAT_HINT)])
    handoff, problems = parse_handoff(data)
    plan = store.load()
    step = data.get("step") if is_int(data.get("step")) else None
    running = in_progress(plan)
    if expected is not None:
        running = [r for r in running if r.number == expected]
    record = target_step(plan, running, step, problems)
    if record is None:
        return CheckedHandoff(handoff, problems, was_repaired, plan)
    status = data.get("status")
    output = data.get("output")
    if isinstance(output, dict):
        check_output(plan, record, status, output, problems)
    red_flags(output, text, problems)
    if status == "blocked" and not data.get("blockers"):
        problems.append(Problem("blockers", "status is blocked but no blocker is named",
                                record.number, fix="list what stops the step under "
                                "`blockers:`, one `- text` per item"))
    if handoff is not None:
        check_sweep(plan, record, handoff.edge_cases, problems)
        check_sweep_record(record, status, handoff.sweep, handoff.edge_cases,
                           handoff.proposals, problems)
    elif status == "complete" and "sweep" not in data:  # (said with the other problems)
        check_sweep_record(record, status, None, [], [], problems)
    if status == "complete":
        check_landed(store, record, problems)
    run = check_evidence(store, record, problems) if status == "complete" else None
    if status == "complete":
        check_oriented(record, problems)
    measured = check_measured(store, record, data.get("files_changed"), problems, status)
    if status == "complete" and measured is not None:
        check_can_fail(store, record, measured, handoff.behaviour_kept if handoff else "",
                       problems)
    return CheckedHandoff(handoff, problems, was_repaired, plan, record, run, measured)


def check_sample(store: PlanStore, sample: StepRecord, handoff: Handoff, data: dict[str, Any],
                 text: str | bytes) -> list[Problem]:
    """Every problem for which the gate would refuse ``handoff``, the complete handoff of a
    sample of a vote on a step's code (``maker.engine.code_sample``; ``data``: its YAML,
    ``text``: the answer); ``sample`` is the step's record as the sample's session got it,
    naming its worktree and the vote's base (``measured_from``). Raises MakerError where
    the plan cannot be read. Of the gate's stages, those that apply to a sample:

    - against the plan: the handoff is for this step; its ``output`` has every top-level
      key of the step's ``output_schema`` (a conditional step's ``next_step`` is -1 or a
      step still to run); maker's red flags; its sweep (the handoff's own words);
    - the files it changed: ``files_changed`` names every file git measures as changed in
      its worktree since the base, and nothing else.

    Not the evidence (a sealed ``maker verify`` run) nor tests that can fail (the
    on-base stage): the vote's own runs of every sample's tests and of the step's checks,
    in each sample's folder and on the base (``maker.verify.cross_runs``), stand in for
    them, and the winner meets both when it is gated whole after it lands; nor having
    landed (the winner lands after the vote). Nor orientation: ``maker orient N`` is
    maker's plumbing, run against the plan, so it records the step's orientation, never
    a sample's, and could not tell one sample from another. ``maker run``'s edit guard
    refuses a sample's edits until the step's is recorded (and a sample that changed no
    file is dropped already), so one that changed a file finds it; should it be missing all
    the same, the winner's refusal costs one gate attempt (a fresh session orients and
    hands off again), where dropping every sample would fail the vote.
    """
    problems: list[Problem] = []
    plan = store.load()
    target_step(plan, [sample], handoff.step, problems)
    check_output(plan, sample, handoff.status, handoff.output, problems)
    red_flags(data.get("output"), text, problems)
    check_sweep(plan, sample, handoff.edge_cases, problems)
    check_sweep_record(sample, handoff.status, handoff.sweep, handoff.edge_cases,
                       handoff.proposals, problems)
    check_measured(store, sample, data.get("files_changed"), problems, handoff.status)
    return problems
