"""The plan on disk: ``plans/PLAN.md``, ``plans/steps/NN-<slug>.md``, handoffs, state.

Step files are the source of truth and humans may edit them: every read
re-validates and names the file, the field and the fix. PLAN.md carries the task
and reasoning in its front matter and a rendered overview (table + Mermaid graph)
in its body. A new plan is staged in full and then moved into place, and whatever
plan was there before is archived under ``plans/archive/`` first: nothing is lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from maker.core.bounded import read_regular_file, read_text_file
from maker.core.models import RUNTIME_DECIDED, STEP_STATUSES, Plan, PlanStep, step_refs
from maker.errors import (
    MakerError,
    PlanExistsError,
    PlanFileError,
    PlanNotFoundError,
    Problem,
    StepNotFoundError,
)
from maker.planner.parser import parse_step, structure_problems, unknown_key_problems
from maker.store.atomic import atomic_write, plan_lock
from maker.store.frontmatter import read_front_matter, render_front_matter
from maker.store.journal import TXN_DIR, journaled_move, journaled_remove
from maker.store.overview import render_overview
from maker.store.slug import slugify
from maker.store.step_cache import StepCache, T

__all__ = ["PlanStore", "StepRecord", "StoredPlan", "approval_sealed", "file_stamp",
           "resolve_dependencies", "seal_approval", "utc_now"]

# What an approval's seal covers: who approved which step of which plan, and when.
_APPROVAL = ("approved_by", "approved_at")
_STEP_KEYS = ("step", "title", "task_type", "status", "depends_on", "input_variables",
              "output_variable", "output_schema", "primary_tools", "fallback_tools", "next",
              "model")
# What maker itself records in a step's front matter as the step runs.
_RUN_META = frozenset({"started_at", "started_by", "forced", "forced_over", "finished_at",
                       "failed_at", "reasons", "resets", "awaiting_approval",
                       "handoff_accepted_at", "approved_at", "approved_by", "revision_notes",
                       "rejected_by", "approval_seal"})
_SECTIONS = {"Task": "task_description",
             "Primary tool instructions": "primary_tool_instructions",
             "Fallback tool instructions": "fallback_tool_instructions"}


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def file_stamp(when: str) -> str:
    """A ``utc_now()`` time as it appears in file names (no ``:`` or ``.``)."""
    return when.replace(":", "").replace(".", "-")


@dataclass
class StepRecord:
    """A step as stored: its spec, its status, its resolved dependencies, its file."""

    spec: PlanStep
    status: str
    depends_on: list[int]
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def number(self) -> int:
        return self.spec.step

    @property
    def title(self) -> str:
        return self.spec.title


@dataclass
class StoredPlan:
    task: str
    reasoning: str
    created_at: str
    steps: list[StepRecord]

    _index: dict[int, int] = field(default_factory=dict, init=False, repr=False,
                                   compare=False)
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What readers derived from this plan object (``executor.schedule``'s schedule)."""

    def get(self, number: int) -> StepRecord:
        i = self._index.get(number)
        if i is None or i >= len(self.steps) or self.steps[i].number != number:
            # Built on first use, again when ``steps`` changed under it: O(1) per lookup
            # (a 1,000-step plan is looked up thousands of times per step).
            self._index = {r.number: j for j, r in enumerate(self.steps)}
            i = self._index.get(number)
        if i is not None:
            return self.steps[i]
        known = ", ".join(str(r.number) for r in self.steps[:20])
        raise StepNotFoundError(f"the plan has no step {number} (steps: {known}"
                                f"{', …' if len(self.steps) > 20 else ''})", number)

    def as_plan(self) -> Plan:
        return Plan(reasoning=self.reasoning, steps=[r.spec for r in self.steps], task=self.task)

    def as_raw(self) -> dict[str, Any]:
        """The plan as the planner's YAML data, so the linter checks hand edits too."""
        return {"task": self.task, "reasoning": self.reasoning,
                "plan": [dict(asdict(r.spec), depends_on=list(r.depends_on))
                         for r in self.steps]}


