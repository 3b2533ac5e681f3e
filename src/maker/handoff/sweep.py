"""The edge-case sweep's part of a handoff (seed 004: ``edge_case_sweep``): what the
executor found, once verification passed, that a green suite does not show.

    edge_cases:              # for later steps: written into their "Edge cases" section
      - step: 4
        note: an empty user list must not crash the export
    proposals:               # changes of scope: never applied; the user accepts or drops
      - Paginate /users: step 4 assumes every user fits in one page

Both are optional. An edge case names a later step of the plan that has not run yet;
maker's code (``maker.executor.protocol.sweep``), not the model, writes it into that step's
``## Edge cases`` section and nowhere else. A proposal changes nothing until a person
accepts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maker.errors import Problem

if TYPE_CHECKING:
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["check_sweep", "parse_sweep"]

_NOTE_LIMIT = 1000
_ITEMS = 50
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
