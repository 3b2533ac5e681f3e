"""The data model: a plan, its steps, a step's result and its handoff.

Field names follow seeds 000/001 (the planner's YAML; docs/architecture.md#the-seeds),
docs/plan-format.md (a step's file) and docs/protocol.md#the-handoff (a handoff).
These are plain dataclasses: validation lives in the parser, the linter and the gate,
which report every problem at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

from maker.core.agent_context import AgentContext
from maker.errors import YAMLCleanError
from maker.yaml_cleaner.load import load_yaml

__all__ = [
    "ACTION_STEP",
    "CONDITIONAL_STEP",
    "END",
    "HANDOFF_STATUSES",
    "RUNTIME_DECIDED",
    "TASK_TYPES",
    "AgentResult",
    "Evidence",
    "Handoff",
    "Plan",
    "PlanStep",
    "TaskConfig",
    "schema_keys",
    "step_refs",
]

ACTION_STEP = "action_step"
CONDITIONAL_STEP = "conditional_step"
TASK_TYPES = (ACTION_STEP, CONDITIONAL_STEP)

END = -1  # next_step_sequence_number: the plan ends after this step
RUNTIME_DECIDED = -2  # next_step_sequence_number: a conditional step's output decides

HANDOFF_STATUSES: tuple[str, ...] = ("complete", "blocked", "failed")


@dataclass
class PlanStep:
    """One typed step of a plan, as the planner writes it (seed 001)."""

    step: int
    task_type: str
    title: str
    task_description: str
    primary_tools: list[str]
    fallback_tools: list[str]
    primary_tool_instructions: str
    fallback_tool_instructions: str
    input_variables: list[str]
    output_variable: str
    output_schema: Any
    next_step_sequence_number: int
    # Optional: explicit dependencies. When None, the store derives them
    # (referenced outputs plus the step that leads here).
    depends_on: list[int] | None = None
    # Optional: the model this step's executor runs on in `maker run` (None: the run's
    # --model, else the Claude Code default). Checked by the parser (MODEL_PATTERN).
    model: str | None = None
    # Optional: a vote on this step's answer: the lead the winning answer
    # needs among isolated samples. Only for a step whose answer can be sampled without
    # side effects (a conditional step, or read-only tools); the parser checks it.
    votes: int | None = None
    # Optional: the paths or globs (relative to the project root) the step will change
    # (``maker.planner.writes``). None: it says nothing, and runs alone.
    writes: list[str] | None = None
    # Optional: the part of the plan the step belongs to (``api``, ``billing-ui``). Its
    # brief then carries the NOTES.md facts of its component, of the steps it depends on
    # and the plan-wide ones (``maker.store.fact_scope``). Checked by the parser.
    component: str | None = None
    # Optional: a vote on this step's code also draws a probe, one more session that
    # writes only tests of the step's interface, which every sample then runs
    # (``maker.engine.code_probe``). Only where the step's code is voted on; the parser
    # checks it.
    probe: bool = False

    # A spec a store keeps (``maker.store.records.kept``) is shared by every record of
    # its step, handed out or kept: nothing may change it in place.
    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_frozen"):
            _refuse_spec(self)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get("_frozen"):
            _refuse_spec(self)
        object.__delattr__(self, name)

    @property
    def is_conditional(self) -> bool:
        return self.task_type == CONDITIONAL_STEP

    @property
    def tools(self) -> list[str]:
        """The tools a step's executor may use: primary, fallback, and AskUserQuestion."""
        out: list[str] = []
        for name in [*self.primary_tools, *self.fallback_tools, "AskUserQuestion"]:
            if name not in out:
                out.append(name)
        return out


def _refuse_spec(spec: PlanStep) -> NoReturn:
    raise AttributeError(
        f"step {spec.step}'s spec is the store's, shared by every record of the step: give "
        "your record (the copy that StoredPlan.get() returns) a new one "
        "(dataclasses.replace)")


@dataclass
class Plan:
    """A plan: the planner's reasoning and its steps (YAML key ``plan`` → ``steps``)."""

    reasoning: str
    steps: list[PlanStep]
    task: str = ""
    # What the planner left for the steps (seed 002's context fields): its facts go to
    # NOTES.md when the plan is written (``maker.store.plan_store.PlanStore.write_plan``).
    context: AgentContext = field(default_factory=AgentContext)

    def step(self, number: int) -> PlanStep:
        for s in self.steps:
            if s.step == number:
                return s
        raise KeyError(number)


@dataclass
class TaskConfig:
    """How a task is run headless."""

    instruction: str
    model: str | None = None
    max_turns: int | None = None
    cwd: str | None = None
    max_output_chars: int = 20_000
    strict: bool = False