def resolve_dependencies(plan: Plan) -> Plan:
    """Fill each step's ``depends_on`` when the planner left it out.

    A step depends on the steps whose outputs it reads, on the step(s) whose
    ``next`` leads to it, and, when nothing leads to it (a branch target), on the
    nearest conditional step before it.
    """
    leads_to: dict[int, list[int]] = {}
    for s in plan.steps:
        leads_to.setdefault(s.next_step_sequence_number, []).append(s.step)
    first = min((s.step for s in plan.steps), default=0)
    out: list[PlanStep] = []
    last_conditional: int | None = None
    for s in sorted(plan.steps, key=lambda s: s.step):
        if s.depends_on is None:
            deps = [n for n in step_refs(s.input_variables) if n != s.step]
            preds = [p for p in leads_to.get(s.step, []) if p != s.step]
            if not preds and s.step != first and last_conditional is not None:
                preds = [last_conditional]
            deps += [p for p in preds if p not in deps and p < s.step]
            s = replace(s, depends_on=sorted(deps))
        out.append(s)
        if s.next_step_sequence_number == RUNTIME_DECIDED:
            last_conditional = s.step
    order = {s.step: i for i, s in enumerate(plan.steps)}
    out.sort(key=lambda s: order[s.step])
    return replace(plan, steps=out)


