"""The linter's checks of one step: what its own fields mean in the plan around it.

``maker.planner.linter`` runs these over every structurally valid step (``LintStep``)
and adds the checks of the plan as a whole (numbering, reasoning, flow). Each returns a
list of ``Problem``; an empty list is a sound field.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from maker.core.models import CONDITIONAL_STEP, END, RUNTIME_DECIDED, schema_keys
from maker.errors import Problem
from maker.planner.parser import _show
from maker.tools.registry import ToolRegistry

__all__ = ["LintStep", "depends_on_problems", "input_problems", "next_problems",
           "output_variable_problems", "placeholder", "text_problems", "tool_problems"]

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
class LintStep:
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


def output_variable_problems(s: LintStep, producers: dict[str, tuple[int, int]]) -> list[Problem]:
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


def input_problems(s: LintStep, producers: dict[str, tuple[int, int]],
                    valid_by_number: dict[int, LintStep]) -> list[Problem]:
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


def next_problems(s: LintStep, position: dict[int, int]) -> list[Problem]:
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


def tool_problems(s: LintStep, registry: ToolRegistry,
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


def placeholder(text: str) -> str | None:
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


def text_problems(s: LintStep) -> list[Problem]:
    out: list[Problem] = []
    for text_field in _TEXT_FIELDS:
        text = s.item.get(text_field)
        if not isinstance(text, str) or not text:
            continue
        found = placeholder(text)
        if found:
            out.append(Problem(text_field, found, s.number,
                               fix=f"write it out in full: {_ISOLATED}"))
    return out


def depends_on_problems(s: LintStep, position: dict[int, int]) -> list[Problem]:
    out: list[Problem] = []
    seen: set[object] = set()
    for dep in s.item.get("depends_on") or []:
        if dep in seen:
            out.append(Problem("depends_on", f"step {dep} is named twice", s.number,
                               fix=f"name step {dep} once in depends_on"))
            continue
        seen.add(dep)
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
