"""One step file, ``plans/steps/NN-<slug>.md``: YAML front matter and a Markdown body.

Humans may edit it: reading re-validates and names the file, the field and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maker.core.statuses import STEP_STATUSES
from maker.errors import PlanFileError, Problem
from maker.planner.parser import parse_step, structure_problems, unknown_key_problems
from maker.store.frontmatter import read_front_matter, render_front_matter
from maker.store.records import StepRecord

__all__ = ["ATTEMPT_META", "EDGE_CASES", "HELD_VOTE", "HISTORY_META", "REVISION_META", "RUN_META",
           "STEP_KEYS", "read_step", "render_step"]

STEP_KEYS = ("step", "title", "task_type", "status", "depends_on", "input_variables",
             "output_variable", "output_schema", "primary_tools", "fallback_tools", "next",
             "model", "votes", "writes", "component", "probe")
# A code step's undecided vote, held for a person (``maker.executor.state.held_vote``).
HELD_VOTE = "vote_undecided"
# What maker records in a step's front matter as the step runs. One attempt's record is
# cleared when the step starts again or is reset (``awaiting_approval`` is an older
# spelling of the awaiting-approval status, cleared with the attempt it belonged to);
# the step's history (how often it was reset, what a person sent back) is kept.
ATTEMPT_META = ("started_at", "started_by", "forced", "forced_over", "finished_at",
                "failed_at", "reasons", "handoff_accepted_at", "approved_at", "approved_by",
                "approval_seal", "awaiting_approval", "orient", "deviation", "review_skipped",
                # a step run beside others (maker.executor.parallel.waves, .land)
                "worktree", "worktree_base", "worktree_ready", "landed_at", "landed_files",
                "land_attempts", "land_failure",
                HELD_VOTE)
# (``rejected_by``: who sent the newest revision notes back; a rejection with notes runs
# the step again at once, and the new attempt keeps saying who asked for it.)
HISTORY_META = ("resets", "revision_notes", "revised_task", "rejected_by", "unlanded")
# The step's run across its revisions (a rejection sends it back with these kept): the
# tree its changes are measured from, and how often review findings sent it back. A
# reset (``maker step reset``) clears them.
REVISION_META = ("measured_from", "review_rounds")
RUN_META = frozenset(ATTEMPT_META + HISTORY_META + REVISION_META)
EDGE_CASES = "edge_cases"  # the body's "## Edge cases" section (StepRecord.edge_cases)
_EDGE_HEADING = "Edge cases"
_SECTIONS = {"Task": "task_description",
             "Primary tool instructions": "primary_tool_instructions",
             "Fallback tool instructions": "fallback_tool_instructions"}


def read_step(path: Path) -> StepRecord:
    """The step in ``path``, validated; PlanFileError names every problem of the file."""
    meta, body = read_front_matter(path)
    data = {k: meta.get(k) for k in STEP_KEYS}
    data.update(_parse_body(body))
    edge_cases = str(data.pop(EDGE_CASES) or "")
    raw = dict(data, next_step_sequence_number=data.pop("next"))
    raw.pop("status")
    problems: list[Problem] = structure_problems({"reasoning": "-", "plan": [raw]})
    status = meta.get("status")
    if status not in STEP_STATUSES:
        problems.append(Problem("status", f"{status!r} is not a status",
                                fix="use one of " + ", ".join(STEP_STATUSES)))
    deps = meta.get("depends_on")
    if deps is None:
        deps = []
    if not raw.get("task_description"):
        problems = [p for p in problems if p.field != "task_description"]
        problems.append(Problem("body", "no task description",
                                fix="write the task under a `## Task` heading"))
    # A typo would silently drop the field it meant.
    problems += unknown_key_problems([k for k in meta if k not in RUN_META], STEP_KEYS,
                                     typos_only=True, cutoff=0.8)
    resets = meta.get("resets")
    if resets is not None and (type(resets) is not int or resets < 0):
        problems.append(Problem("resets", f"must be a count (0, 1, 2...), got {resets!r}",
                                fix="write the number of times the step was reset, or "
                                    "remove the line"))
    if problems:
        fields = "; ".join(_strip_step(p) for p in problems)
        raise PlanFileError(path, fields, problems=[
            PlanFileError(path, p.message, p.field, p.fix) for p in problems])
    raw["depends_on"] = deps
    spec = parse_step(raw)
    extra = {k: v for k, v in meta.items() if k not in STEP_KEYS}
    return StepRecord(spec, str(status), list(deps), path, extra, edge_cases)


def _strip_step(p: Problem) -> str:
    text = str(p)
    return text.split(": ", 1)[1] if text.startswith("step ") else text


def render_step(record: StepRecord) -> str:
    """The text of ``record``'s step file."""
    s = record.spec
    meta: dict[str, Any] = {
        "step": s.step, "title": s.title, "task_type": s.task_type, "status": record.status,
        "depends_on": list(record.depends_on), "input_variables": list(s.input_variables),
        "output_variable": s.output_variable, "output_schema": s.output_schema,
        "primary_tools": list(s.primary_tools), "fallback_tools": list(s.fallback_tools),
        "next": s.next_step_sequence_number,
    }
    if s.model:
        meta["model"] = s.model
    if s.votes:
        meta["votes"] = s.votes
    if s.writes is not None:
        meta["writes"] = list(s.writes)
    if s.component is not None:
        meta["component"] = s.component
    if s.probe:
        meta["probe"] = True
    meta.update(record.meta)
    parts = [f"# Step {s.step}: {s.title}", "", "## Task", "", s.task_description.strip()]
    for heading, name in list(_SECTIONS.items())[1:]:
        text = getattr(s, name).strip()
        if text:
            parts += ["", f"## {heading}", "", text]
    if record.edge_cases.strip():
        parts += ["", f"## {_EDGE_HEADING}", "", record.edge_cases.strip()]
    return render_front_matter(meta, "\n".join(parts))


def _parse_body(body: str) -> dict[str, str]:
    """The step's texts from its Markdown body (``## Task`` and the instruction sections)."""
    out = {name: "" for name in _SECTIONS.values()}
    out[EDGE_CASES] = ""
    current: str | None = None
    chunks: dict[str, list[str]] = {}
    preamble: list[str] = []
    for line in body.split("\n"):
        heading = line[3:].strip() if line.startswith("## ") else None
        if heading == _EDGE_HEADING:
            current = EDGE_CASES
            chunks[current] = []
            continue
        if heading in _SECTIONS:
            current = _SECTIONS[heading]
            chunks[current] = []
            continue
        if current is None:
            if not line.startswith("# "):
                preamble.append(line)
        else:
            chunks[current].append(line)
    for name, lines in chunks.items():
        out[name] = "\n".join(lines).strip()
    if "task_description" not in chunks:  # no `## Task` heading: the body is the task
        out["task_description"] = "\n".join(preamble).strip()
    return out
