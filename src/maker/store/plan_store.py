"""The plan on disk: ``plans/PLAN.md``, ``plans/steps/NN-<slug>.md``, handoffs, state.

Step files are the source of truth and humans may edit them: every read
re-validates and names the file, the field and the fix. PLAN.md carries the task
and reasoning in its front matter and a rendered overview (table + Mermaid graph)
in its body. A new plan is staged in full and then moved into place, and whatever
plan was there before is archived under ``plans/archive/`` first: nothing is lost.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from maker.core.clock import file_stamp, utc_now
from maker.core.models import Plan
from maker.core.paths import project_of, project_record
from maker.errors import (
    MakerError,
    PlanExistsError,
    PlanFileError,
    PlanNotFoundError,
    StepNotFoundError,
)
from maker.planner.dependencies import resolve_dependencies
from maker.store import changes
from maker.store.active import read_active, rebuild_active, write_active
from maker.store.atomic import atomic_write, plan_lock
from maker.store.frontmatter import read_front_matter, render_front_matter
from maker.store.journal import TXN_DIR, journaled_move, journaled_remove
from maker.store.overview import body_sha256, keep_hand_edited, render_overview
from maker.store.records import StepRecord, StoredPlan
from maker.store.seal import read_sealed
from maker.store.slug import slugify
from maker.store.snapshot import Snapshot
from maker.store.step_cache import StepCache, T
from maker.store.step_file import read_step, render_step

__all__ = ["PlanStore"]


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
        self._snapshot = Snapshot(self._cache)  # the last plan loaded without a problem
        self._meta: dict[str, Any] | None = None  # PLAN.md's front matter, as last read
        self.memo: dict[str, Any] = {}  # what readers derived (executor.schedule's)
        # 0: every load lists and checks every file (a hand edit is seen at once). A
        # long-lived reader (the headless engine) sets how many seconds a load may go
        # on what maker itself changed since the last full read (maker.store.changes).
        self.full_read_every = 0.0
        # PLAN.md at most this often (seconds; 0: at every change). The headless engine,
        # which changes a step's status twice a second on a fast plan, sets it.
        self.overview_every = 0.0
        self.overview_stale = False  # a change not yet rendered into PLAN.md
        self._overview_at = -1e9  # (monotonic) when PLAN.md was last rewritten

    @functools.cached_property
    def project(self) -> Path:
        """Where the plan's checks run and its steps work (``core.paths.project_of``)."""
        return project_of(self.root)

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
                (staging / "steps" / name).write_text(render_step(record), encoding="utf-8")
                records.append(record)
            stored = StoredPlan(task, plan.reasoning, created, records)
            (staging / "PLAN.md").write_text(self._render_plan_file(stored), encoding="utf-8")
            self._archive_current(created)
            from maker.store.planner_notes import start_notes  # (the old plan's, the planner's)

            start_notes(self.notes_path, self.archive_dir, created, plan.context)
            journaled_move(staging / "steps", self.steps_dir)
            journaled_move(staging / "PLAN.md", self.overview_path)
            rel, kept = project_record(self.root), self.state_dir / "project"
            if rel:  # the project the plan is made for, when not the parent
                atomic_write(kept, rel + "\n")
            else:
                journaled_remove(kept)
        self.__dict__.pop("project", None)  # (the cached PlanStore.project)
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
        for state in ("active.json", "evidence", "run.json"):  # (a run is the plan's)
            p = self.state_dir / state
            if os.path.lexists(p):
                journaled_move(p, target / state)
        if os.path.lexists(self.ledger_path):  # costs belong to the plan they were spent on
            journaled_move(self.ledger_path, target / self.ledger_path.name)
        return target

    def archived(self) -> list[Path]:
        return sorted(p for p in self.archive_dir.glob("*") if p.is_dir())

    def read_policy_data(self) -> dict[str, Any]:
        """The approval policy's record as maker sealed it (``store.seal.read_sealed``);
        its meaning is ``maker.executor.acceptance.approval``'s."""

        return read_sealed(self.policy_path)

    def _render_plan_file(self, plan: StoredPlan,
                          shown: Mapping[int, str] | None = None) -> str:
        policy = self.read_policy_data()
        body = render_overview(plan, self.root, shown,
                               f"{policy.get('name', 'never')} (set by {policy['set_by']})"
                               if policy.get("set_by") else "never (the default: a person "
                               "approves every step)")
        meta = {"task": plan.task, "reasoning": plan.reasoning, "created_at": plan.created_at,
                "steps": len(plan.steps), "body_sha256": body_sha256(body.rstrip())}
        return render_front_matter(meta, body)

    def overview_due(self) -> bool:
        """Whether PLAN.md is to be rewritten now (``overview_every``; else noted)."""
        now = time.monotonic()
        if self.overview_every and now - self._overview_at < self.overview_every:
            self.overview_stale = True
            return False
        self._overview_at, self.overview_stale = now, False
        return True

    def refresh_overview(self, plan: StoredPlan | None = None,
                         shown: Mapping[int, str] | None = None) -> None:
        """Rewrite PLAN.md from the step files. ``shown`` overrides the status displayed
        per step (derived ones such as ``skipped``, which are never stored)."""
        with self.lock():
            plan = plan or self.load()
            now = keep_hand_edited(self.overview_path, self.archive_dir)
            if now.get("created_at") == plan.created_at and (
                    now.get("task"), now.get("reasoning")) != (plan.task, plan.reasoning):
                # PLAN.md's task, as edited by hand since the plan was read (a kept plan)
                plan = StoredPlan(str(now.get("task") or ""), str(now.get("reasoning") or ""),
                                  plan.created_at, plan.steps)
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
        snap, shared = self._snapshot, True  # (``shared``: the records are the kept ones)
        view = changes.view(self.root)  # before anything is read (a commit after: seen)
        changed = changes.since(self.root, snap.view) if self.full_read_every else None
        known = None
        if changed is not None and self._meta is not None:
            meta = self._meta = self._plan_meta() if "PLAN.md" in changed else self._meta
            created = str(meta.get("created_at") or "")
            if snap.current(created, check_approvals, self.full_read_every):
                # Only what maker changed since (see maker.store.changes): no listing.
                known = snap.quick(changed, created)
                if known is not None:
                    snap.view = view
        if known is None:
            began = time.monotonic()  # (a hand edit after this is seen a window after it)
            meta = self._meta = self._plan_meta()
            created = str(meta.get("created_at") or "")
            cache = self._cache
            listing = cache.listing(self.steps_dir)
            handoffs = {name: stamp for name, _, stamp in cache.listing(self.handoffs_dir)} \
                if check_approvals else {}
            known = snap.records(listing, handoffs, created, check_approvals)
            if known is None:  # the full validation, every problem at once (PlanFileError)
                shared = False  # (records just parsed, not the kept ones)
                known = snap.validate(self.root, listing, handoffs, created, check_approvals)
            snap.view, snap.full_at = view, began
        plan = StoredPlan(str(meta.get("task") or ""), str(meta.get("reasoning") or ""),
                          created, known)
        plan._index = snap.index()  # (StoredPlan.get checks it, and builds its own if wrong)
        if self.full_read_every:
            plan._fresh = snap.fresh
        if shared:
            plan.all_kept()
        return plan

    def _plan_meta(self) -> dict[str, Any]:
        if not self.overview_path.exists():
            return {}
        meta, _ = read_front_matter(self.overview_path)
        return meta

    def handoff_heads(self, compute: Callable[[Path], T]) -> Mapping[str, T]:
        """``{file name: compute(path)}`` for every handoff file, each computed once
        while the file is unchanged (see ``StepCache``): a long run asks at every step.
        A store that keeps its plan between loads (``full_read_every``) keeps these too,
        read-only, and computes again only those of the handoffs that changed
        (``compute`` returns what cannot change: it is shared by every caller)."""
        if self.full_read_every:
            try:
                self.load()  # (brings the kept plan up to date)
            except MakerError:
                pass
            else:
                found = self._snapshot.handoff_heads(compute)
                if found is not None:
                    return MappingProxyType(found)
        cache = self._cache
        return {name: cache.derived(path, compute, stamp)
                for name, path, stamp in cache.listing(self.handoffs_dir)}

    def step_path(self, number: int) -> Path:
        """The file of step ``number`` (found by its numeric prefix)."""
        known = self._snapshot.path_of(number)  # (a 1,000-step folder: not listed again)
        if known is not None and os.path.isfile(known):
            return known
        for name in os.listdir(self.steps_dir) if self.steps_dir.is_dir() else ():
            head = name.split("-", 1)[0]
            if head.isdigit() and int(head) == number and name.endswith(".md"):
                return self.steps_dir / name
        raise StepNotFoundError(f"the plan has no step {number} (no file "
                                f"{self.steps_dir}/{number:02d}-*.md)", number)

    def load_step(self, number: int) -> StepRecord:
        """One step, read and validated on its own (cheap: for hooks)."""
        self.settle()
        record = read_step(self.step_path(number))
        if record.number != number:
            raise PlanFileError(record.path, f"step: the file says {record.number} but its "
                                f"name says {number}", "step", "make them agree")
        return record

    def save_step(self, record: StepRecord) -> None:
        """Rewrite one step file atomically (statuses, meta)."""
        with self.lock():
            atomic_write(record.path, render_step(record))

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
        records = plan.steps if only is None else \
            [r for r in map(plan.find, sorted(set(only))) if r is not None]
        out: dict[str, Any] = {}
        for record in records:
            path = self.handoffs_dir / record.path.name
            data = read_front_matter(path)[0] if path.exists() else None
            if data and data.get("status") == "complete" and isinstance(data.get("output"), dict):
                out[record.spec.output_variable] = data["output"]
        return out

    def read_active(self) -> dict[str, Any] | None:
        """The in-progress marker (``maker.store.active``), or None."""
        return read_active(self)

    def rebuild_active(self) -> dict[str, Any] | None:
        return rebuild_active(self)

    def write_active(self, data: dict[str, Any] | None) -> None:
        write_active(self, data)
