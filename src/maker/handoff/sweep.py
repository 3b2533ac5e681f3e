"""The edge-case sweep's part of a handoff (seed 004: ``edge_case_sweep``,
docs/architecture.md#the-seeds): what the
executor found, once verification passed, that a green suite does not show.

    edge_cases:              # for later steps: written into their "Edge cases" section
      - step: 4
        note: an empty user list must not crash the export
    proposals:               # changes of scope: never applied; the user accepts or drops
      - Paginate /users: step 4 assumes every user fits in one page

    sweep:                   # the pass itself: what it looked for, what it found
      considered:
        - an empty user list
        - a user without an email
      found:
        - an empty user list crashes the export (edge case for step 4)

``sweep`` is required of a ``complete`` handoff of a step whose tools can write: a step
that never swept must not look like one that swept and found nothing. ``edge_cases`` and
``proposals`` are optional. An edge case names a later step of the plan that has not run yet;
maker's code (``maker.executor.protocol.sweep``), not the model, writes it into that step's
``## Edge cases`` section and nowhere else. A proposal changes nothing until a person
accepts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maker.errors import Problem
from maker.tools.registry import only_read

if TYPE_CHECKING:
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["SWEEP_FIX", "check_sweep", "check_sweep_record", "parse_sweep", "parse_sweep_record",
           "sweep_said"]

_NOTE_LIMIT = 1000
_ITEMS = 50
SWEEP_FIX = ("once verification passes, look for the edge cases a green suite does not show, "
             "then write `sweep:` with `considered:` (each case you checked, one `- text` "
             "per line) and `found:` (what you found, `[]` when nothing); a case a later "
             "step must handle also goes in `edge_cases`, a change of scope in `proposals`")
_FIX = ("write `edge_cases:` as a list of `- step: N` / `note: <the edge case>` items, one per "
        "later step it concerns (`edge_cases: []` when there are none)")


def parse_sweep(data: dict[str, Any],
                problems: list[Problem]) -> tuple[list[tuple[int, str]], list[str]]:
    """``(edge cases as (step, note), proposals)`` from a handoff's YAML mapping."""
    cases: list[tuple[int, str]] = []
    value = data.get("edge_cases")
    if value is not None and not isinstance(value, list):
        problems.append(Problem("edge_cases", "must be a list", fix=_FIX))
        value = None
    for i, item in enumerate((value or [])[:_ITEMS]):
        step = item.get("step") if isinstance(item, dict) else None
        note = item.get("note") if isinstance(item, dict) else None
        if not isinstance(step, int) or isinstance(step, bool) or not isinstance(note, str) \
                or not note.strip():
            problems.append(Problem(f"edge_cases[{i}]", "must be a mapping with `step` (a "
                                    "step number) and `note` (a text)", fix=_FIX))
            continue
        cases.append((step, " ".join(note.split())[:_NOTE_LIMIT]))
    if value and len(value) > _ITEMS:
        problems.append(Problem("edge_cases", f"has {len(value)} items, over {_ITEMS}",
                                fix="keep the edge cases that matter most"))
    proposals: list[str] = []
    raw = data.get("proposals")
    if raw is not None and not isinstance(raw, list):
        problems.append(Problem("proposals", "must be a list of texts",
                                fix="write `proposals:` then one `- text` line per change of "
                                    "scope (`proposals: []` when there are none)"))
        raw = None
    for i, item in enumerate((raw or [])[:_ITEMS]):
        if not isinstance(item, str) or not item.strip():
            problems.append(Problem(f"proposals[{i}]", "must be a text",
                                    fix="write each proposal as one line of text"))
            continue
        proposals.append(" ".join(item.split())[:_NOTE_LIMIT])
    return cases, proposals


def check_sweep(plan: StoredPlan, record: StepRecord, cases: list[tuple[int, str]],
                problems: list[Problem]) -> None:
    """Each edge case names another step of the plan that has not run yet."""
    numbers = {r.number: r for r in plan.steps}
    for i, (n, _) in enumerate(cases):
        other = numbers.get(n)
        if other is None or n == record.number or other.status != "pending":
            why = ("is this step" if n == record.number else "is not in the plan"
                   if other is None else f"is {other.status}, not a step still to run")
            problems.append(Problem(f"edge_cases[{i}].step", f"step {n} {why}",
                                    record.number,
                                    fix="name a later step that has not run yet (pending); "
                                        "anything else goes in `discoveries`"))


def parse_sweep_record(data: dict[str, Any],
                       problems: list[Problem]) -> dict[str, list[str]] | None:
    """The handoff's ``sweep`` record (``considered``, ``found``: lists of texts), None
    when it has none; a record of another shape is a problem."""
    value = data.get("sweep")
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(Problem("sweep", "must be a mapping with `considered` and `found`",
                                fix=SWEEP_FIX))
        return None
    record: dict[str, list[str]] = {}
    for key in ("considered", "found"):
        items = value.get(key)
        if items is None:
            items = []
        if not isinstance(items, list) or not all(isinstance(i, str) and i.strip()
                                                  for i in items):
            problems.append(Problem(f"sweep.{key}", "must be a list of texts", fix=SWEEP_FIX))
            return None
        record[key] = [" ".join(i.split())[:_NOTE_LIMIT] for i in items[:_ITEMS]]
    return record


def check_sweep_record(record: StepRecord, status: Any, sweep: dict[str, list[str]] | None,
                       cases: list[tuple[int, str]], proposals: list[str],
                       problems: list[Problem]) -> None:
    """A ``complete`` handoff of a step whose tools can write records its sweep, with at
    least one case considered; what it annotated or proposed is among what it found."""
    if status != "complete" or only_read(record.spec.tools):
        return
    if sweep is None or not sweep.get("considered"):
        problems.append(Problem("sweep", "is missing: a complete handoff of a step that can "
                                "write records its edge-case sweep (what it considered, "
                                "what it found)" if sweep is None else "considered no case",
                                record.number, fix=SWEEP_FIX))
    elif (cases or proposals) and not sweep.get("found"):
        problems.append(Problem("sweep.found", f"is empty, but the handoff annotates "
                                f"{len(cases)} edge case(s) and proposes {len(proposals)} "
                                "change(s)", record.number,
                                fix="list under `found:` what the sweep found, as the "
                                    "edge cases and proposals say"))


def sweep_said(handoff: dict[str, Any]) -> str:
    """One line for a person: what a step's recorded sweep considered and found, and what
    it annotated or proposed; "" when it recorded none."""
    sweep = handoff.get("sweep")
    if not isinstance(sweep, dict):
        return ""
    considered = sweep.get("considered") or []
    found = sweep.get("found") or []
    cases = [c for c in handoff.get("edge_cases") or [] if isinstance(c, dict)]
    proposals = handoff.get("proposals") or []
    said = f"{len(considered)} case(s) considered; " + (
        "found: " + "; ".join(str(f) for f in found[:3]) if found else "nothing found")
    if cases:
        said += "; annotated step " + ", ".join(sorted({str(c.get("step")) for c in cases}))
    if proposals:
        said += f"; {len(proposals)} proposal(s) for you"
    return said