class PlanStore:
    """Reads and writes one plans directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.steps_dir = self.root / "steps"
        self.handoffs_dir = self.root / "handoffs"
        self.archive_dir = self.root / "archive"
        self.state_dir = self.root / ".maker"
        self.overview_path = self.root / "PLAN.md"
        self.notes_path = self.root / "NOTES.md"
        self.active_path = self.state_dir / "active.json"
        self.policy_path = self.state_dir / "policy.json"
        self.ledger_path = self.root / "ledger.jsonl"  # maker.engine.ledger: what runs cost
        self._cache = StepCache()  # parsed step files, while unchanged on disk

    # -- locking and presence -------------------------------------------------

    def lock(self, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        return plan_lock(self.root, timeout)

    def exists(self) -> bool:
        self.settle()
        return self.overview_path.exists() or self.steps_dir.is_dir()

    def settle(self) -> None:
        """Before reading: if a change was cut short by a crash, take the lock, which
        undoes it (or waits for the session that is making it to finish)."""
        if os.path.lexists(self.root / TXN_DIR):
            with self.lock():
                pass

    # -- writing a plan -------------------------------------------------------

    def write_plan(self, plan: Plan, task: str | None = None) -> StoredPlan:
        """Store a validated plan, archiving any plan already there. Returns it as stored."""
        plan = resolve_dependencies(plan)
        task = (task if task is not None else plan.task).strip()
        created = utc_now()
        width = max(2, len(str(max((s.step for s in plan.steps), default=0))))
        self.root.mkdir(parents=True, exist_ok=True)
        with self.lock():
            active = self.read_active()
            if active:
                n = active.get("step")
                raise PlanExistsError(
                    f"step {n} of the current plan is in progress; a new plan would strand "
                    f"it. Finish it (its handoff), or put it back with `maker step reset {n}`,"
                    " then write the new plan (the old one is archived, never lost).")
            # Staged inside the transaction's own folder: a crash before the moves
            # below leaves nothing that the next command would take for state.
            staging = self.root / TXN_DIR / "staging"
            (staging / "steps").mkdir(parents=True)
            records = []
            for spec in plan.steps:
                name = f"{spec.step:0{width}d}-{slugify(spec.title)}.md"
                record = StepRecord(spec, "pending", list(spec.depends_on or []),
                                    self.steps_dir / name)
                (staging / "steps" / name).write_text(_render_step(record), encoding="utf-8")
                records.append(record)
            stored = StoredPlan(task, plan.reasoning, created, records)
            (staging / "PLAN.md").write_text(self._render_plan_file(stored), encoding="utf-8")
            self._archive_current(created)
            if self.notes_path.is_file():  # the old plan's facts are not this plan's
                from maker.store.notes import notes_for_new_plan

                atomic_write(self.notes_path, notes_for_new_plan(
                    read_text_file(self.notes_path), created))
            journaled_move(staging / "steps", self.steps_dir)
            journaled_move(staging / "PLAN.md", self.overview_path)
        return stored

    def _archive_current(self, stamp: str) -> Path | None:
        if not self.exists():
            return None
        target = self.archive_dir / file_stamp(stamp)
        for path in (self.overview_path, self.steps_dir, self.handoffs_dir):
            if os.path.lexists(path):
                journaled_move(path, target / path.name)
        if self.notes_path.is_file():
            atomic_write(target / self.notes_path.name,
                         self.notes_path.read_text(encoding="utf-8"))
        for state in ("active.json", "evidence"):
            p = self.state_dir / state
            if os.path.lexists(p):
                journaled_move(p, target / state)
        if os.path.lexists(self.ledger_path):  # costs belong to the plan they were spent on
            journaled_move(self.ledger_path, target / self.ledger_path.name)
        return target

    def archived(self) -> list[Path]:
        return sorted(p for p in self.archive_dir.glob("*") if p.is_dir())

    def read_policy_data(self) -> dict[str, Any]:
        """The approval policy's record as maker sealed it (``{}`` if none, unreadable,
        or not sealed by maker: a policy file written by hand or by a model counts as
        none). Its meaning is ``maker.executor.approval``'s."""
        from maker.store.seal import check

        try:
            data = json.loads(read_text_file(self.policy_path, 64 * 1024))
        except (OSError, ValueError, MakerError):
            return {}
        return data if isinstance(data, dict) and check(data) else {}

    def _render_plan_file(self, plan: StoredPlan,
                          shown: Mapping[int, str] | None = None) -> str:
        policy = self.read_policy_data()
        body = render_overview(plan, self.root, shown,
                               f"{policy.get('name', 'never')} (set by {policy['set_by']})"
                               if policy.get("set_by") else "never (the default: a person "
                               "approves every step)")
        meta = {"task": plan.task, "reasoning": plan.reasoning, "created_at": plan.created_at,
                "steps": len(plan.steps), "body_sha256": _sha256(body.rstrip())}
        return render_front_matter(meta, body)

    def _keep_hand_edited_overview(self) -> None:
        """PLAN.md's body is rewritten from the step files; if someone edited it, keep
        their version under archive/ first."""
        try:
            meta, body = read_front_matter(self.overview_path)
        except PlanFileError:
            return
        if meta.get("body_sha256") in (None, _sha256(body.strip())):
            return
        target = self.archive_dir / f"PLAN-edited-{file_stamp(utc_now())}.md"
        atomic_write(target, self.overview_path.read_text(encoding="utf-8"))

    def refresh_overview(self, plan: StoredPlan | None = None,
                         shown: Mapping[int, str] | None = None) -> None:
        """Rewrite PLAN.md from the step files. ``shown`` overrides the status displayed
        per step (derived ones such as ``skipped``, which are never stored)."""
        with self.lock():
            plan = plan or self.load()
            self._keep_hand_edited_overview()
            atomic_write(self.overview_path, self._render_plan_file(plan, shown))

    # -- reading a plan -------------------------------------------------------

    def load(self, check_approvals: bool = True) -> StoredPlan:
        """The whole plan, every file re-validated. PlanFileError lists every problem.

        ``check_approvals=False`` skips the check that each complete step carries
        maker's seal of its approval (for ``maker plan adopt`` only)."""
        if not self.exists():
            raise PlanNotFoundError(
                f"no plan in {self.root}: create one with /maker:plan <task> "
                "(or `maker plan write FILE`)")
        meta = self._plan_meta()
        records: list[StepRecord] = []
        problems: list[str] = []
        for path in self._step_files():
            head = path.name.split("-", 1)[0]
            if not head.isdigit():
                problems.append(f"{path}: not a step file name (NN-<title>.md) (fix: move it "
                                f"out of {self.steps_dir})")
                continue
            try:
                record = self._cache.read(path, self._read_step)
            except PlanFileError as exc:
                problems.append(str(exc))
                continue
            if int(head) != record.number:
                rest = path.name.split("-", 1)[-1]
                problems.append(
                    f"{path}: step: the file says step {record.number} but its name says "
                    f"{int(head)} (fix: rename it to {record.number:02d}-{rest} or set "
                    f"`step: {int(head)}`)")
            records.append(record)
        seen: dict[int, Path] = {}
        for r in records:
            if r.number in seen:
                problems.append(f"{r.path}: step: step {r.number} is also in {seen[r.number]} "
                                "(fix: renumber one of them, or delete the stray file)")
            seen[r.number] = r.path
        for r in records:
            bad = [d for d in r.depends_on if d not in seen]
            if bad:
                problems.append(f"{r.path}: depends_on: no step {', '.join(map(str, bad))} "
                                f"in the plan (fix: remove it from depends_on)")
        created = str(meta.get("created_at") or "")
        for r in records:
            if check_approvals and r.status == "complete" and not self._cache.sealed(
                    r, created, self._cache.path(self.handoffs_dir, r.path.name),
                    approval_sealed):
                problems.append(
                    f"{r.path}: status: complete, but maker holds no approval of it on this "
                    "machine (its approval_seal is missing or does not match: an edit by "
                    "hand, or a plan approved on another machine) (fix: `maker step reset "
                    f"{r.number}` and run the step again; or, for a plan that came from "
                    "another machine or person, review it and run `maker plan adopt` in a "
                    "terminal)")
        if not records and not problems:
            problems.append(f"{self.steps_dir}: no step files (fix: write a plan again "
                            "with /maker:plan)")
        if problems:
            raise PlanFileError(self.root, "the plan files have problems:\n- "
                                + "\n- ".join(problems))
        records.sort(key=lambda r: r.number)
        return StoredPlan(str(meta.get("task") or ""), str(meta.get("reasoning") or ""),
                          str(meta.get("created_at") or ""), records)

    def _plan_meta(self) -> dict[str, Any]:
        if not self.overview_path.exists():
            return {}
        meta, _ = read_front_matter(self.overview_path)
        return meta

    def _step_files(self) -> list[Path]:
        try:
            with os.scandir(self.steps_dir) as entries:
                names = sorted(e.name for e in entries if e.name.endswith(".md")
                               and not e.name.startswith(".") and e.is_file())
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self._cache.path(self.steps_dir, name) for name in names]

    def derived(self, path: Path, compute: Callable[[Path], T]) -> T:
        """``compute(path)``, kept while the file is unchanged (see ``StepCache``)."""
        return self._cache.derived(path, compute)

    def step_path(self, number: int) -> Path:
        """The file of step ``number`` (found by its numeric prefix)."""
        for name in os.listdir(self.steps_dir) if self.steps_dir.is_dir() else ():
            head = name.split("-", 1)[0]
            if head.isdigit() and int(head) == number and name.endswith(".md"):
                return self.steps_dir / name
        raise StepNotFoundError(f"the plan has no step {number} (no file "
                                f"{self.steps_dir}/{number:02d}-*.md)", number)

    def load_step(self, number: int) -> StepRecord:
        """One step, read and validated on its own (cheap: for hooks)."""
        self.settle()
        record = self._read_step(self.step_path(number))
        if record.number != number:
            raise PlanFileError(record.path, f"step: the file says {record.number} but its "
                                f"name says {number}", "step", "make them agree")
        return record

    def _read_step(self, path: Path) -> StepRecord:
        meta, body = read_front_matter(path)
        data = {k: meta.get(k) for k in _STEP_KEYS}
        data.update(_parse_body(body))
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
        problems += unknown_key_problems([k for k in meta if k not in _RUN_META], _STEP_KEYS,
                                         typos_only=True, cutoff=0.8)
        resets = meta.get("resets")
        if resets is not None and (type(resets) is not int or resets < 0):
            problems.append(Problem("resets", f"must be a count (0, 1, 2...), got {resets!r}",
                                    fix="write the number of times the step was reset, or "
                                        "remove the line"))
        if problems:
            fields = "; ".join(_strip_step(p) for p in problems)
            raise PlanFileError(path, fields)
        raw["depends_on"] = deps
        spec = parse_step(raw)
        extra = {k: v for k, v in meta.items() if k not in _STEP_KEYS}
        return StepRecord(spec, str(status), list(deps), path, extra)

    def save_step(self, record: StepRecord) -> None:
        """Rewrite one step file atomically (statuses, meta)."""
        with self.lock():
            atomic_write(record.path, _render_step(record))

    # -- handoffs, outputs, active step -----------------------------------------

    def handoff_path(self, number: int) -> Path:
        return self.handoffs_dir / self.step_path(number).name

    def read_handoff(self, number: int) -> dict[str, Any] | None:
        """The accepted handoff's data for step ``number``, or None."""
        try:
            path = self.handoff_path(number)
        except StepNotFoundError:
            return None
        if not path.exists():
            return None
        meta, _ = read_front_matter(path)
        return meta

    def write_handoff(self, number: int, data: dict[str, Any], body: str) -> Path:
        path = self.handoff_path(number)
        with self.lock():
            atomic_write(path, render_front_matter(data, body))
        return path

    def outputs(self, only: Iterable[int] | None = None,
                plan: StoredPlan | None = None) -> dict[str, Any]:
        """``output_variable → output`` of accepted, complete handoffs (of ``only`` steps)."""
        plan = plan or self.load()
        wanted = set(only) if only is not None else None
        out: dict[str, Any] = {}
        for record in plan.steps:
            if wanted is not None and record.number not in wanted:
                continue
            path = self.handoffs_dir / record.path.name
            data = read_front_matter(path)[0] if path.exists() else None
            if data and data.get("status") == "complete" and isinstance(data.get("output"), dict):
                out[record.spec.output_variable] = data["output"]
        return out

    def read_active(self) -> dict[str, Any] | None:
        """The in-progress marker (``step``, ``session_id``, ``started_at``, …), or None.

        The marker is an index of the step files; one that is unreadable or of the wrong
        shape (a hand edit) is rebuilt from them, never taken as "no step in progress"
        (which would open the Stop gate and lift the executor's limits)."""
        self.settle()
        try:
            data = json.loads(read_text_file(self.active_path, 64 * 1024))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, MakerError):
            data = None
        if isinstance(data, dict) and _is_step_number(data.get("step")) \
                and isinstance(data.get("session_id"), (str, type(None))) \
                and isinstance(data.get("started_at", ""), str):
            return data
        return self.rebuild_active()

    def rebuild_active(self) -> dict[str, Any] | None:
        """Write the in-progress marker again from the step files (the one step in
        progress), or remove it when none is; returns it."""
        with self.lock():
            running = [r for r in self.load().steps if r.status == "in-progress"]
            if len(running) != 1:
                self.write_active(None)
                return None
            record = running[0]
            owner = record.meta.get("started_by")
            active = {"step": record.number,
                      "started_at": str(record.meta.get("started_at") or ""),
                      "session_id": owner if isinstance(owner, str) and owner != "cli"
                      else None, "attempts": {}}
            self.write_active(active)
            return active

    def write_active(self, data: dict[str, Any] | None) -> None:
        with self.lock():
            if data is None:
                journaled_remove(self.active_path)
            else:
                atomic_write(self.active_path, json.dumps(data, indent=2))


