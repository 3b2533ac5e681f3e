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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maker.core.models import CONDITIONAL_STEP, END, RUNTIME_DECIDED, Plan, schema_keys
from maker.errors import Problem, YAMLCleanError
from maker.planner.parser import _plan_problems, _show, _step_problems, parse_plan
from maker.tools.registry import ToolRegistry
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["lint_plan", "lint_stored", "lint_text"]

_STEP_OUTPUT = re.compile(r"^step_(\d+)_output$")
_VAR_SPLIT = re.compile(r"[.\[]")
_ONLY_DOTS = re.compile(r"^[\s.…]*$")
_MAY_HOLD_PLACEHOLDER = re.compile(r"TBD|TODO|FIXME|[sS][tT][eE][pP]")
# TBD/TODO/FIXME, or "similar to step 2" / "same as step 2": the subagent running
# this step never sees step 2 ("same as step 2's output" names data it does see).
# One pattern, so each text is scanned once.
_PLACEHOLDER = re.compile(
    r"\b(?P<mark>TBD|TODO|FIXME)\b"
    r"|\b(?i:similar to|same as|identical to)\s+(?i:in\s+|that of\s+)?(?i:step)\s*#?\s*"
    r"(?P<other>\d+)(?!\d|\s*(?:'s|’s)?\s*(?i:output))"
)
_TEXT_FIELDS = ("title", "task_description", "primary_tool_instructions",
                "fallback_tool_instructions")
_TOOL_FIELDS = ("primary_tools", "fallback_tools")
_ISOLATED = "each step runs in a fresh subagent that sees only its own step"
_UNREAD = object()


@dataclass
class _Step:
    """A structurally valid step, with where it sits in the list."""

    index: int
    number: int
    item: dict[str, Any]
    _keys: object = field(default=_UNREAD, repr=False)

    @property
    def next(self) -> int:
        value: int = self.item["next_step_sequence_number"]
        return value

    @property
    def conditional(self) -> bool:
        return bool(self.item["task_type"] == CONDITIONAL_STEP)

    @property
    def keys(self) -> list[str] | None:
        """The output schema's keys (None: unreadable), read once."""
        if self._keys is _UNREAD:
            self._keys = schema_keys(self.item["output_schema"])
        return self._keys  # type: ignore[return-value]


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
    valid: list[_Step] = []
    for index, item in enumerate(steps):
        broken = _step_problems(index, item)
        problems += broken
        if not isinstance(item, dict):
            continue
        number = item.get("step")
        if isinstance(number, int) and not isinstance(number, bool):
            numbered.append((index, number, item))
            if not broken:  # a broken step gets no semantic checks: they would only echo
                valid.append(_Step(index, number, item))
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
        problems += _output_variable_problems(s, producers)
        problems += _input_problems(s, producers, valid_by_number)
        problems += _next_problems(s, position)
        problems += _tool_problems(s, registry, tool_hints)
        problems += _text_problems(s)
        problems += _depends_on_problems(s, position)
    if isinstance(raw, dict):
        problems += _reasoning_problems(raw)
    problems += _flow_problems(numbered, valid_by_number, position)
    return problems


_DEFAULT: ToolRegistry | None = None


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


def _output_variable_problems(s: _Step, producers: dict[str, tuple[int, int]]) -> list[Problem]:
    declared = s.item.get("output_variable")
    if not isinstance(declared, str) or not declared.strip():
        return []
    name = declared.strip()
    expected = f"step_{s.number}_output"
    if name == expected:
        return []
    m = _STEP_OUTPUT.match(name)
    if m and int(m.group(1)) != s.number:
        return [Problem("output_variable", f"{_show(declared)} is the name of step "
                                           f"{m.group(1)}'s output", s.number,
                        fix=f"use {expected!r}")]
    # Later steps, the brief and the gate find a step's output by its number.
    return [Problem("output_variable", f"{_show(declared)} is not this step's output name: "
                                       "outputs are named step_<N>_output", s.number,
                    fix=f"use {expected!r}, and refer to it as {expected}.<key>")]


def _input_problems(s: _Step, producers: dict[str, tuple[int, int]],
                    valid_by_number: dict[int, _Step]) -> list[Problem]:
    out: list[Problem] = []
    for var in s.item.get("input_variables") or []:
        root, _, rest = var.strip().partition(".")
        root = _VAR_SPLIT.split(root, 1)[0]
        source = producers.get(root)
        if source is None:
            m = _STEP_OUTPUT.match(root)
            what = (f"there is no step {m.group(1)}" if m else
                    "no step produces it")
            out.append(Problem("input_variables", f"{_show(var)} reads {root!r}, but {what}",
                               s.number, fix="read only `step_N_output.<key>` of an earlier "
                                             "step N, or remove it"))
            continue
        index, number = source
        if number == s.number and index == s.index:
            out.append(Problem("input_variables", f"{_show(var)} reads this step's own output",
                               s.number, fix="remove it: a step cannot read what it has not "
                                             "produced yet"))
            continue
        if index >= s.index:
            out.append(Problem("input_variables", f"{_show(var)} is produced by step {number}, "
                                                  "which comes later", s.number,
                               fix=f"move step {number} before step {s.number}, or read an "
                                   "earlier step's output"))
            continue
        key = _VAR_SPLIT.split(rest, 1)[0].strip() if rest else ""
        producer = valid_by_number.get(number)
        if key and producer is not None:
            keys = producer.keys
            if keys and key not in keys:
                hint = difflib.get_close_matches(key, keys, n=1)
                fix = (f"did you mean {root}.{hint[0]}?" if hint else
                       f"read one of its keys ({', '.join(keys[:10])}) or add {key!r} to "
                       f"step {number}'s output_schema")
                out.append(Problem("input_variables", f"{_show(var)}: step {number}'s "
                                                      f"output_schema has no key {key!r}",
                                   s.number, fix=fix))
    return out


