"""Plan linter: every rule, the exact message (quoting the offending value), and speed."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.plan_strategies import plan_like, yaml_like
from harness.step_plans import step_data
from maker.core.models import Plan
from maker.planner.linter import lint_plan, lint_text
from maker.tools.registry import ToolRegistry


def step(n: int, **changes: Any) -> dict[str, Any]:
    """A sound step ``n`` that leads to ``n + 1``; pass ``next_step_sequence_number=-1`` to end."""
    return step_data(n, **{
        "title": f"Step {n}",
        "task_description": f"Do part {n} of the work and report the files changed.",
        "primary_tools": ["Read", "Edit"], "fallback_tools": ["Bash"],
        "primary_tool_instructions": "Read first, then edit.",
        "output_schema": "{files: list, summary: string}", **changes})


def plan(*steps: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"reasoning": "Small steps, each verified.", "plan": list(steps), **top}


def chain(count: int, **last: Any) -> list[dict[str, Any]]:
    """``count`` sound steps 0 → 1 → … → end."""
    out = [step(n) for n in range(count)]
    out[-1].update({"next_step_sequence_number": -1, **last})
    return out


def messages(raw: Any, registry: ToolRegistry | None = None) -> list[str]:
    return [str(p) for p in lint_plan(raw, registry)]


# -- sound plans -------------------------------------------------------------------------


def test_a_sound_plan_has_no_problems():
    steps = chain(3)
    steps[1]["input_variables"] = ["step_0_output.files"]
    steps[2]["input_variables"] = ["step_0_output.summary", "step_1_output"]
    steps[2]["primary_tools"] = ["mcp__github__create_issue", "Bash(pytest:*)"]
    steps[2]["depends_on"] = [0, 1]
    assert lint_plan(plan(*steps)) == []


def test_a_conditional_plan_is_sound():
    steps = [step(0, output_schema="{status: string}"),
             step(1, task_type="conditional_step", input_variables=["step_0_output.status"],
                  output_schema="{next_step: int, reason: string}",
                  next_step_sequence_number=-2),
             step(2, next_step_sequence_number=-1)]
    assert lint_plan(plan(*steps)) == []


def test_the_steps_key_works_too():
    assert lint_plan({"reasoning": "r", "steps": chain(2)}) == []


# -- structure comes from the parser; broken steps get no semantic checks ----------------


def test_structure_problems_come_first_and_broken_steps_are_not_checked_further():
    broken = step(1, title=None, primary_tools=["Nope"], input_variables=["step_7_output"])
    assert messages(plan(step(0), broken, step(2, next_step_sequence_number=-1))) == [
        "step 1: title: missing (fix: add `title:` (a short text))",
    ]


def test_a_misspelt_field_does_not_hide_the_steps_other_problems():
    """One problem said per round trip made a person fix a plan five times over."""
    misspelt = step(0, input_variables=["step_5_output"], depends_on=[3])
    misspelt["primary_tool"] = misspelt.pop("primary_tools")
    assert messages(plan(misspelt, step(1, next_step_sequence_number=-1))) == [
        "step 0: primary_tool: is not a step field (fix: did you mean `primary_tools`?)",
        "step 0: input_variables: 'step_5_output' reads 'step_5_output', but there is no "
        "step 5 (fix: read only `step_N_output.<key>` of an earlier step N, or remove it)",
        "step 0: depends_on: depends on step 3, which does not exist (fix: remove 3, or name "
        "an existing earlier step)",
    ]


def test_a_misspelt_required_field_does_not_hide_them_either():
    """Its misspelling is named, and the step is checked as meant (the field it names)."""
    misspelt = step(0, depends_on=[0, 0])
    misspelt["task_descripton"] = misspelt.pop("task_description")
    assert messages(plan(misspelt, step(1, next_step_sequence_number=-1))) == [
        "step 0: task_descripton: is not a step field (fix: did you mean `task_description`?)",
        "step 0: task_description: missing (fix: add `task_description:` (a text))",
        "step 0: depends_on: step 0 depends on itself (fix: remove 0 from depends_on)",
        "step 0: depends_on: step 0 is named twice (fix: name step 0 once in depends_on)",
    ]


@pytest.mark.parametrize(("raw", "expected"), [
    (["a"], "plan: the plan must be a mapping with `reasoning` and `plan`, got a list"),
    ("prose", "plan: the plan must be a mapping with `reasoning` and `plan`, got str"),
    ({"reasoning": "r"}, "plan: no `plan` or `steps` list"),
    ({"reasoning": "r", "plan": "steps"}, "plan: `plan`/`steps` must be a list of steps, got str"),
    ({"reasoning": "r", "plan": []}, "plan: no steps"),
])
def test_plan_level_structure(raw, expected):
    assert any(m.startswith(expected) for m in messages(raw))


# -- numbering ---------------------------------------------------------------------------


def test_duplicate_step_numbers():
    steps = [step(0), step(1, next_step_sequence_number=-1),
             step(1, title="Again", next_step_sequence_number=-1)]
    assert messages(plan(*steps)) == [
        "step 1: step: duplicate step number 1: plan[1] and plan[2] both use it "
        "(fix: give every step its own number: 0, 1, 2, … in order)",
    ]


def test_negative_step_number():
    assert "step -3: step: step numbers must be 0 or more, got -3 (fix: number the steps 0, " \
           "1, 2, … in order)" in messages(plan(step(-3, next_step_sequence_number=-1)))


# -- input_variables ---------------------------------------------------------------------


def test_forward_reference_names_the_producer():
    steps = chain(3)
    steps[0]["input_variables"] = ["step_2_output.files"]
    assert messages(plan(*steps)) == [
        "step 0: input_variables: 'step_2_output.files' is produced by step 2, which comes "
        "later (fix: move step 2 before step 0, or read an earlier step's output)",
    ]


def test_dangling_reference_to_a_missing_step():
    steps = chain(2)
    steps[1]["input_variables"] = ["step_9_output.files"]
    assert messages(plan(*steps)) == [
        "step 1: input_variables: 'step_9_output.files' reads 'step_9_output', but there is "
        "no step 9 (fix: read only `step_N_output.<key>` of an earlier step N, or remove it)",
    ]


def test_dangling_reference_to_an_unknown_name():
    steps = chain(2)
    steps[1]["input_variables"] = ["user_request"]
    assert messages(plan(*steps)) == [
        "step 1: input_variables: 'user_request' reads 'user_request', but no step produces "
        "it (fix: read only `step_N_output.<key>` of an earlier step N, or remove it)",
    ]


def test_reading_its_own_output():
    steps = chain(2)
    steps[1]["input_variables"] = ["step_1_output.files"]
    assert messages(plan(*steps)) == [
        "step 1: input_variables: 'step_1_output.files' reads this step's own output "
        "(fix: remove it: a step cannot read what it has not produced yet)",
    ]


def test_a_key_the_producer_does_not_output():
    steps = chain(2)
    steps[1]["input_variables"] = ["step_0_output.file"]
    assert messages(plan(*steps)) == [
        "step 1: input_variables: 'step_0_output.file': step 0's output_schema has no key "
        "'file' (fix: did you mean step_0_output.files?)",
    ]


def test_a_custom_output_variable_is_refused():
    # Later steps, the brief and the gate find a step's output by its number: a
    # custom name would pass here and then never reach the step that reads it.
    steps = chain(2)
    steps[0]["output_variable"] = "inventory"
    steps[1]["input_variables"] = ["inventory.files", "step_0_output.summary"]
    found = messages(plan(*steps))
    assert found[0] == ("step 0: output_variable: 'inventory' is not this step's output "
                        "name: outputs are named step_<N>_output (fix: use 'step_0_output', "
                        "and refer to it as step_0_output.<key>)")
    assert any("'inventory.files'" in m for m in found[1:])


def test_indexing_reads_the_root_name():
    steps = chain(2)
    steps[1]["input_variables"] = ["step_0_output[0]", "step_0_output.files[1]"]
    assert lint_plan(plan(*steps)) == []


# -- output_variable ---------------------------------------------------------------------


def test_output_variable_naming_another_step():
    steps = chain(2)
    steps[1]["output_variable"] = "step_0_output"
    assert messages(plan(*steps)) == [
        "step 1: output_variable: 'step_0_output' is the name of step 0's output "
        "(fix: use 'step_1_output')",
    ]


def test_output_variable_used_twice():
    steps = chain(2)
    steps[0]["output_variable"] = steps[1]["output_variable"] = "result"
    assert [m.split(":")[0] for m in messages(plan(*steps))] == ["step 0", "step 1"]


# -- next_step_sequence_number -----------------------------------------------------------


def test_next_points_nowhere():
    steps = chain(2)
    steps[0]["next_step_sequence_number"] = 7
    assert messages(plan(*steps))[0] == (
        "step 0: next_step_sequence_number: there is no step 7 (fix: use an existing step "
        "number, -1 (end) or -2 (decided by a conditional step's output))")


def test_runtime_decided_only_on_a_conditional_step():
    steps = chain(2)
    steps[0]["next_step_sequence_number"] = -2
    assert messages(plan(*steps)) == [
        "step 0: next_step_sequence_number: -2 (decided at run time) is only for a "
        "conditional_step, but this step is 'action_step' (fix: give the next step's number, "
        "or -1 to end; or make this a conditional_step whose output has `next_step`)",
    ]


@pytest.mark.parametrize("value", [-3, -100])
def test_other_negative_next_values(value):
    steps = chain(2)
    steps[1]["next_step_sequence_number"] = value
    assert f"step 1: next_step_sequence_number: there is no step {value}" in \
        messages(plan(*steps))[0]


def test_conditional_step_must_output_next_step():
    steps = [step(0), step(1, task_type="conditional_step", output_schema="{reason: string}",
                          next_step_sequence_number=-2)]
    assert messages(plan(*steps)) == [
        "step 1: output_schema: a conditional_step must output `next_step`, but its "
        "output_schema '{reason: string}' has no next_step (fix: add `next_step: int` (the "
        "step to run next, or -1 to end))",
    ]


def test_conditional_schema_as_mapping():
    steps = [step(0), step(1, task_type="conditional_step",
                          output_schema={"next_step": "int", "why": "string"},
                          next_step_sequence_number=-2)]
    assert lint_plan(plan(*steps)) == []


# -- tools -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "hint"), [
    ("bash", "did you mean 'Bash'? "),
    ("Reed", "did you mean 'Read'? "),
    ("WebFetcher", "did you mean 'WebFetch'? "),
    ("Teleport", ""),
    ("mcp__github", ""),
])
def test_unknown_tool_is_quoted_with_the_closest_name(name, hint):
    steps = chain(1)
    steps[0]["primary_tools"] = ["Read", name]
    assert messages(plan(*steps)) == [
        f"step 0: primary_tools: unknown tool {name!r} (fix: {hint}use a Claude Code tool "
        "name or an MCP tool named mcp__<server>__<tool>)",
    ]


def test_unknown_fallback_tool():
    steps = chain(1)
    steps[0]["fallback_tools"] = ["Shell"]
    assert messages(plan(*steps))[0].startswith("step 0: fallback_tools: unknown tool 'Shell'")


def test_a_custom_registry():
    registry = ToolRegistry()
    registry.register_builtin("Read", "Read files")
    steps = chain(1)
    steps[0]["primary_tools"] = ["Read", "Edit"]
    steps[0]["fallback_tools"] = []
    assert messages(plan(*steps), registry) == [
        "step 0: primary_tools: unknown tool 'Edit' (fix: use a Claude Code tool name or an "
        "MCP tool named mcp__<server>__<tool>)",
    ]


# -- placeholders ------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "text", "found"), [
    ("task_description", "TBD", "placeholder text 'TBD'"),
    ("task_description", "Fix the TODO items in auth.py",
     "placeholder text 'TODO' in 'Fix the TODO items in auth.py'"),
    ("title", "FIXME", "placeholder text 'FIXME'"),
    ("task_description", "...", "placeholder text '...' (only an ellipsis)"),
    ("task_description", " … ", "placeholder text '…' (only an ellipsis)"),
    ("task_description", "Same as step 0",
     "placeholder text 'Same as step 0' (step 0's text is not visible to this step)"),
    ("task_description", "Do it similar to step 0 but for users",
     "placeholder text 'similar to step 0' (step 0's text is not visible to this step) in "
     "'Do it similar to step 0 but for users'"),
    ("primary_tool_instructions", "same as step #0",
     "placeholder text 'same as step #0' (step 0's text is not visible to this step)"),
])
def test_placeholders(field, text, found):
    steps = chain(2)
    steps[1][field] = text
    assert messages(plan(*steps)) == [
        f"step 1: {field}: {found} (fix: write it out in full: each step runs in a fresh "
        "subagent that sees only its own step)",
    ]


@pytest.mark.parametrize("text", [
    "Build the todo list view", "Use the same file as step 0's output",
    "Compare with the same as step 0 output", "Step through the code", "Wait...then retry",
])
def test_not_placeholders(text):
    steps = chain(2)
    steps[1]["task_description"] = text
    assert lint_plan(plan(*steps)) == []


def test_placeholder_reasoning():
    assert messages(plan(*chain(1), reasoning="TBD")) == [
        "reasoning: placeholder text 'TBD' (fix: explain why the steps are these)",
    ]


# -- output_schema -----------------------------------------------------------------------


@pytest.mark.parametrize("schema", ["{[}", "just some words", "{a: [}"])
def test_unreadable_schema(schema):
    steps = chain(1, output_schema=schema)
    assert messages(plan(*steps)) == [
        f"step 0: output_schema: cannot read the schema {schema!r} (fix: write it as a "
        "mapping, or as a text like \"{key: type, other: type}\")",
    ]


# -- depends_on --------------------------------------------------------------------------


@pytest.mark.parametrize(("deps", "expected"), [
    ([5], "step 1: depends_on: depends on step 5, which does not exist (fix: remove 5, or "
          "name an existing earlier step)"),
    ([2], "step 1: depends_on: depends on step 2, which comes later (fix: move step 2 before "
          "step 1, or remove 2 from depends_on)"),
    ([1], "step 1: depends_on: step 1 depends on itself (fix: remove 1 from depends_on)"),
    ([0, 0], "step 1: depends_on: step 0 is named twice (fix: name step 0 once in depends_on)"),
])
def test_depends_on(deps, expected):
    steps = chain(3)
    steps[1]["depends_on"] = deps
    assert messages(plan(*steps)) == [expected]


# -- a plan must end ---------------------------------------------------------------------


def test_a_loop_that_never_ends():
    steps = [step(0), step(1, next_step_sequence_number=0)]
    assert messages(plan(*steps)) == [
        "step 1: next_step_sequence_number: 0 closes the loop 0 → 1 → 0: starting at step 0, "
        "the plan never reaches -1 (end) (fix: point the last step's "
        "next_step_sequence_number at -1, or make a step in the loop a conditional_step (-2) "
        "that can end it)",
    ]


def test_a_step_that_points_to_itself():
    steps = [step(0), step(1, next_step_sequence_number=1), step(2, next_step_sequence_number=-1)]
    assert messages(plan(*steps))[0].startswith(
        "step 1: next_step_sequence_number: 1 closes the loop 1 → 1:")


def test_a_long_loop_is_abbreviated():
    steps = chain(30)
    steps[-1]["next_step_sequence_number"] = 0
    (message,) = messages(plan(*steps))
    assert "0 closes the loop 0 → 1 → 2 → 3 → 4 → … → 26 → 27 → 28 → 29 → 0" in message


def test_a_loop_through_a_conditional_can_end():
    steps = [step(0), step(1, task_type="conditional_step", next_step_sequence_number=-2,
                          output_schema="{next_step: int}"),
             step(2, next_step_sequence_number=0)]
    assert lint_plan(plan(*steps)) == []


def test_steps_that_never_run():
    steps = chain(4)
    steps[1]["next_step_sequence_number"] = -1
    assert messages(plan(*steps)) == [
        "plan: steps 2, 3 never run: following next_step_sequence_number from step 0 ends at "
        "step 1 (-1) first (fix: point step 1's next_step_sequence_number at the next step "
        "instead of -1, or remove the steps that never run)",
    ]


def test_every_problem_at_once():
    steps = [step(0, input_variables=["step_1_output.files"], primary_tools=["Bsh"]),
             step(0, task_description="TBD", next_step_sequence_number=2),
             step(2, next_step_sequence_number=9)]
    found = messages(plan(*steps))
    assert [m.split(" (fix:")[0] for m in found] == [
        "step 0: step: duplicate step number 0: plan[0] and plan[1] both use it",
        "step 0: input_variables: 'step_1_output.files' reads 'step_1_output', but there is "
        "no step 1",
        "step 0: next_step_sequence_number: there is no step 1",
        "step 0: primary_tools: unknown tool 'Bsh'",
        "step 0: task_description: placeholder text 'TBD'",
        "step 2: next_step_sequence_number: there is no step 9",
    ]


# -- lint_text ---------------------------------------------------------------------------


def test_lint_text_returns_the_plan():
    text = yaml.safe_dump(plan(*chain(2), task="Ship it"))
    parsed, problems = lint_text(f"Here is the plan:\n```yaml\n{text}```\n")
    assert problems == []
    assert isinstance(parsed, Plan)
    assert parsed.task == "Ship it" and [s.step for s in parsed.steps] == [0, 1]


@pytest.mark.parametrize(("raw", "expected"), [
    (b"\xff\xfe", "yaml: line 1: the answer is not UTF-8 (byte 0xff at offset 0)"),
    ("", "yaml: the answer is empty: expected a YAML document"),
    ("reasoning: [unclosed\nplan: x\n", "yaml: line 2: invalid YAML"),
])
def test_lint_text_turns_yaml_errors_into_one_problem(raw, expected):
    parsed, problems = lint_text(raw)
    assert parsed is None and len(problems) == 1
    assert str(problems[0]).startswith(expected)
    assert str(problems[0]).endswith("(fix: answer with the plan YAML only: `reasoning:` and "
                                     "`plan:`)")


def test_lint_text_lists_plan_problems():
    text = yaml.safe_dump(plan(*chain(1, primary_tools=["Nope"])))
    parsed, problems = lint_text(text)
    assert parsed is None
    assert [str(p) for p in problems] == [
        "step 0: primary_tools: unknown tool 'Nope' (fix: use a Claude Code tool name or an "
        "MCP tool named mcp__<server>__<tool>)"]


# -- properties and speed ----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(yaml_like)
def test_lint_plan_never_raises_on_any_data(raw):
    assert all(str(p) for p in lint_plan(raw))


@settings(max_examples=300, deadline=None)
@given(plan_like)
def test_lint_plan_never_raises_on_plan_shaped_data(raw):
    problems = lint_plan(raw)
    assert all(str(p) for p in problems)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300) | plan_like.map(lambda raw: yaml.safe_dump(raw)))
def test_lint_text_never_raises(text):
    parsed, problems = lint_text(text)
    assert (parsed is None) == bool(problems)


def _big_plan(count: int) -> dict[str, Any]:
    steps = chain(count)
    for n in range(1, count):
        steps[n]["input_variables"] = [f"step_{n - 1}_output.files"] + (
            [f"step_{n - 5}_output.summary"] if n >= 5 else [])
    return plan(*steps)


def test_a_10000_step_loop_is_found_without_recursion():
    raw = _big_plan(10_000)
    raw["plan"][-1]["next_step_sequence_number"] = 0
    (message,) = messages(raw)
    assert "closes the loop 0 → 1 → 2 → 3 → 4 → … → 9996 → 9997 → 9998 → 9999 → 0" in message


def test_the_planner_is_told_every_rule_the_linter_enforces() -> None:
    """Each rule the linter checks (by the field it names) is stated in the planner's
    prompt, so a model can get it right the first time."""
    from pathlib import Path

    prompt = (Path(__file__).parents[2] / "agents" / "planner.md").read_text()
    rules = prompt.split("Rules that the validator enforces:", 1)[1]
    for said in ("0 or more", "unique", "misspelt or unknown\n  field", "`step_<N>_output`",
                 "step M's `output_schema`", "`depends_on`", "every step must",
                 "`next_step`", "mcp__<server>__<tool>", "no placeholders",
                 # (a code step's vote and probe: when, where, and what they cost)
                 "`votes: K`", "`probe: true`", "K to\n  4·K", "pytest projects only",
                 "never on a conditional step"):
        assert said in rules, said
