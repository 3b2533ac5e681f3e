"""Check a plan for everything that would go wrong when it runs, all at once.

The parser checks shape (keys and types); the linter adds meaning: step numbers
that collide, inputs read before they are produced, ``next`` pointers to nowhere,
unknown tools, placeholder text, unreadable schemas, bad ``depends_on``, and a plan
that can never end. Each problem renders as ``step N: field: what is wrong (fix:
...)`` and quotes the offending value, because the planner model reads these to
correct itself.

Every pass is linear in the number of steps: a 10,000-step plan lints in a small
fraction of the time its YAML takes to parse.
"""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path
from typing import Any

from maker.core.models import END, RUNTIME_DECIDED, Plan
from maker.errors import Problem, YAMLCleanError
from maker.planner.parser import (
    MAX_COMPONENTS,
    STEP_FIELDS,
    UNKNOWN_FIELD,
    _plan_problems,
    _step_problems,
    parse_plan,
)
from maker.planner.report_names import report_name_problems
from maker.planner.step_lint import (
    LintStep,
    depends_on_problems,
    input_problems,
    next_problems,
    output_variable_problems,
    placeholder,
    text_problems,
    tool_problems,
)
from maker.tools.registry import ToolRegistry
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["lint_plan", "lint_stored", "lint_text"]


def lint_text(text: str | bytes,
              registry: ToolRegistry | None = None) -> tuple[Plan | None, list[Problem]]:
    """Clean, lint and parse a planner's raw answer.

    Returns ``(plan, [])`` when the plan is sound, else ``(None, problems)`` listing
    every problem. Never raises for bad input: text that holds no YAML becomes one
    problem.
    """
    try:
        data, _ = YAMLCleaner().clean(text)
    except YAMLCleanError as exc:
        return None, [Problem("yaml", str(exc),
                              fix="answer with the plan YAML only: `reasoning:` and `plan:`")]
    problems = lint_plan(data, registry)
    if problems:
        return None, problems
    return parse_plan(data), []


def lint_stored(raw: dict[str, Any], overview_path: Path) -> list[Problem]:
    """``lint_plan`` of a stored plan (``StoredPlan.as_raw()``); a missing PLAN.md, where
    the task and the reasoning live, is said as such rather than as empty reasoning."""
    problems = lint_plan(raw)
    if overview_path.exists():
        return problems
    missing = Problem("PLAN.md", f"{overview_path} is missing: it holds the plan's task and "
                                 "reasoning (the steps are intact)",
                      fix="restore it (from git, or from plans/archive/ if it was archived), "
                          "or write the plan again with /maker:plan")
    return [missing, *(p for p in problems if p.field != "reasoning")]


def lint_plan(raw: Any, registry: ToolRegistry | None = None) -> list[Problem]:
    """Every problem of raw plan data: structure first, then meaning. [] when sound."""
    problems, steps = _plan_problems(raw)
    numbered: list[tuple[int, int, dict[str, Any]]] = []  # (index, number, item)
    valid: list[LintStep] = []
    for index, item in enumerate(steps):
        broken = _step_problems(index, item)
        problems += broken
        if not isinstance(item, dict):
            continue
        number = item.get("step")
        if isinstance(number, int) and not isinstance(number, bool):
            # A broken step gets no semantic checks: they would only echo its problems.
            # A field it misspells does not break it: checked as meant (the field the
            # misspelling names), its other problems are said too.
            meant = _as_meant(item)
            numbered.append((index, number, meant))
            if all(p.message.startswith(UNKNOWN_FIELD) for p in _step_problems(index, meant)):
                valid.append(LintStep(index, number, meant))
    if not steps:
        return problems
    registry = registry or _default_registry()

    position: dict[int, int] = {}  # step number -> index of its first occurrence
    for index, number, _ in numbered:
        position.setdefault(number, index)
    problems += _numbering_problems(numbered, position)
    producers = _producers(numbered)
    valid_by_number = {s.number: s for s in valid if position[s.number] == s.index}

    tool_hints: dict[str, str | None] = {}
    for s in valid:
        problems += output_variable_problems(s, producers)
        problems += input_problems(s, producers, valid_by_number)
        problems += next_problems(s, position)
        problems += tool_problems(s, registry, tool_hints)
        problems += text_problems(s)
        problems += depends_on_problems(s, position)
        problems += report_name_problems(s.item, s.number)
    if isinstance(raw, dict):
        problems += _reasoning_problems(raw)
    problems += _flow_problems(numbered, valid_by_number, position)
    problems += _component_problems(valid)
    return problems