def _next_problems(s: _Step, position: dict[int, int]) -> list[Problem]:
    nxt = s.next
    out: list[Problem] = []
    if nxt == RUNTIME_DECIDED:
        if not s.conditional:
            out.append(Problem("next_step_sequence_number",
                               f"-2 (decided at run time) is only for a conditional_step, but "
                               f"this step is {s.item['task_type']!r}", s.number,
                               fix="give the next step's number, or -1 to end; or make this "
                                   "a conditional_step whose output has `next_step`"))
    elif nxt != END and nxt not in position:
        out.append(Problem("next_step_sequence_number", f"there is no step {nxt}", s.number,
                           fix="use an existing step number, -1 (end) or -2 (decided by a "
                               "conditional step's output)"))
    keys = s.keys
    if s.conditional:
        if keys is not None and "next_step" not in keys:
            out.append(Problem("output_schema", f"a conditional_step must output `next_step`, "
                                                f"but its output_schema "
                                                f"{_show(s.item['output_schema'])} has no "
                                                "next_step", s.number,
                               fix="add `next_step: int` (the step to run next, or -1 to end)"))
    if keys is None:
        out.append(Problem("output_schema", f"cannot read the schema "
                                            f"{_show(s.item['output_schema'])}", s.number,
                           fix="write it as a mapping, or as a text like "
                               "\"{key: type, other: type}\""))
    return out


def _tool_problems(s: _Step, registry: ToolRegistry,
                   hints: dict[str, str | None]) -> list[Problem]:
    out: list[Problem] = []
    for name_field in _TOOL_FIELDS:
        for name in s.item.get(name_field) or []:
            if registry.is_known(name):
                continue
            if name not in hints:
                hints[name] = registry.closest(name)
            hint = hints[name]
            fix = f"did you mean {hint!r}? " if hint else ""
            fix += "use a Claude Code tool name or an MCP tool named mcp__<server>__<tool>"
            out.append(Problem(name_field, f"unknown tool {_show(name)}", s.number, fix=fix))
    return out


def _placeholder(text: str) -> str | None:
    """What in ``text`` is a placeholder rather than an instruction, quoted; else None."""
    if _ONLY_DOTS.match(text) and text.strip():
        return f"placeholder text {text.strip()!r} (only an ellipsis)"
    if not _MAY_HOLD_PLACEHOLDER.search(text):  # a cheap scan first: most texts are fine
        return None
    m = _PLACEHOLDER.search(text)
    if m is None:
        return None
    found = f"placeholder text {m.group(0)!r}"
    if m.group("other"):
        found += f" (step {m.group('other')}'s text is not visible to this step)"
    if m.group(0) != text.strip():
        found += f" in {_show(text)}"
    return found


def _text_problems(s: _Step) -> list[Problem]:
    out: list[Problem] = []
    for text_field in _TEXT_FIELDS:
        text = s.item.get(text_field)
        if not isinstance(text, str) or not text:
            continue
        found = _placeholder(text)
        if found:
            out.append(Problem(text_field, found, s.number,
                               fix=f"write it out in full: {_ISOLATED}"))
    return out


def _reasoning_problems(raw: dict[str, Any]) -> list[Problem]:
    reasoning = raw.get("reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        return []
    found = _placeholder(reasoning)
    if found is None:
        return []
    return [Problem("reasoning", found,
                    fix="explain why the steps are these")]


def _depends_on_problems(s: _Step, position: dict[int, int]) -> list[Problem]:
    out: list[Problem] = []
    for dep in s.item.get("depends_on") or []:
        if dep == s.number:
            out.append(Problem("depends_on", f"step {s.number} depends on itself", s.number,
                               fix=f"remove {dep} from depends_on"))
        elif dep not in position:
            out.append(Problem("depends_on", f"depends on step {dep}, which does not exist",
                               s.number, fix=f"remove {dep}, or name an existing earlier step"))
        elif position[dep] > s.index:
            out.append(Problem("depends_on", f"depends on step {dep}, which comes later",
                               s.number, fix=f"move step {dep} before step {s.number}, or "
                                             f"remove {dep} from depends_on"))
    return out


def _flow_problems(numbered: list[tuple[int, int, dict[str, Any]]],
                   valid_by_number: dict[int, _Step],
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
            return []  # reported by _next_problems
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
