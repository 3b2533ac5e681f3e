"""Turn the planner's YAML data into a ``Plan`` (seed 001, docs/architecture.md#the-seeds),
checking its structure.

The YAML names the step list ``plan``; the dataclass names it ``steps``. Both keys
are accepted. ``structure_problems`` reports every structural problem at once;
``parse_plan`` raises them together as one ``PlanValidationError`` (a ValueError).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from maker.core.agent_context import CONTEXT_OUTPUT_FIELDS, read_context
from maker.core.models import TASK_TYPES, Plan, PlanStep
from maker.errors import PlanValidationError, Problem
from maker.planner.writes import writes_problems
from maker.tools.registry import READ_ONLY_TOOLS, only_read
from maker.yaml_cleaner.load import bracket_depth

__all__ = ["MAX_SCHEMA_DEPTH", "PLAN_FIELDS", "REQUIRED_FIELDS", "STEP_FIELDS", "nesting_depth",
           "parse_plan", "parse_step", "structure_problems", "unknown_key_problems",
           "UNKNOWN_FIELD"]

# field -> (accepted types, description for the message)
REQUIRED_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "step": ((int,), "an integer"),
    "task_type": ((str,), "action_step or conditional_step"),
    "title": ((str,), "a short text"),
    "task_description": ((str,), "a text"),
    "output_schema": ((str, dict), "a mapping or a text like \"{key: type}\""),
    "next_step_sequence_number": ((int,), "an integer: a step number, -1 (end) or -2 (decided "
                                          "by this conditional step's output)"),
}
# Optional fields and their defaults.
_LIST_FIELDS = ("primary_tools", "fallback_tools", "input_variables")
_TEXT_FIELDS = ("primary_tool_instructions", "fallback_tool_instructions")
# Every field a planner's step may have, and every top-level key of a plan (the
# seed's parser reads `reasoning` and `plan` or `steps`; maker adds the `task`).
STEP_FIELDS = (*REQUIRED_FIELDS, *_LIST_FIELDS, *_TEXT_FIELDS, "output_variable", "depends_on",
               "model", "votes", "writes", "component", "probe")
MAX_VOTES = 20  # a lead of 20 already asks for ~40 sessions per step
# A model name or id as Claude Code takes it: an alias (`sonnet`, `opus`, `haiku`), an
# id (`claude-sonnet-4-5`), a provider's id (`us.anthropic.claude-…-v1:0`, `…@2025…`),
# a context suffix (`[1m]`). One token, so it cannot smuggle an option or a prompt.
MODEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@\-]*(\[[A-Za-z0-9]+\])?")
MODEL_CHARS = 100
# A step's component: a short name, one token, so the brief and NOTES.md can quote it.
COMPONENT_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*")
COMPONENT_CHARS = 40
MAX_COMPONENTS = 100  # NOTES.md keeps each one's facts (``maker.store.fact_scope``)
PLAN_FIELDS = ("task", "reasoning", "plan", "steps", *CONTEXT_OUTPUT_FIELDS)  # (seed 002's)
# An output schema describes a handoff's `output`; deeper than this is a mistake (or
# an attack on the parsers and the brief, which walk it).
MAX_SCHEMA_DEPTH = 20


def _steps_of(raw: dict[str, Any]) -> Any:
    steps = raw.get("plan")
    if steps is None or steps == []:
        steps = raw.get("steps", steps)
    return steps


def structure_problems(raw: Any) -> list[Problem]:
    """Every structural problem of raw plan data: missing keys, wrong types."""
    problems, steps = _plan_problems(raw)
    for index, item in enumerate(steps):
        problems.extend(_step_problems(index, item))
    return problems


def _plan_problems(raw: Any) -> tuple[list[Problem], list[Any]]:
    """The plan-level problems, and the steps to check one by one ([] when none)."""
    if not isinstance(raw, dict):
        kind = "a list" if isinstance(raw, list) else type(raw).__name__
        return [Problem("plan", f"the plan must be a mapping with `reasoning` and `plan`, "
                                f"got {kind}",
                        fix="answer with `reasoning: ...` and `plan: [...]`")], []
    problems = unknown_key_problems(raw, PLAN_FIELDS, what="plan") + read_context(raw)[1]
    reasoning = raw.get("reasoning")
    if "reasoning" not in raw:
        problems.append(Problem("reasoning", "missing", fix="add `reasoning:` explaining the plan"))
    elif not isinstance(reasoning, str) or not reasoning.strip():
        problems.append(Problem("reasoning", "empty or not a text",
                                fix="explain in a sentence or two why the steps are these"))
    steps = _steps_of(raw)
    if steps is None:
        problems.append(Problem("plan", "no `plan` or `steps` list",
                                fix="add `plan:` with a list of steps"))
        return problems, []
    if not isinstance(steps, list):
        problems.append(Problem("plan", f"`plan`/`steps` must be a list of steps, got "
                                        f"{type(steps).__name__}"))
        return problems, []
    if not steps:
        problems.append(Problem("plan", "no steps", fix="a plan needs at least one step"))
    return problems, steps


def _step_problems(index: int, item: Any) -> list[Problem]:
    if not isinstance(item, dict):
        return [Problem("plan", f"item {index} is {type(item).__name__}, not a step mapping")]
    number = item.get("step")
    where = number if isinstance(number, int) and not isinstance(number, bool) else None
    label = {} if where is not None else {"field_prefix": f"plan[{index}]."}
    prefix = label.get("field_prefix", "")
    out = unknown_key_problems(item, STEP_FIELDS, step=where, prefix=prefix)
    for name, (types, what) in REQUIRED_FIELDS.items():
        if name not in item or item[name] is None:
            out.append(Problem(prefix + name, "missing", where, fix=f"add `{name}:` ({what})"))
            continue
        value = item[name]
        if isinstance(value, bool) or not isinstance(value, types):
            out.append(Problem(prefix + name, f"must be {what}, got {_show(value)}", where))
        elif name == "task_type" and value not in TASK_TYPES:
            out.append(Problem(prefix + name, f"unknown task type {_show(value)}", where,
                               fix="use action_step or conditional_step"))
        elif name in ("title", "task_description") and not str(value).strip():
            out.append(Problem(prefix + name, "empty", where, fix=f"write the step's {name}"))
        elif name == "title" and any(ord(c) < 32 or ord(c) == 127 for c in str(value)):
            out.append(Problem(prefix + name, f"has a line break or control character: "
                                              f"{_show(value)}", where,
                               fix="write the title on one line, in plain text"))
    for name in _LIST_FIELDS:
        value = item.get(name)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            out.append(Problem(prefix + name, f"must be a list of names, got {_show(value)}",
                               where))
    for name in _TEXT_FIELDS:
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            out.append(Problem(prefix + name, f"must be a text, got {_show(value)}", where))
    schema = item.get("output_schema")
    depth = nesting_depth(schema) if isinstance(schema, (str, dict)) else 0
    if depth > MAX_SCHEMA_DEPTH:
        out.append(Problem(prefix + "output_schema", f"nests {depth} levels deep, more than "
                                                     f"the {MAX_SCHEMA_DEPTH} maker reads", where,
                           fix="keep the schema shallow; describe deeper structure in words, "
                               "e.g. `{files: list of {path, lines}}`"))
    ov = item.get("output_variable")
    if ov is not None and not isinstance(ov, str):
        out.append(Problem(prefix + "output_variable", f"must be a name, got {_show(ov)}", where))
    model = item.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > MODEL_CHARS
                              or not MODEL_PATTERN.fullmatch(model)):
        out.append(Problem(prefix + "model", f"must be a model name, got {_show(model)}", where,
                           fix="write a model alias or id such as `sonnet`, `opus`, `haiku` or "
                               "`claude-sonnet-4-5` (letters, digits, . _ - : / @; at most "
                               f"{MODEL_CHARS} characters), or remove the line to use the "
                               "run's model"))
    out += _votes_problems(item, prefix, where)
    out += _probe_problems(item, prefix, where)
    out += _component_problems(item.get("component"), prefix, where)
    out += writes_problems(item.get("writes"), prefix, where)
    deps = item.get("depends_on")
    if deps is not None and (not isinstance(deps, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in deps)):
        out.append(Problem(prefix + "depends_on", f"must be a list of step numbers, got "
                                                  f"{_show(deps)}", where))
    return out


def _votes_problems(item: dict[str, Any], prefix: str, where: int | None) -> list[Problem]:
    votes = item.get("votes")
    if votes is None:
        return []
    if isinstance(votes, bool) or not isinstance(votes, int) or not 1 <= votes <= MAX_VOTES:
        return [Problem(prefix + "votes", f"must be a whole number from 1 to {MAX_VOTES}, got "
                                          f"{_show(votes)}", where,
                        fix="write the lead the winning answer needs, e.g. `votes: 3`, or "
                            "remove the line")]
    tools = [t for key in ("primary_tools", "fallback_tools")
             for t in (item.get(key) or []) if isinstance(t, str)]
    writes = [t for t in tools if t not in READ_ONLY_TOOLS]
    if votes > 1 and writes and item.get("task_type") == "conditional_step":
        return [Problem(prefix + "votes", f"a vote samples the step several times, and a "
                                          f"conditional step's tools {', '.join(writes)} have "
                                          "side effects", where,
                        fix="vote only on a conditional step whose tools all only read (Read, "
                            "Grep, Glob, WebFetch…): split the deciding part into its own "
                            "step, or remove `votes`")]
    return []  # (a code step's samples each work in a worktree: maker.engine.code_vote)


def _probe_problems(item: dict[str, Any], prefix: str, where: int | None) -> list[Problem]:
    """``probe: true`` only where the step's code is voted on (``maker.engine.code_probe``):
    tools that write, not a conditional step, and no ``votes: 1``."""
    probe, votes = item.get("probe"), item.get("votes")
    if probe is None or probe is False:
        return []
    if not isinstance(probe, bool):
        return [Problem(prefix + "probe", f"must be true or false, got {_show(probe)}", where,
                        fix="write `probe: true` (a vote on the step's code also draws one "
                            "session that writes only tests), or remove the line")]
    tools = [t for key in ("primary_tools", "fallback_tools")
             for t in (item.get(key) or []) if isinstance(t, str)]
    why = ("it has no tool that writes, so its answer is voted on, not its code"
           if only_read(tools) else
           "a conditional step's code is never voted on"
           if item.get("task_type") == "conditional_step" else
           "`votes: 1` turns its vote off" if votes == 1 else "")
    if not why:
        return []  # (votes: K, or none: `maker run --vote K` votes on its code)
    return [Problem(prefix + "probe", "a probe writes tests for a vote on a step's code "
                                      f"(samples in worktrees of their own), and {why}",
                    where, fix="remove `probe`, or give it to an action step whose tools "
                               "write and whose code is voted on (`votes: 2` or more, or "
                               "none and `maker run --vote K`)")]


def _component_problems(value: Any, prefix: str, where: int | None) -> list[Problem]:
    if value is None or (isinstance(value, str) and len(value) <= COMPONENT_CHARS
                         and COMPONENT_PATTERN.fullmatch(value)):
        return []
    name = re.sub(r"[^a-z0-9_]+", "-", value.lower()).strip("-_")[:COMPONENT_CHARS].strip(
        "-_") if isinstance(value, str) else ""
    return [Problem(prefix + "component", f"must be a short name, got {_show(value)}", where,
                    fix=(f"write `component: {name}`" if name else "write a name such as "
                         "`component: api`") + ": a short name of lower-case letters, digits, "
                        f"- and _ (at most {COMPONENT_CHARS} characters) "
                        "that the steps of one part of the plan share; or remove the line, "
                        "and the step is plan-wide")]


UNKNOWN_FIELD = "is not a"
"""How the problem of a field no step (or plan) has begins."""


def unknown_key_problems(keys: Iterable[Any], known: Sequence[str], *, step: int | None = None,
                         prefix: str = "", what: str = "step", typos_only: bool = False,
                         cutoff: float = 0.6) -> list[Problem]:
    """A problem for each key that is not in ``known``, naming the likely one.

    A misspelt key would otherwise be dropped without a word (``primary_tool:`` read
    as no tools at all). ``typos_only`` reports only keys close to a known one (for
    files where other keys have their own meaning).
    """
    out: list[Problem] = []
    for key in keys:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=cutoff)
        if close:
            fix = f"did you mean `{close[0]}`?"
        elif typos_only:
            continue
        else:
            fix = f"remove it; a {what}'s fields are " + ", ".join(known)
        out.append(Problem(prefix + str(key), f"{UNKNOWN_FIELD} {what} field", step, fix=fix))
    return out


def nesting_depth(value: Any) -> int:
    """How deep mappings and lists nest in ``value`` (brackets, for a flow-style text).
    Iterative, so any depth is measured without recursion."""
    if isinstance(value, str):
        return bracket_depth(value)
    depth = 0
    stack = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        depth = max(depth, level + 1)
        stack.extend((child, level + 1) for child in node)
    return depth


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_step(item: dict[str, Any]) -> PlanStep:
    """Build a PlanStep from one structurally valid step mapping."""
    number = item["step"]
    return PlanStep(
        step=number,
        task_type=item["task_type"],
        title=item["title"].strip(),
        task_description=item["task_description"].strip(),
        primary_tools=list(item.get("primary_tools") or []),
        fallback_tools=list(item.get("fallback_tools") or []),
        primary_tool_instructions=(item.get("primary_tool_instructions") or "").strip(),
        fallback_tool_instructions=(item.get("fallback_tool_instructions") or "").strip(),
        input_variables=list(item.get("input_variables") or []),
        output_variable=item.get("output_variable") or f"step_{number}_output",
        output_schema=item["output_schema"],
        next_step_sequence_number=item["next_step_sequence_number"],
        depends_on=list(item["depends_on"]) if item.get("depends_on") is not None else None,
        model=item.get("model") or None,
        votes=item.get("votes"),
        writes=[w.strip() for w in item["writes"]] if item.get("writes") is not None else None,
        component=item.get("component"),
        probe=item.get("probe") is True,
    )


def parse_plan(raw: Any) -> Plan:
    """Parse raw YAML data into a Plan, mapping ``plan`` → ``steps``.

    Raises PlanValidationError (a ValueError) listing every structural problem.
    """
    problems = structure_problems(raw)
    if problems:
        raise PlanValidationError(problems)
    assert isinstance(raw, dict)
    task = raw.get("task")
    return Plan(
        reasoning=raw["reasoning"],
        steps=[parse_step(s) for s in _steps_of(raw)],
        task=task if isinstance(task, str) else "",
        context=read_context(raw)[0],
    )
