"""A handoff's fields: the step executor's YAML read into a ``Handoff``.

``parse_handoff`` lists every problem of the fields and their types at once, each with
its fix, written for the model that has to correct itself. It knows nothing of the
plan (``maker.handoff.against_plan``) or of the evidence (``maker.handoff.evidence``).
"""

from __future__ import annotations

from typing import Any

from maker.core.agent_context import kind_of, text_list
from maker.core.models import HANDOFF_STATUSES, Evidence, Handoff
from maker.core.text import shown_value
from maker.errors import Problem
from maker.handoff.sweep import parse_sweep, parse_sweep_record

__all__ = ["FORMAT_HINT", "is_int", "parse_handoff"]

_LIST_FIELDS = ("discoveries", "decisions", "blockers", "files_changed")
FORMAT_HINT = ("answer with the handoff YAML only: `step:`, `status:`, `output:`, `summary:`, "
               "`discoveries:`, `decisions:`, `blockers:`, `for_next_agent:`, "
               "`files_changed:`, `evidence:`")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _evidence(data: dict[str, Any], problems: list[Problem]) -> list[Evidence]:
    value = data.get("evidence")
    if value is None:
        return []
    fix = ("write `evidence:` as a list of `- command: <what ran>` / `exit_code: <number>` "
           "items, copied from `maker verify`")
    if not isinstance(value, list):
        problems.append(Problem("evidence", f"must be a list, got {kind_of(value)}", fix=fix))
        return []
    out: list[Evidence] = []
    for i, item in enumerate(value):
        where = f"evidence[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(where, f"must be a mapping, got {kind_of(item)}", fix=fix))
            continue
        command, code = item.get("command"), item.get("exit_code")
        ok = True
        if not isinstance(command, str) or not command.strip():
            problems.append(Problem(f"{where}.command", "missing or not a text", fix=fix))
            ok = False
        if not isinstance(code, int) or isinstance(code, bool):
            problems.append(Problem(f"{where}.exit_code", f"must be a whole number, got "
                                    f"{kind_of(code)}", fix=fix))
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
        return None, [Problem("handoff", f"must be a YAML mapping, got {kind_of(data)}",
                              fix=FORMAT_HINT)]
    problems: list[Problem] = []
    step = data.get("step")
    if "step" not in data or step is None:
        problems.append(Problem("step", "missing",
                                fix="add `step: N`, the number of the step you ran"))
    elif not is_int(step):
        problems.append(Problem("step", f"must be a whole number, got {kind_of(step)} "
                                f"{shown_value(step)}", fix="write `step: N`, e.g. `step: 3`"))
    status = data.get("status")
    if status not in HANDOFF_STATUSES:
        got = "missing" if status is None else f"{shown_value(status)} is not a handoff status"
        problems.append(Problem("status", got, fix="use `status: complete` when the step is "
                                "done, `blocked` when something outside it stops you, "
                                "`failed` when it cannot be done"))
    output = data.get("output")
    if not isinstance(output, dict):
        got = "missing" if "output" not in data else f"must be a mapping, got {kind_of(output)}"
        problems.append(Problem("output", got, fix="write `output:` then the keys of the "
                                "step's output_schema indented under it, as `key: value` "
                                "lines (`output: {}` when there is nothing to return)"))
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        got = "missing" if summary is None else ("empty" if isinstance(summary, str)
                                                 else f"must be a text, got {kind_of(summary)}")
        problems.append(Problem("summary", got, fix="add `summary:` with what you did, in a "
                                "sentence or two"))
    for_next = data.get("for_next_agent")
    if for_next is not None and not isinstance(for_next, str):
        problems.append(Problem("for_next_agent", f"must be a text, got {kind_of(for_next)}",
                                fix="write it as one text (use `for_next_agent: |` and "
                                    "indented lines for several lines)"))
    kept = data.get("behaviour_kept")
    if kept is not None and not isinstance(kept, str):
        problems.append(Problem("behaviour_kept", f"must be a text, got {kind_of(kept)}",
                                fix="write why no test of the step can fail on the code "
                                    "before it, as one text"))
    lists = {name: text_list(data, name, problems) for name in _LIST_FIELDS}
    evidence = _evidence(data, problems)
    cases, proposals = parse_sweep(data, problems)
    swept = parse_sweep_record(data, problems)
    if problems:
        return None, problems
    assert isinstance(output, dict) and isinstance(summary, str) and isinstance(step, int)
    return Handoff(step=step, status=str(status), output=output, summary=summary,
                   for_next_agent=for_next or "", evidence=evidence, edge_cases=cases,
                   proposals=proposals, sweep=swept, behaviour_kept=(kept or "").strip(),
                   **lists), []