@dataclass
class AgentResult:
    """What one isolated agent call produced (seed 000)."""

    output: Any
    raw_response: str
    was_repaired: bool = False
    tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    error: str | None = None
    session_id: str | None = None  # the SDK session's, so a fix can resume it
    # The tokens as the SDK's result split them (input, output, cache creation, cache
    # read); ``tokens`` is their sum. Empty when the SDK reported no usage.
    usage: dict[str, int] = field(default_factory=dict)
    cost_known: bool = True  # False: the SDK reported no cost (``cost_usd`` is then 0)


@dataclass
class Evidence:
    """One verification command that ran, and how it ended."""

    command: str
    exit_code: int
    kind: str = ""
    duration_s: float = 0.0
    output_tail: str = ""


@dataclass
class Handoff:
    """The executor's deliverable for one step (docs/protocol.md#the-handoff), accepted
    through the gate."""

    step: int
    status: str
    output: dict[str, Any]
    summary: str = ""
    discoveries: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    for_next_agent: str = ""
    files_changed: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    # The edge-case sweep (seed 004): notes for later steps, and changes of scope
    # proposed to the user (``maker.handoff.sweep``).
    edge_cases: list[tuple[int, str]] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)
    # The sweep's own record: the cases it considered and what it found (None: no
    # record; a complete handoff of a step that can write needs one).
    sweep: dict[str, list[str]] | None = None
    # Why no test the step added can fail on the code before it (a change that keeps
    # behaviour: a refactor); "" when none is said (``maker.handoff.on_base``).
    behaviour_kept: str = ""


_STEP_REF = re.compile(r"^step_(\d+)_output(?:\.|$)")
_SCHEMA_KEY = re.compile(r"([A-Za-z_][\w-]*)\s*:")
# One ``key: value`` of a flat flow mapping whose YAML reading is unambiguous:
# a plain key that YAML does not turn into a bool or null, and a plain word-ish value.
_FLAT_ITEM = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*:(?:\s+[\w][\w ./()<>+-]*)?\s*$")
_NOT_PLAIN_KEYS = frozenset({"yes", "no", "true", "false", "on", "off", "null", "y", "n"})


def step_refs(input_variables: list[str]) -> list[int]:
    """The step numbers an input variable list refers to (``step_3_output.x`` → 3), in order."""
    out: list[int] = []
    for var in input_variables:
        m = _STEP_REF.match(var.strip()) if isinstance(var, str) else None
        if m and int(m.group(1)) not in out:
            out.append(int(m.group(1)))
    return out


def schema_keys(output_schema: Any) -> list[str] | None:
    """The top-level keys an output schema requires, or None if it cannot be read.

    The planner writes schemas as a mapping or as a flow-style string such as
    ``"{next_step: int, reason: string}"``; both give ``["next_step", "reason"]``.
    """
    if isinstance(output_schema, dict):
        return [str(k) for k in output_schema]
    if not isinstance(output_schema, str):
        return None
    text = output_schema.strip()
    if not text:
        return []
    flat = _flat_flow_keys(text)
    if flat is not None:
        return flat
    try:  # the one guarded parse (deep nesting, alias bombs, huge numbers)
        data = load_yaml(text, unique_keys=False)  # a repeated key: YAML keeps the last
    except YAMLCleanError:
        data = None
    if isinstance(data, dict):
        return [str(k) for k in data]
    if data is None and text in ("{}", "~", "null"):
        return []
    inner = text[1:-1] if text.startswith("{") and text.endswith("}") else None
    if inner is None:
        return None
    # Flow text that YAML refuses (e.g. nested brackets in a type): read the top level.
    keys: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(inner + ","):
        if ch in "[{(<":
            depth += 1
        elif ch in "]})>":
            depth -= 1
        elif ch == "," and depth == 0:
            m = _SCHEMA_KEY.match(inner[start:i].strip())
            if m:
                keys.append(m.group(1))
            start = i + 1
    return list(dict.fromkeys(keys)) or None


def _flat_flow_keys(text: str) -> list[str] | None:
    """The keys of a simple ``{a: type, b: type}`` text without a YAML parse, else None.

    Plans hold thousands of such schemas; a YAML parse each costs far more than the
    rest of linting a step.
    """
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        return None
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    keys: list[str] = []
    for part in inner.split(","):
        m = _FLAT_ITEM.match(part)
        if m is None or m.group(1).lower() in _NOT_PLAIN_KEYS:
            return None
        keys.append(m.group(1))
    return list(dict.fromkeys(keys))
