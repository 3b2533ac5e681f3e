"""A handoff against the plan: the step in progress, its output schema, where it leads."""

from __future__ import annotations

from typing import Any

import yaml

from maker.core.agent_context import kind_of
from maker.core.flow import decides_next
from maker.core.models import END, AgentResult, schema_keys
from maker.core.text import shown_value
from maker.errors import Problem
from maker.handoff.fields import is_int
from maker.store.records import StepRecord, StoredPlan
from maker.tools.registry import only_read
from maker.yaml_cleaner.frozen import thaw

__all__ = ["ORIENT_META", "check_oriented", "check_output", "red_flags", "target_step"]

ORIENT_META = "orient"  # the step's front matter: its recorded orientation (maker orient)


def target_step(plan: StoredPlan, running: list[StepRecord], step: int | None,
            problems: list[Problem]) -> StepRecord | None:
    """The step this handoff must be for: the one in progress."""
    if not running:
        found = plan.find(step) if isinstance(step, int) else None
        named = f"step {step} is {found.status}" if found is not None else "none is"
        problems.append(Problem("step", f"no step is in progress ({named}), so no handoff "
                                "is expected", step,
                                fix="start the step with `maker step start N` and run it "
                                    "before handing off"))
        return None
    record = running[0]
    this = [r for r in running if r.number == step]
    if this:  # (steps run beside others: the one this handoff names)
        return this[0]
    if step is not None and step != record.number:
        where = "" if isinstance(step, int) and plan.find(step) is not None \
            else f" (the plan has no step {step})"
        problems.append(Problem("step", f"this handoff says step {step}{where}, but the step "
                                f"in progress is step {record.number} ({record.title})",
                                fix=f"write `step: {record.number}` if this is its handoff"))
    return record


def check_output(plan: StoredPlan, record: StepRecord, status: Any,
                 output: dict[str, Any], problems: list[Problem]) -> None:
    if status != "complete":
        return  # a blocked or failed step may not have produced its output
    spec = record.spec
    keys = schema_keys(spec.output_schema)
    missing = [k for k in keys or [] if k not in output]
    if missing:
        listed = ", ".join(f"`{k}`" for k in missing)
        problems.append(Problem(
            "output", f"missing {listed} (required by the step's output_schema "
            f"{_schema_text(spec.output_schema)})", record.number,
            fix="add " + ", ".join(f"`{k}: ...`" for k in missing) + " under `output:`; "
                "extra keys are allowed"))
    if not decides_next(spec):
        return
    # Only a step that has not run yet: completed steps stay complete, so a jump back
    # to one would end the plan with its rest silently skipped.
    choices = sorted(r.number for r in plan.steps
                     if r.number != record.number and r.status == "pending")
    listed = ", ".join(map(str, choices[:30])) + (", …" if len(choices) > 30 else "")
    fix = (f"set `next_step:` under `output:` to the step the plan should run next: one of "
           f"{listed}, or -1 to end the plan" if choices
           else "set `next_step: -1` under `output:` (the plan has no other step)")
    if "next_step" not in output:
        if "next_step" not in missing:
            problems.append(Problem("output.next_step", "missing: this conditional step "
                                    "decides which step runs next", record.number, fix=fix))
        return
    chosen = output["next_step"]
    if not is_int(chosen):
        problems.append(Problem("output.next_step", f"must be a step number, got "
                                f"{kind_of(chosen)} {shown_value(chosen)}", record.number, fix=fix))
    elif chosen != END and chosen not in choices:
        numbers = {r.number: r.status for r in plan.steps}
        why = ("this step itself" if chosen == record.number
               else f"step {chosen}, which is {numbers[chosen]}: only a step that has not "
                    "run yet can come next" if chosen in numbers
               else "not a step of the plan")
        problems.append(Problem("output.next_step", f"{chosen} is {why}", record.number,
                                fix=fix))


def _schema_text(schema: Any) -> str:
    text = schema if isinstance(schema, str) else yaml.safe_dump(
        thaw(schema), default_flow_style=True, sort_keys=False).strip()
    return text if len(text) <= 200 else text[:200] + "…"


def red_flags(output: Any, text: str | bytes, problems: list[Problem]) -> None:
    from maker.red_flag.red_flagger import RedFlagger

    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    # A non-mapping output is already reported, with its fix, as an `output` problem.
    for reason in RedFlagger().check_all(AgentResult(output=output if isinstance(output, dict)
                                                     else {}, raw_response=raw)):
        problems.append(Problem("handoff", f"red flag: {reason}",
                                fix="send the handoff YAML only, short and to the point"))


def check_oriented(record: StepRecord, problems: list[Problem]) -> None:
    """A complete handoff of a step whose tools can write needs the step's orientation
    recorded first (seed 004, docs/architecture.md#the-seeds: orient comes before implement,
    always): an executor that
    skipped it did not look whether the plan still fits."""
    if only_read(record.spec.tools) or isinstance(record.meta.get(ORIENT_META), dict):
        return
    n = record.number
    problems.append(Problem(
        "status", f"step {n} is handed off complete, but its orientation was never recorded",
        n, fix=f"run `maker orient {n} none` (or `minor --what \"...\"`, or `major --what "
               f"\"...\" --revised \"...\"`) after reading what the step names, then do the "
               "step and hand off again"))
