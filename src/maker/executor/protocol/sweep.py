"""What an accepted handoff's edge-case sweep changes (seed 004: ``edge_case_sweep``,
"annotate downstream plans: Edge cases sections ONLY; scope changes become proposals";
docs/architecture.md#the-seeds).

- Each edge case is appended, by this code, to the named later step's ``## Edge cases``
  section (``StepRecord.edge_cases``), tagged with the step that found it; nothing else of
  that step file changes, so a person's edits elsewhere stay as they are.
- Each proposal is kept with the plan (``plans/.maker/proposals.json``) and changes
  nothing: a person accepts or drops it (``maker proposal accept|drop N`` in a terminal,
  ``/maker:proposal accept|drop N`` typed in Claude Code). An accepted proposal becomes a
  decision in NOTES.md, which every later step's brief carries.

Both run inside the gate's transaction (``maker.executor.acceptance.accept``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from maker.core.clock import utc_now
from maker.errors import InputError, StepError

if TYPE_CHECKING:
    from maker.core.models import Handoff
    from maker.store.plan_store import PlanStore
    from maker.store.records import StoredPlan

__all__ = ["apply_sweep", "decide_proposal", "open_proposals", "read_proposals"]

_LIMIT = 4 * 2**20
_OPEN_MAX = 200      # open proposals kept; more wait until the user decides some (the
                     # handoff, kept in plans/handoffs/, still lists every one)
_DECIDED_KEPT = 200  # decided ones kept for the record (the accepted are in NOTES.md too)


def _path(store: PlanStore) -> Any:
    return store.state_dir / "proposals.json"


def read_proposals(store: PlanStore) -> list[dict[str, Any]]:
    """Every proposal kept with the plan, oldest first: ``[]`` when there is none. A file
    maker cannot read as its own (a hand edit, a cut) is moved aside whole, to
    ``proposals.json.unreadable``, and said so on stderr: nothing is lost, and no handoff
    or decision is wedged by it."""
    from maker.core.bounded import read_text_file

    path = _path(store)
    try:
        data = json.loads(read_text_file(path, _LIMIT))
    except FileNotFoundError:
        return []
    except (OSError, ValueError, UnicodeDecodeError, InputError) as exc:
        return _set_aside(path, str(exc))
    if not isinstance(data, list):
        return _set_aside(path, "it is not a list")
    return [_clean(p) for p in data if isinstance(p, dict)]


def _clean(p: dict[str, Any]) -> dict[str, Any]:
    def number(v: Any) -> int:
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    return dict(p, id=number(p.get("id")), from_step=number(p.get("from_step")),
                text=str(p.get("text") or ""), status=str(p.get("status") or "open"))


def _set_aside(path: Any, why: str) -> list[dict[str, Any]]:
    aside = path.with_name(path.name + ".unreadable")
    try:
        os.replace(path, aside)
    except OSError:
        return []
    print(f"maker: {path} could not be read ({why[:200]}); it was moved to {aside}, and "
          "maker keeps new proposals in a fresh file", file=sys.stderr)
    return []


def open_proposals(store: PlanStore) -> list[dict[str, Any]]:
    """The proposals no person has decided yet."""
    return [p for p in read_proposals(store) if p.get("status") == "open"]


def apply_sweep(store: PlanStore, plan: StoredPlan, step: int, handoff: Handoff) -> int:
    """Write the sweep of step ``step``'s accepted handoff: its edge cases into the later
    steps' sections, its proposals with the plan. Call under the plan lock. Returns how
    many proposals were added."""
    from maker.store.atomic import atomic_write

    for n, note in handoff.edge_cases:
        record = plan.get(n)
        line = f"- (from step {step}) {note}"
        if line in record.edge_cases.splitlines():
            continue
        record.edge_cases = "\n".join(x for x in (record.edge_cases.strip(), line) if x)
        store.save_step(record)
    if not handoff.proposals:
        return 0
    kept = read_proposals(store)
    first = max((p["id"] for p in kept), default=0) + 1
    known = {(p["from_step"], p["text"]) for p in kept}
    room = max(0, _OPEN_MAX - sum(p["status"] == "open" for p in kept))
    new = [{"id": first + i, "from_step": step, "text": text, "status": "open",
            "at": utc_now()}
           for i, text in enumerate([t for t in handoff.proposals
                                     if (step, t) not in known][:room])]
    if new:
        decided = [p for p in kept if p["status"] != "open"][-_DECIDED_KEPT:]
        still = [p for p in kept if p["status"] == "open"]
        atomic_write(_path(store), json.dumps(sorted(decided + still + new,
                                                     key=lambda p: p["id"]), indent=2))
    return len(new)


def decide_proposal(store: PlanStore, pid: int, accept: bool, by: str) -> dict[str, Any]:
    """A person's decision on proposal ``pid``. Raises StepError for an unknown or an
    already decided one."""
    from maker.store.atomic import atomic_write
    from maker.store.fact_scope import PLAN_WIDE_MARK
    from maker.store.notes import add_notes

    with store.lock():
        kept = read_proposals(store)
        found = next((p for p in kept if p.get("id") == pid), None)
        if found is None:
            raise StepError(f"there is no proposal {pid}: `maker status` lists the open ones")
        if found.get("status") != "open":
            raise StepError(f"proposal {pid} was already {found.get('status')} by "
                            f"{found.get('decided_by')}")
        found.update(status="accepted" if accept else "dropped", decided_by=by,
                     decided_at=utc_now())
        atomic_write(_path(store), json.dumps(kept, indent=2))
        if accept:  # (a change of the plan's scope: every component's steps see it)
            plan = store.load()
            add_notes(store.notes_path, {"decisions": [
                f"{PLAN_WIDE_MARK} Scope change accepted by {by} (proposed by step "
                f"{found.get('from_step')}): {found.get('text')}"]},
                step=int(found.get("from_step") or 0), archive_dir=store.archive_dir,
                plan=plan.created_at or None, components=plan.components())
        return found