def _approval_body(record: StepRecord, created_at: str) -> dict[str, Any]:
    """What an approval's seal covers: the plan, the step, this attempt of it (when it
    started, when its handoff was accepted, the accepted handoff's bytes), and who
    approved it when. An approval replayed onto another attempt no longer matches."""
    handoff = record.path.parent.parent / "handoffs" / record.path.name
    try:
        digest = hashlib.sha256(read_regular_file(handoff)).hexdigest()
    except (OSError, MakerError):
        digest = ""
    return {"plan": created_at, "step": record.number, "handoff_sha256": digest,
            **{k: str(record.meta.get(k) or "") for k in
               (*_APPROVAL, "started_at", "handoff_accepted_at")}}


def seal_approval(record: StepRecord, created_at: str) -> None:
    """Seal ``record``'s approval (``approved_by``, ``approved_at``) into its meta."""
    from maker.store.seal import SEAL_FIELD, seal

    record.meta["approval_seal"] = seal(_approval_body(record, created_at))[SEAL_FIELD]


def approval_sealed(record: StepRecord, created_at: str) -> bool:
    """Whether ``record`` carries maker's seal of its approval (see ``seal_approval``)."""
    from maker.store.seal import SEAL_FIELD, check

    if not record.meta.get("approved_by"):
        return False
    return check({**_approval_body(record, created_at),
                  SEAL_FIELD: record.meta.get("approval_seal")})


def _is_step_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _strip_step(p: Problem) -> str:
    text = str(p)
    return text.split(": ", 1)[1] if text.startswith("step ") else text


def _render_step(record: StepRecord) -> str:
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
    meta.update(record.meta)
    parts = [f"# Step {s.step}: {s.title}", "", "## Task", "", s.task_description.strip()]
    for heading, name in list(_SECTIONS.items())[1:]:
        text = getattr(s, name).strip()
        if text:
            parts += ["", f"## {heading}", "", text]
    return render_front_matter(meta, "\n".join(parts))


def _parse_body(body: str) -> dict[str, str]:
    """The step's texts from its Markdown body (``## Task`` and the instruction sections)."""
    out = {name: "" for name in _SECTIONS.values()}
    current: str | None = None
    chunks: dict[str, list[str]] = {}
    preamble: list[str] = []
    for line in body.split("\n"):
        heading = line[3:].strip() if line.startswith("## ") else None
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
