"""Hypothesis strategies for plan-shaped and arbitrary YAML-ish data (shared by tests)."""

from __future__ import annotations

from hypothesis import strategies as st

_scalars = (st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=False)
            | st.text(max_size=12))
_keys = st.sampled_from(["step", "plan", "steps", "reasoning", "title", "next_step", "a", "b"]) \
    | st.text(max_size=6)

# Arbitrary nested data of the kinds YAML produces.
yaml_like = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(_keys, children, max_size=4),
    max_leaves=25,
)

_names = st.sampled_from(["Read", "Bash", "bash", "Reed", "mcp__gh__issue", "mcp__", "",
                          "Bash(git log:*)"])
_vars = st.sampled_from(["step_0_output", "step_1_output.file", "step_9_output.x", "foo",
                         "step_2_output[0]", "", ".", "step_0_output.missing"])
_texts = st.sampled_from(["Do it", "TBD", "...", "same as step 1", "similar to step 0's output",
                          "", "  ", "fix the TODO list"]) | st.text(max_size=20)
_schemas = st.sampled_from(["{result: string}", "{next_step: int, reason: string}", "{}",
                            "{[}", "x: [", "", "{a: {b: c}}"]) | yaml_like


def _step_values(n: int) -> st.SearchStrategy[dict[str, object]]:
    fields = {
        "step": st.integers(-2, 6) | st.just(n) | yaml_like,
        "task_type": st.sampled_from(["action_step", "conditional_step", "other"]) | yaml_like,
        "title": _texts | yaml_like,
        "task_description": _texts | yaml_like,
        "primary_tools": st.lists(_names, max_size=3) | yaml_like,
        "fallback_tools": st.lists(_names, max_size=2),
        "primary_tool_instructions": _texts,
        "fallback_tool_instructions": _texts | st.none(),
        "input_variables": st.lists(_vars, max_size=3) | yaml_like,
        "output_variable": st.sampled_from([f"step_{n}_output", "step_0_output", "out", ""])
        | yaml_like,
        "output_schema": _schemas,
        "next_step_sequence_number": st.integers(-3, 6) | yaml_like,
        "depends_on": st.none() | st.lists(st.integers(-1, 6), max_size=3) | yaml_like,
    }
    # Each field present or missing.
    return st.fixed_dictionaries({}, optional=fields)


# Data shaped like a plan, mostly well-formed, with every field sometimes wrong.
plan_like = st.integers(0, 6).flatmap(
    lambda count: st.fixed_dictionaries(
        {"reasoning": st.text(max_size=10) | yaml_like,
         "plan": st.tuples(*[_step_values(n) for n in range(count)]).map(list) | yaml_like},
        optional={"task": st.text(max_size=10) | yaml_like},
    )
)
