"""The brief an isolated step executor receives: everything it needs, and nothing that grows.

A brief holds the step itself (task, tools, output schema, what comes next), the
whole outputs of the steps it references (seed 000's ContextBuilder,
docs/architecture.md#the-seeds), the persistent
context of seed 002 (the previous agent's ``for_next_agent`` and the newest facts of
``NOTES.md``) and the exact handoff YAML to send back as the final message.

Its size does not grow with the plan: the persistent context is cut to a budget,
newest facts first, with a line saying how many were left out and where to read them.
A step's own inputs (task, referenced outputs) are the plan's to size; only outputs
over a generous cap are replaced by a pointer to the handoff file that holds them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.flow import decides_next, next_label
from maker.core.models import PlanStep, step_refs
from maker.core.text import clip, strip_controls
from maker.executor.launch.context_builder import ContextBuilder, referenced_outputs
from maker.executor.launch.handoff_template import handoff_section
from maker.executor.launch.previous_work import (
    BriefBudget,
    context_section,
    cut,
    shown_path,
)
from maker.executor.protocol.orient import orient_section
from maker.executor.rules.step_rules import settings
from maker.executor.rules.vote_rules import side_effect_free
from maker.executor.votes.runs import executor_attempts
from maker.planner.report_names import report_name_note
from maker.store.workspace import worktree_of
from maker.verify.detect import ENV_VARS, KINDS, detect_commands, off_text, turned_off
from maker.yaml_cleaner.dump import dump_yaml

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StoredPlan

__all__ = ["BRIEF_TAG", "build_brief", "step_sections"]

BRIEF_TAG = "maker-brief"
"""The tag around the brief that maker puts in a step executor's launch prompt."""


def build_brief(store: PlanStore, plan: StoredPlan | None, step: int, *,
                budget: BriefBudget | None = None, orient: bool = True) -> str:
    """The Markdown brief for the executor of step ``step``.

    ``plan`` is the loaded plan (None: load it). ``orient``: with the orient section
    (every executor's: the plugin's and the engine's sessions orient alike). Raises
    StepNotFoundError for a step the plan lacks, PlanFileError for plan files that cannot
    be read.
    """
    budget = budget or BriefBudget()
    plan = plan if plan is not None else store.load()
    record = plan.get(step)
    spec = record.spec
    project = store.project
    parts = [
        f"# Step {spec.step}: {spec.title}",
        "You are the executor of ONE step of a maker plan, in a fresh context: everything "
        "you need is in this brief. Do this step only, then answer with its handoff.",
    ]
    if plan.task.strip():
        parts.append("Plan task: " + clip(plan.task.strip(), budget.task_chars,
                                          str(store.overview_path)))
    parts.append(_step_section(spec, record.depends_on))
    apart = worktree_of(store, record)
    if apart is not None:  # (a step run beside others)
        parts.append(_worktree_section(spec.step, apart, project))
    if record.edge_cases.strip():
        parts.append("## Edge cases (earlier steps' sweeps found these: handle them)\n\n"
                     + clip(record.edge_cases.strip(), budget.task_chars, str(record.path)))
    notes = record.meta.get("revision_notes") or []
    revisions = [str(n) for n in (notes if isinstance(notes, list) else [notes])][-3:]
    if revisions:
        parts.append("## An earlier attempt was sent back\n\nBy the user, or by the "
                     "independent reviewer's findings. Address these revision notes "
                     "(newest last):\n\n"
                     + "\n".join(f"- {cut(n, budget.fact_chars)}" for n in revisions))
    if record.status == "in-progress" and executor_attempts(store, spec.step) > 1:
        parts.append("## An earlier attempt was interrupted\n\nAn earlier executor of this "
                     "step did not finish (a crash, or it returned without an accepted "
                     "handoff). The working tree may hold its edits: check `git status` and "
                     "`git diff` first, keep what is right, redo or undo what is not, and "
                     "list every file you leave changed in `files_changed`.")
    if orient and not side_effect_free(spec):  # (a step that only reads holds nothing back)
        parts.append(orient_section(store, plan, spec.step))
    inputs = _inputs_section(store, plan, spec, project, budget)
    if inputs:
        parts.append(inputs)
    parts.append(context_section(store, plan, spec.step, project, budget))
    parts.append(_verify_section(spec.step, project,
                                 settings(store.root).max_fix_attempts))
    parts.append(handoff_section(spec))
    # Handoffs, notes and plans are others' words: no NUL or terminal control reaches
    # the executor; everything else stays verbatim.
    return strip_controls("\n\n".join(p.rstrip() for p in parts)) + "\n"


def _worktree_section(n: int, tree: Path, project: Path) -> str:
    return (f"## Where you work\n\nOther steps run at the same time as this one, so this "
            f"step has a git worktree of its own: {tree}\n\nIt holds the project as it is "
            f"now. Do all your work there: maker runs your Bash commands in it, and you "
            f"write files under it (the same relative paths as in the project). The main "
            f"checkout ({project}) is not yours to change, and maker refuses it to you. "
            f"Once `maker verify --step {n}` passes there, hand off: when maker accepts "
            "your handoff it brings your change into the main checkout, file by file, and "
            "verifies it there. If it says your change could not land, do what it says (a "
            f"new worktree on the new base, or `maker land {n}` when the checks take long), "
            "then hand off again.")


# -- the step ------------------------------------------------------------------------


def step_sections(spec: PlanStep) -> tuple[str, str]:
    """The parts of a brief that need only the step: what to do (with its tools and
    output schema) and the handoff to answer with. The headless runner's prompt uses
    them around its own inputs."""
    return _step_section(spec, spec.depends_on or []), handoff_section(spec)


