"""The handoff gate: a step executor's final answer, checked by code, then persisted.

``check_handoff`` turns raw model text into a ``Handoff`` and lists every problem
at once, each with its fix, written for the model that has to correct itself.
``accept_handoff`` checks, then writes ``plans/handoffs/NN-<slug>.md``, moves the
step's status, adds the new facts to NOTES.md, clears the in-progress marker and
refreshes PLAN.md — or raises ``HandoffRejectedError`` with every problem.

What is checked:

- the fields of DESIGN.md with their types (``step``, ``status``, ``output``,
  ``summary`` required; the lists, ``for_next_agent`` and ``evidence`` optional);
- ``step`` is the step in progress;
- a complete step's ``output`` has every top-level key of its ``output_schema``;
- a complete conditional step's ``output.next_step`` is -1 or another step of the plan;
- a blocked step names its blockers;
- when the project has verification commands, a complete step needs a recorded
  ``maker verify --step N`` run that passed after the step started, sealed by maker
  (``maker.store.seal``): a handoff cannot just claim ``exit_code: 0``, and a run
  file written by hand is refused;
- the red flags of ``maker.red_flag`` (an answer far too long, …).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from maker.core.models import (
    END,
    HANDOFF_STATUSES,
    RUNTIME_DECIDED,
    AgentResult,
    Evidence,
    Handoff,
    schema_keys,
    step_refs,
)
from maker.errors import HandoffRejectedError, PlanFileError, Problem, StepNotFoundError
from maker.errors import YAMLCleanError as _YAMLCleanError
from maker.executor.lifecycle import in_progress, set_status
from maker.executor.schedule import next_steps
from maker.store.notes import add_notes
from maker.yaml_cleaner.cleaner import YAMLCleaner

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore, StepRecord, StoredPlan

__all__ = ["AcceptResult", "accept_handoff", "canonical_sha256", "check_handoff",
           "parse_handoff"]

_LIST_FIELDS = ("discoveries", "decisions", "blockers", "files_changed")
_FORMAT_HINT = ("answer with the handoff YAML only: `step:`, `status:`, `output:`, `summary:`, "
                "`discoveries:`, `decisions:`, `blockers:`, `for_next_agent:`, "
                "`files_changed:`, `evidence:`")


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


def canonical_sha256(data: Any) -> str:
    """sha256 of ``data`` as canonical YAML (sorted keys): what a later step saw."""
    text = yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- reading the fields ---------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_item(value: Any) -> str | None:
    """A list item as text, or None when it is not text-like.

    ``- Found: the cache is per user`` is read by YAML as a one-key mapping: that is
    what the model meant as text, so it is turned back into ``key: value``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict) and len(value) == 1:
        (k, v), = value.items()
        if isinstance(k, str) and (v is None or isinstance(v, (str, int, float))):
            return f"{k}: {v}" if v is not None else f"{k}:"
    return None