def _as_meant(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with each misspelt key under the step field it likely means (as the
    problem of the misspelling names it), where the step has no such field already."""
    meant = dict(item)
    for key in item:
        if key in STEP_FIELDS or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, STEP_FIELDS, n=1, cutoff=0.6)
        if close and close[0] not in meant:
            meant[close[0]] = meant.pop(key)
    return meant


_DEFAULT: ToolRegistry | None = None
_COMPARED = 10_000  # the most pairs of component names the typo check compares


def _default_registry() -> ToolRegistry:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ToolRegistry.default()
    return _DEFAULT


def _numbering_problems(numbered: list[tuple[int, int, dict[str, Any]]],
                        position: dict[int, int]) -> list[Problem]:
    out: list[Problem] = []
    for index, number, _ in numbered:
        if number < 0:
            out.append(Problem("step", f"step numbers must be 0 or more, got {number}", number,
                               fix="number the steps 0, 1, 2, … in order"))
        first = position[number]
        if first != index:
            out.append(Problem("step", f"duplicate step number {number}: plan[{first}] and "
                                       f"plan[{index}] both use it", number,
                               fix="give every step its own number: 0, 1, 2, … in order"))
    return out


def _producers(numbered: list[tuple[int, int, dict[str, Any]]]) -> dict[str, tuple[int, int]]:
    """output name -> (index, step number) of the first step that produces it."""
    out: dict[str, tuple[int, int]] = {}
    for index, number, _item in numbered:
        out.setdefault(f"step_{number}_output", (index, number))
    return out


def _reasoning_problems(raw: dict[str, Any]) -> list[Problem]:
    reasoning = raw.get("reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        return []
    found = placeholder(reasoning)
    if found is None:
        return []
    return [Problem("reasoning", found,
                    fix="explain why the steps are these")]


def _component_problems(valid: list[LintStep]) -> list[Problem]:
    """A component only one step names, spelt almost as one that several steps share:
    a typo that would keep the step from its component's notes."""
    named = Counter(s.item.get("component") for s in valid if s.item.get("component"))
    shared = [c for c, n in named.items() if n > 1]
    alone = [s for s in valid if named.get(s.item.get("component")) == 1]
    out: list[Problem] = []
    if len(named) > MAX_COMPONENTS:
        out.append(Problem("component", f"the plan names {len(named)} components, more "
                                        f"than the {MAX_COMPONENTS} maker keeps notes for",
                           fix="give the steps of one part of the project one name (`api`, "
                               "`billing-ui`): a component is a part several steps share, "
                               "not one step; leave it out on steps that span the parts"))
    if len(alone) * len(shared) > _COMPARED:
        return out  # (a plan of hundreds of components: the check would cost more than it finds)
    for s in alone:
        name = s.item["component"]
        close = difflib.get_close_matches(name, shared, n=1, cutoff=0.85)
        if close:
            out.append(Problem("component", f"{name!r} is named by this step only, and "
                                            f"steps {_steps_named(valid, close[0])} share "
                                            f"{close[0]!r}", s.number,
                               fix=f"did you mean `component: {close[0]}`? (a step sees the "
                                   "notes of its own component's steps); if it is a part of "
                                   f"its own, name it less like {close[0]!r}"))
    return out


def _steps_named(valid: list[LintStep], component: str) -> str:
    numbers = [s.number for s in valid if s.item.get("component") == component]
    return ", ".join(map(str, numbers[:5])) + (", …" if len(numbers) > 5 else "")


def _flow_problems(numbered: list[tuple[int, int, dict[str, Any]]],
                   valid_by_number: dict[int, LintStep],
                   position: dict[int, int]) -> list[Problem]:
    """A plan must be able to end: from the first step, ``next`` pointers reach -1.

    A conditional step (-2) may go to any step or end, so reaching one settles it.
    Steps that the walk never visits (and no conditional can reach) never run.
    """
    if not numbered:
        return []
    first = numbered[0][1]
    path: list[int] = []
    seen: set[int] = set()
    current = first
    while True:
        step = valid_by_number.get(current)
        if step is None:
            return []  # a broken step: its own problems are reported already
        path.append(current)
        seen.add(current)
        nxt = step.next
        if nxt == RUNTIME_DECIDED:
            return []  # a conditional (or a misused -2, reported already) may go anywhere
        if nxt == END:
            break
        if nxt not in position:
            return []  # reported by next_problems
        if nxt in seen:
            loop = path[path.index(nxt):] + [nxt]
            shown = " → ".join(map(str, loop)) if len(loop) <= 12 else (
                " → ".join(map(str, loop[:5])) + " → … → " + " → ".join(map(str, loop[-5:])))
            return [Problem("next_step_sequence_number",
                            f"{nxt} closes the loop {shown}: starting at step {first}, the "
                            "plan never reaches -1 (end)", current,
                            fix="point the last step's next_step_sequence_number at -1, or "
                                "make a step in the loop a conditional_step (-2) that can end "
                                "it")]
        current = nxt
    unreached = list(dict.fromkeys(n for _, n, _ in numbered if n not in seen))
    if not unreached:
        return []
    listed = ", ".join(map(str, unreached[:10])) + (", …" if len(unreached) > 10 else "")
    return [Problem("plan", f"step{'s' if len(unreached) > 1 else ''} {listed} never "
                            f"run{'s' if len(unreached) == 1 else ''}: following "
                            f"next_step_sequence_number from step {first} ends at step "
                            f"{path[-1]} (-1) first",
                    fix=f"point step {path[-1]}'s next_step_sequence_number at the next step "
                        "instead of -1, or remove the steps that never run")]
