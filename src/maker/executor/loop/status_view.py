"""The schedule as a person reads it: rows for ``maker status`` and PLAN.md, a summary
for a session that starts, the status shown for each step."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maker.core.statuses import AWAITING
from maker.core.text import task_line
from maker.errors import MakerError
from maker.executor.rules.instructions import decide_hint
from maker.executor.state.held_vote import held_note
from maker.executor.state.schedule import SKIPPED, Schedule, plan_schedule

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["StepRow", "box_network", "executor_bash", "file_notes", "main_bash", "status_summary",
           "summary_rows"]


@dataclass(frozen=True)
class StepRow:
    """One line of a status table."""

    step: int
    title: str
    status: str  # a stored status, or "skipped"
    depends_on: list[int]
    ready: bool
    waiting_on: dict[int, str] = field(default_factory=dict)  # deps not complete → their status
    reasons: list[str] = field(default_factory=list)  # why it failed or is blocked
    held: str | None = None  # why it waits for a person: its vote held for them, and how

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "title": self.title,
            "status": self.status,
            "depends_on": list(self.depends_on),
            "ready": self.ready,
            "waiting_on": {str(k): v for k, v in self.waiting_on.items()},
            "reasons": list(self.reasons),
            "held": self.held,
        }


def summary_rows(plan: StoredPlan, store: PlanStore,
                 sched: Schedule | None = None) -> list[StepRow]:
    """One row per step, in step order, for ``maker status`` and PLAN.md."""
    sched = sched or plan_schedule(store, plan)
    rows = []
    for record in sorted(plan.steps, key=lambda r: r.spec.step):
        n = record.spec.step
        status = sched.statuses[n]
        rows.append(StepRow(
            step=n,
            title=record.spec.title,
            status=status,
            depends_on=list(record.depends_on),
            ready=n in sched.ready,
            waiting_on=dict(sched.waiting_on.get(n, {})),
            reasons=_reasons(record) if status in ("failed", "blocked") else [],
            held=held_note(record),
        ))
    return rows


def executor_bash(store: PlanStore) -> str:
    """What holds a step executor's Bash here (``maker.tools.box.boundary``), for ``maker
    status``."""
    from maker.store.settings import load_settings
    from maker.tools.box.boundary import protection

    return protection().describe(load_settings(store.root).boundary)


def box_network(store: PlanStore) -> str:
    """What network and ``/tmp`` a step's box has here, under the person's ``network:``
    setting, for ``maker status``; "" when no kernel boundary holds a step's Bash."""
    from maker.store.settings import load_settings
    from maker.tools.box.boundary import protection

    settings = load_settings(store.root)
    if settings.boundary == "off" or not protection().kernel:
        return ""
    said = {"on": "the machine's, for every step and maker verify (`network: on`)",
            "off": "none (loopback only), for every step and maker verify (`network: off`)",
            "auto": "the machine's for a step that can write; none (loopback only) for a "
                    "step whose tools only read and for maker verify's checks"}
    tmp = "; /tmp: the step's own" if sys.platform.startswith("linux") else ""
    return f"network: {said[settings.network]}{tmp}"


def main_bash(store: PlanStore) -> str:
    """What holds the main agent's Bash while this plan exists
    (``maker.tools.box.main_box``), for ``maker status``."""
    from maker.store.settings import load_settings
    from maker.tools.box.boundary import protection

    if load_settings(store.root).main_boundary == "off":
        return "nothing of maker's but its guard on your decisions (`main_boundary: off`)"
    if not protection().kernel:
        return "nothing of maker's but its guard on your decisions (no kernel boundary here)"
    return ("its own box for a command that may change something (plans/, maker's key and "
            "data, git's config and hooks out of its reach)")


def file_notes(store: PlanStore, plan: StoredPlan) -> dict[int, str]:
    """By step, what a person must not miss about each step awaiting approval or complete
    (``maker.handoff.measured.files_note``: no file changed, the files only claimed, …),
    and what its sweep considered and found (``maker.handoff.sweep.sweep_said``)."""
    from maker.handoff.measured import files_note
    from maker.handoff.sweep import sweep_said

    notes = {}
    for record in plan.steps:
        if record.status in (AWAITING, "complete"):
            handoff = store.read_handoff(record.number) or {}
            said = [files_note(record, handoff), sweep_said(handoff)]
            note = "; ".join(n if i == 0 else f"sweep: {n}" for i, n in enumerate(said) if n)
            if note:
                notes[record.number] = note
    return notes


def status_summary(store: PlanStore) -> str:
    """A few lines on where the plan stands, for a session that starts or resumes.

    Never raises for a broken plan: the error (naming the file and the fix) is the
    summary then.
    """

    try:
        plan = store.load()
        sched = plan_schedule(store, plan)
    except MakerError as exc:
        return f"maker: the plan in {store.root} cannot be read: {exc}"
    counts: dict[str, int] = {}
    for status in sched.statuses.values():
        counts[status] = counts.get(status, 0) + 1
    task = task_line(plan.task, where=str(store.overview_path))
    lines = [f"maker plan ({store.root}): {task}",
             "Steps: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
    notes = file_notes(store, plan)
    for record in plan.steps:
        if record.status == AWAITING:
            note = f" {notes[record.number]}." if record.number in notes else ""
            lines.append(f"Awaiting approval: step {record.number} ({record.title}):{note} "
                         f"{decide_hint(record.number)}.")
        elif record.status == "in-progress":
            from maker.executor.votes.runs import running_note

            running = running_note(store)
            lines.append(f"Running: {running}." if running else
                         f"In progress: step {record.number} ({record.title}); it needs a "
                         f"handoff. To continue it, the user types /maker:step "
                         f"{record.number} (which takes it over from a crashed session).")
    lines += _waves(store, plan, sched)
    from maker.executor.loop.report import run_lines

    lines += run_lines(store, plan)[:3]
    for n in sched.ready[:3]:
        lines.append(f"Ready: step {n} ({plan.get(n).title}): `/maker:step {n}`.")
    for record in plan.steps:
        if record.status in ("failed", "blocked"):
            why = "; ".join(_reasons(record))[:300] or "no reason recorded"
            lines.append(f"{_sentence(record.status)}: step {record.number} "
                         f"({record.title}): {why}. `maker step reset {record.number}` to "
                         "retry.")
    if all(s in ("complete", SKIPPED) for s in sched.statuses.values()):
        lines.append("Every step is complete.")
    return "\n".join(lines)


def _waves(store: PlanStore, plan: StoredPlan, sched: Schedule) -> list[str]:
    """The steps running together now (each in its worktree), or the next that may."""
    from maker.store.active import wave_of

    now = wave_of(store.read_active())
    if now:
        return [f"Running together: steps {', '.join(map(str, now))}, each in its own "
                "worktree (plans/.maker/worktrees/)."]
    from maker.executor.parallel.waves import wave
    from maker.store.settings import load_settings

    try:
        picked = wave(store, plan, sched, max(load_settings(store.root).parallel, 2))
    except MakerError:
        return []
    if len(picked) < 2:
        return []
    return [f"May run together: steps {', '.join(map(str, picked))} (`/maker:step` starts "
            "them at once, or `maker run --parallel N`)."]


def _sentence(text: str) -> str:
    """``text`` with its first letter upper-cased (``str.capitalize`` lowers the rest)."""
    return text[:1].upper() + text[1:]


def _reasons(record: StepRecord) -> list[str]:
    raw = record.meta.get("reasons") or []
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(r) for r in raw]
    return [str(raw)]