def _text_list(data: dict[str, Any], name: str, problems: list[Problem]) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(Problem(name, f"must be a list of texts, got {_kind(value)}",
                                fix=f"write `{name}:` then one `- text` line per item "
                                    f"(or `{name}: []` when there are none)"))
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        text = _text_item(item)
        if text is None:
            problems.append(Problem(f"{name}[{i}]", f"must be a text, got {_kind(item)}",
                                    fix="write the item as one line of text; put it in "
                                        "quotes if it contains `: ` or starts with `{`, `[`"))
        elif text.strip():
            out.append(text)
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a true/false value"
    return {dict: "a mapping", list: "a list", str: "a text", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _evidence(data: dict[str, Any], problems: list[Problem]) -> list[Evidence]:
    value = data.get("evidence")
    if value is None:
        return []
    fix = ("write `evidence:` as a list of `- command: <what ran>` / `exit_code: <number>` "
           "items, copied from `maker verify`")
    if not isinstance(value, list):
        problems.append(Problem("evidence", f"must be a list, got {_kind(value)}", fix=fix))
        return []
    out: list[Evidence] = []
    for i, item in enumerate(value):
        where = f"evidence[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(where, f"must be a mapping, got {_kind(item)}", fix=fix))
            continue
        command, code = item.get("command"), item.get("exit_code")
        ok = True
        if not isinstance(command, str) or not command.strip():
            problems.append(Problem(f"{where}.command", "missing or not a text", fix=fix))
            ok = False
        if not isinstance(code, int) or isinstance(code, bool):
            problems.append(Problem(f"{where}.exit_code", f"must be a whole number, got "
                                    f"{_kind(code)}", fix=fix))
            ok = False
        if not ok or not isinstance(code, int):
            continue
        kind = item.get("kind")
        duration = item.get("duration_s")
        tail = item.get("output_tail")
        out.append(Evidence(
            command=str(command), exit_code=int(code),
            kind=kind if isinstance(kind, str) else "",
            duration_s=float(duration) if isinstance(duration, (int, float))
            and not isinstance(duration, bool) else 0.0,
            output_tail=tail if isinstance(tail, str) else ""))
    return out


def parse_handoff(data: Any) -> tuple[Handoff | None, list[Problem]]:
    """The handoff in parsed YAML data, with every problem of its fields and types.

    Returns a Handoff only when every field could be read.
    """
    if not isinstance(data, dict):
        return None, [Problem("handoff", f"must be a YAML mapping, got {_kind(data)}",
                              fix=_FORMAT_HINT)]
    problems: list[Problem] = []
    step = data.get("step")
    if "step" not in data or step is None:
        problems.append(Problem("step", "missing",
                                fix="add `step: N`, the number of the step you ran"))
    elif not _is_int(step):
        problems.append(Problem("step", f"must be a whole number, got {_kind(step)} "
                                f"{step!r}", fix="write `step: N`, e.g. `step: 3`"))
    status = data.get("status")
    if status not in HANDOFF_STATUSES:
        got = "missing" if status is None else f"{status!r} is not a handoff status"
        problems.append(Problem("status", got, fix="use `status: complete` when the step is "
                                "done, `blocked` when something outside it stops you, "
                                "`failed` when it cannot be done"))
    output = data.get("output")
    if not isinstance(output, dict):
        got = "missing" if "output" not in data else f"must be a mapping, got {_kind(output)}"
        problems.append(Problem("output", got, fix="write `output:` then the keys of the "
                                "step's output_schema indented under it, as `key: value` "
                                "lines (`output: {}` when there is nothing to return)"))
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        got = "missing" if summary is None else ("empty" if isinstance(summary, str)
                                                 else f"must be a text, got {_kind(summary)}")
        problems.append(Problem("summary", got, fix="add `summary:` with what you did, in a "
                                "sentence or two"))
    for_next = data.get("for_next_agent")
    if for_next is not None and not isinstance(for_next, str):
        problems.append(Problem("for_next_agent", f"must be a text, got {_kind(for_next)}",
                                fix="write it as one text (use `for_next_agent: |` and "
                                    "indented lines for several lines)"))
    lists = {name: _text_list(data, name, problems) for name in _LIST_FIELDS}
    evidence = _evidence(data, problems)
    if problems:
        return None, problems
    assert isinstance(output, dict) and isinstance(summary, str) and isinstance(step, int)
    return Handoff(step=step, status=str(status), output=output, summary=summary,
                   for_next_agent=for_next or "", evidence=evidence, **lists), []


# -- checking against the plan ------------------------------------------------------


def check_handoff(store: PlanStore, text: str | bytes) -> tuple[Handoff | None, list[Problem]]:
    """``(handoff, problems)`` for a step executor's raw answer; never raises on bad text.

    The handoff is None when its fields cannot be read; otherwise it is returned
    even when it breaks a rule of the plan (those are in ``problems``). Errors of
    the plan itself (no plan, a broken step file) are raised as MakerError.
    """
    handoff, problems, _ = _check(store, text)
    return handoff, problems


def _check(store: PlanStore, text: str | bytes
           ) -> tuple[Handoff | None, list[Problem], dict[str, Any]]:
    """Like check_handoff, plus what accept needs (plan, record, run, was_repaired)."""
    extra: dict[str, Any] = {"was_repaired": False}
    try:
        data, extra["was_repaired"] = YAMLCleaner().clean_mapping(text)
    except _YAMLCleanError as exc:
        return None, [Problem("handoff", f"no handoff YAML found: {exc}",
                              fix=_FORMAT_HINT)], extra
    handoff, problems = parse_handoff(data)
    plan = store.load()
    extra["plan"] = plan
    running = in_progress(plan)
    step = data.get("step") if _is_int(data.get("step")) else None
    record = _target(plan, running, step, problems)
    if record is None:
        return handoff, problems, extra
    extra["record"] = record
    status = data.get("status")
    output = data.get("output")
    if isinstance(output, dict):
        _check_output(store, plan, record, status, output, problems)
    _red_flags(output, text, problems)
    if status == "blocked" and not data.get("blockers"):
        problems.append(Problem("blockers", "status is blocked but no blocker is named",
                                record.number, fix="list what stops the step under "
                                "`blockers:`, one `- text` per item"))
    if status == "complete":
        extra["run"] = _check_evidence(store, record, problems)
    return handoff, problems, extra


def _target(plan: StoredPlan, running: list[StepRecord], step: int | None,
            problems: list[Problem]) -> StepRecord | None:
    """The step this handoff must be for: the one in progress."""
    numbers = {r.number for r in plan.steps}
    if not running:
        named = f"step {step} is {plan.get(step).status}" if step in numbers else "none is"
        problems.append(Problem("step", f"no step is in progress ({named}), so no handoff "
                                "is expected", step,
                                fix="start the step with `maker step start N` and run it "
                                    "before handing off"))
        return None
    record = running[0]
    if step is not None and step != record.number:
        where = "" if step in numbers else f" (the plan has no step {step})"
        problems.append(Problem("step", f"this handoff says step {step}{where}, but the step "
                                f"in progress is step {record.number} ({record.title})",
                                fix=f"write `step: {record.number}` if this is its handoff"))
    return record


def _check_output(store: PlanStore, plan: StoredPlan, record: StepRecord, status: Any,
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
    if not (spec.is_conditional or spec.next_step_sequence_number == RUNTIME_DECIDED):
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
    if not _is_int(chosen):
        problems.append(Problem("output.next_step", f"must be a step number, got "
                                f"{_kind(chosen)} {chosen!r}", record.number, fix=fix))
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
        schema, default_flow_style=True, sort_keys=False).strip()
    return text if len(text) <= 200 else text[:200] + "…"


def _red_flags(output: Any, text: str | bytes, problems: list[Problem]) -> None:
    from maker.red_flag.red_flagger import RedFlagger

    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    # A non-mapping output is already reported, with its fix, as an `output` problem.
    for reason in RedFlagger().check_all(AgentResult(output=output if isinstance(output, dict)
                                                     else {}, raw_response=raw)):
        problems.append(Problem("handoff", f"red flag: {reason}",
                                fix="send the handoff YAML only, short and to the point"))


def _project_dir(store: PlanStore) -> Path:
    """Where verification runs: the plans directory's parent (as ``maker verify``)."""
    return store.root.parent


def _check_evidence(store: PlanStore, record: StepRecord, problems: list[Problem]) -> Any:
    """The recorded verification run behind a complete step, adding problems if lacking."""
    from maker.verify.runner import detect_commands, evidence_path, recorded_evidence

    if not detect_commands(_project_dir(store)):
        return None  # no verification command is known: none can be required
    n = record.number
    rerun = f"run `maker verify --step {n}`; once it passes, send the handoff again"
    try:
        run = recorded_evidence(store, n)
    except PlanFileError as exc:
        problems.append(Problem("evidence", f"the recorded verification cannot be read: {exc}",
                                n, fix=rerun))
        return None
    if run is None:
        problems.append(Problem("evidence", "no verification run is recorded for this step: "
                                "a complete step needs one that passed", n, fix=rerun))
        return None
    if not run.sealed:
        problems.append(Problem("evidence", f"the recorded verification in "
                                f"{evidence_path(store, n)} was not written by `maker verify` "
                                "(its seal is missing or wrong), so it is not evidence", n,
                                fix=f"run `maker verify --step {n}` yourself; never write or "
                                    "edit maker's files. Once it passes, send the handoff again"))
        return None
    if os.path.realpath(run.project_dir) != os.path.realpath(_project_dir(store)):
        problems.append(Problem("evidence", f"the recorded verification ran in "
                                f"{run.project_dir}, not in this project", n, fix=rerun))
        return None
    started = _when(record.meta.get("started_at"))
    finished = _when(run.finished_at)
    if started is not None and (finished is None or finished <= started):
        problems.append(Problem("evidence", f"the recorded verification finished at "
                                f"{run.finished_at}, before this step started "
                                f"({record.meta.get('started_at')})", n, fix=rerun))
        return None
    expected = [c.command for c in detect_commands(_project_dir(store))]
    ran = [c.command for c in run.commands]
    if run.passed and ran != expected:
        problems.append(Problem(
            "evidence", f"the recorded verification ran {ran}, but the project's commands "
            f"are {expected}", n,
            fix=f"run `maker verify --step {n}` as it is, without overriding FORMAT_CMD, "
                "LINT_CMD, BUILD_CMD or TEST_CMD"))
        return None
    if not run.passed:
        bad = run.failed_command
        what = (f"`{bad.command}` exited with {bad.exit_code}" if bad is not None
                else f"its status is {run.status}")
        tail = (bad.output_tail or "").strip()[-600:] if bad is not None else ""
        problems.append(Problem("evidence", f"the recorded verification did not pass: {what}"
                                + (f"; its output ends with:\n{tail}" if tail else ""), n,
                                fix="fix what fails, then " + rerun))
        return None
    return run


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


# -- accepting --------------------------------------------------------------------


def accept_handoff(store: PlanStore, text: str | bytes) -> AcceptResult:
    """Check a handoff and persist it; returns the step's new status and what is next.

    Writes ``plans/handoffs/NN-<slug>.md`` (all handoff fields, ``accepted_at``, and
    ``inputs``: the sha256 of every step output this step read), moves the step to
    the handoff's status, adds new discoveries, decisions and blockers to NOTES.md,
    clears the in-progress marker and refreshes PLAN.md.
    Raises HandoffRejectedError with every problem.
    """
    from maker.executor.approval import hold_or_approve
    from maker.store.plan_store import utc_now

    with store.lock():
        handoff, problems, extra = _check(store, text)
        if handoff is None or problems:
            target = extra.get("record")
            raise HandoffRejectedError(problems, f"handoff for step {target.number}"
                                       if target is not None else "handoff")
        plan: StoredPlan = extra["plan"]
        record: StepRecord = extra["record"]
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
        run = extra.get("run")
        if run is not None:
            data["verification"] = {
                "finished_at": run.finished_at, "status": run.status,
                "commands": [{"command": e.command, "exit_code": e.exit_code}
                             for e in run.commands]}
        if extra.get("was_repaired"):
            data["repaired"] = True
        path = store.write_handoff(handoff.step, data, _body(store, record, handoff, run))
        added = add_notes(store.notes_path, {"discoveries": handoff.discoveries,
                                             "decisions": handoff.decisions,
                                             "blockers": handoff.blockers},
                          step=handoff.step, archive_dir=store.archive_dir,
                          attempt=int(record.meta.get("resets") or 0) + 1,
                          plan=plan.created_at or None)
        if handoff.status == "complete":
            status = hold_or_approve(store, plan, record, handoff.files_changed)
            upcoming = [(r.number, r.title) for r in next_steps(plan, store)] \
                if status == "complete" else []
            return AcceptResult(handoff.step, status, path, added, upcoming,
                                bool(extra.get("was_repaired")))
        meta: dict[str, Any] = {"finished_at": accepted}
        if handoff.status != "complete":
            meta["reasons"] = handoff.blockers or [handoff.summary.strip()]
        set_status(store, handoff.step, handoff.status, meta, plan=plan)
        upcoming = [(r.number, r.title) for r in next_steps(plan, store)]
        return AcceptResult(handoff.step, handoff.status, path, added, upcoming,
                            bool(extra.get("was_repaired")))


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


def _body(store: PlanStore, record: StepRecord, handoff: Handoff, run: Any) -> str:
    parts = [f"# Step {record.number} handoff: {record.title}", "",
             f"**Status:** {handoff.status}", "", "## Summary", "", handoff.summary.strip()]
    if handoff.for_next_agent.strip():
        parts += ["", "## For the next agent", "", handoff.for_next_agent.strip()]
    for title, items in (("Discoveries", handoff.discoveries), ("Decisions", handoff.decisions),
                         ("Blockers", handoff.blockers),
                         ("Files changed", handoff.files_changed)):
        if items:
            parts += ["", f"## {title}", ""] + [f"- {i.strip()}" for i in items]
    parts += ["", "## Verification run by maker", "", *_verification_lines(store, handoff, run)]
    if handoff.evidence:
        parts += ["", "## Claimed by the executor (not verified)", ""] + [
            f"- `{e.command}` → exit {e.exit_code}" for e in handoff.evidence]
    return "\n".join(parts)


def _verification_lines(store: PlanStore, handoff: Handoff, run: Any) -> list[str]:
    """What ``maker verify`` ran for this handoff (its sealed run): only this is evidence."""
    from maker.verify.runner import detect_commands

    if run is not None:
        return [f"- `{e.command}` → exit {e.exit_code}" for e in run.commands] + [
            "", f"Recorded by `maker verify` at {run.finished_at}: {run.status}."]
    if not detect_commands(_project_dir(store)):
        return ["none: no verification command is known for this project"]
    return [f"none: the step ended {handoff.status}, and only a complete step needs a "
            "passing `maker verify` run"]