def _step_section(spec: PlanStep, depends_on: list[int]) -> str:
    lines = ["## Your step", "",
             f"- step: {spec.step}",
             f"- type: {spec.task_type}"]
    if spec.component:
        lines.append(f"- component: {spec.component}")
    if depends_on:
        lines.append("- depends on: " + ", ".join(f"step {n}" for n in depends_on))
    lines.append(f"- next: {_next_text(spec)}")
    lines += ["", "### Task", "", spec.task_description.strip()]
    lines += ["", "### Tools", ""]
    if spec.primary_tools:
        lines.append("Primary: " + ", ".join(spec.primary_tools))
        if spec.primary_tool_instructions.strip():
            lines += ["", spec.primary_tool_instructions.strip()]
    if spec.fallback_tools:
        lines += ["", "Fallback (when the primary tools cannot do it): "
                  + ", ".join(spec.fallback_tools)]
        if spec.fallback_tool_instructions.strip():
            lines += ["", spec.fallback_tool_instructions.strip()]
    if {"Grep", "Glob", "LS"} & set(spec.tools):
        lines += ["", "If you have no Grep, Glob or LS tool, search with read-only Bash "
                  "commands instead (rg, grep, find, ls, cat, git log/diff): maker allows "
                  "those for this step, and nothing else through Bash unless Bash is listed."]
    report = report_name_note(spec)
    if report:
        lines += ["", report]
    lines += ["", "AskUserQuestion is always allowed when only the user can decide."]
    lines += ["", f"### Output schema (`output`, which becomes `{spec.output_variable}`)", "",
              "```yaml", _schema_text(spec.output_schema), "```"]
    return "\n".join(lines)


def _next_text(spec: PlanStep) -> str:
    if decides_next(spec):
        return ("you decide: this is a conditional step; put the step to run next in "
                "`output.next_step` (a step number, or -1 to end the plan)")
    return next_label(spec.next_step_sequence_number, step="step {n}",
                      end="the plan ends after this step")


def _schema_text(schema: Any) -> str:
    if isinstance(schema, str):
        return schema.strip()
    return dump_yaml(schema).strip()


# -- referenced outputs ---------------------------------------------------------------


def _inputs_section(store: PlanStore, plan: StoredPlan, spec: PlanStep, project: Path,
                    budget: BriefBudget) -> str:
    names = referenced_outputs(spec)
    if not names:
        return ""
    refs = [n for n in step_refs(spec.input_variables) if n != spec.step]
    outputs = store.outputs(only=refs, plan=plan) if refs else {}
    present = [n for n in names if n in outputs]
    lines = ["## Inputs: the outputs of earlier steps", "",
             "Your input variables: " + ", ".join(f"`{v}`" for v in spec.input_variables)
             + ". The whole output of each step they name:"]
    missing = [n for n in names if n not in outputs]
    included: list[str] = []
    too_big: list[str] = []
    used = 0
    for name in present:
        text = ContextBuilder().build(replace(spec, input_variables=[name]), outputs)
        if used + len(text) > budget.outputs_chars:
            too_big.append(name)
        else:
            included.append(name)
            used += len(text)
    if included:
        context = ContextBuilder().build(replace(spec, input_variables=included), outputs)
        lines += ["", "```yaml", context.rstrip(), "```"]
    for name in too_big:
        lines += ["", f"- `{name}` is too large to include here: read `output` in "
                  f"{_where_output(store, plan, name, project)}."]
    for name in missing:
        lines += ["", f"- `{name}` is NOT available: no accepted, complete handoff produced "
                  "it. If you cannot do the step without it, hand off with status `blocked` "
                  "and say so in `blockers`."]
    return "\n".join(lines)


def _where_output(store: PlanStore, plan: StoredPlan, name: str, project: Path) -> str:
    for r in plan.steps:
        if r.spec.output_variable == name:
            return shown_path(store.handoffs_dir / r.path.name, project)
    return shown_path(store.handoffs_dir, project)


# -- verification and the handoff -------------------------------------------------------


def _verify_section(step: int, project: Path, fixes: int) -> str:
    head = ["## Before you hand off: verify", ""]
    commands = detect_commands(project)
    off = turned_off()
    unset = [ENV_VARS[k] for k in KINDS if k not in off]
    not_set = ("none detected, and " + ", ".join(unset)
               + (" are" if len(unset) > 1 else " is") + " not set") if unset else ""
    why = "; ".join(filter(None, [off_text(off), not_set]))
    if not commands:
        return "\n".join(head + [
            f"No verification command is known for this project ({why}): `evidence` may "
            "stay empty."])
    kinds = ", ".join(f"{c.kind} (`{c.command}`)" for c in commands)
    if off:
        kinds += f" ({off_text(off)})"
    return "\n".join(head + [
        f"Before a `complete` handoff, run `maker verify --step {step}`: it runs {kinds} "
        "and records the result. Fix what fails and run it again until it passes: the "
        "gate rejects a complete handoff without a passing run recorded after this step "
        "started. Copy the commands it ran and their exit codes into `evidence`.",
        "",
        f"Your fix budget (max_fix_attempts: {fixes}): after each of the first {fixes} "
        f"failing runs in this run of the step you may fix and run it again; failing run "
        f"{fixes + 1} spends the budget. When `maker verify` says STOP, do not "
        "fix further; hand off at once with `status: failed`, what still fails in "
        "`blockers` and what you tried in `summary` (maker refuses a `complete` handoff "
        "then)."])
