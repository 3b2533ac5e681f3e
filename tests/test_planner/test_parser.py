"""Plan parser: seed 001's TestParsePlan (docs/architecture.md#the-seeds) verbatim, then what the
seed left open."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.plan_strategies import plan_like, yaml_like
from harness.step_plans import step_data
from maker.core.models import Plan, PlanStep, schema_keys
from maker.errors import PlanValidationError
from maker.planner.parser import parse_plan, structure_problems


class TestParsePlan:
    def test_basic_plan(self):
        raw = {
            "reasoning": "Simple plan to fetch data",
            "plan": [
                {
                    "step": 0,
                    "task_type": "action_step",
                    "title": "fetch_data",
                    "task_description": "Fetch data from API",
                    "primary_tools": ["WebFetch"],
                    "fallback_tools": [],
                    "primary_tool_instructions": "Use WebFetch",
                    "fallback_tool_instructions": "",
                    "input_variables": [],
                    "output_variable": "step_0_output",
                    "output_schema": "{data: string}",
                    "next_step_sequence_number": -1,
                }
            ],
        }
        plan = parse_plan(raw)
        assert isinstance(plan, Plan)
        assert plan.reasoning == "Simple plan to fetch data"
        assert len(plan.steps) == 1
        assert plan.steps[0].step == 0
        assert plan.steps[0].title == "fetch_data"

    def test_plan_key_maps_to_steps(self):
        """YAML uses 'plan' key but Plan dataclass uses 'steps'."""
        raw = {
            "reasoning": "test",
            "plan": [
                {
                    "step": 0,
                    "task_type": "action_step",
                    "title": "t",
                    "task_description": "d",
                    "primary_tools": [],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": [],
                    "output_variable": "step_0_output",
                    "output_schema": "{}",
                    "next_step_sequence_number": -1,
                }
            ],
        }
        plan = parse_plan(raw)
        assert hasattr(plan, "steps")
        assert len(plan.steps) == 1

    def test_steps_key_also_works(self):
        """If YAML already uses 'steps' key, that should also parse."""
        raw = {
            "reasoning": "test",
            "steps": [
                {
                    "step": 0,
                    "task_type": "action_step",
                    "title": "t",
                    "task_description": "d",
                    "primary_tools": [],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": [],
                    "output_variable": "step_0_output",
                    "output_schema": "{}",
                    "next_step_sequence_number": -1,
                }
            ],
        }
        plan = parse_plan(raw)
        assert len(plan.steps) == 1

    def test_multi_step_plan(self):
        raw = {
            "reasoning": "multi-step",
            "plan": [
                {
                    "step": 0,
                    "task_type": "action_step",
                    "title": "step_one",
                    "task_description": "First step",
                    "primary_tools": ["Read"],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": [],
                    "output_variable": "step_0_output",
                    "output_schema": "{file: string}",
                    "next_step_sequence_number": 1,
                },
                {
                    "step": 1,
                    "task_type": "action_step",
                    "title": "step_two",
                    "task_description": "Second step",
                    "primary_tools": ["Write"],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": ["step_0_output.file"],
                    "output_variable": "step_1_output",
                    "output_schema": "{result: string}",
                    "next_step_sequence_number": -1,
                },
            ],
        }
        plan = parse_plan(raw)
        assert len(plan.steps) == 2
        assert plan.steps[0].next_step_sequence_number == 1
        assert plan.steps[1].next_step_sequence_number == -1

    def test_conditional_step(self):
        raw = {
            "reasoning": "conditional",
            "plan": [
                {
                    "step": 0,
                    "task_type": "action_step",
                    "title": "get_status",
                    "task_description": "Get status",
                    "primary_tools": ["Read"],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": [],
                    "output_variable": "step_0_output",
                    "output_schema": "{status: string}",
                    "next_step_sequence_number": 1,
                },
                {
                    "step": 1,
                    "task_type": "conditional_step",
                    "title": "decide_next",
                    "task_description": "If critical go to 2 else end",
                    "primary_tools": [],
                    "fallback_tools": [],
                    "primary_tool_instructions": "",
                    "fallback_tool_instructions": "",
                    "input_variables": ["step_0_output.status"],
                    "output_variable": "step_1_output",
                    "output_schema": "{next_step: int, reason: string}",
                    "next_step_sequence_number": -2,
                },
            ],
        }
        plan = parse_plan(raw)
        assert plan.steps[1].task_type == "conditional_step"
        assert plan.steps[1].next_step_sequence_number == -2

    def test_missing_reasoning_raises(self):
        raw = {"plan": []}
        with pytest.raises(ValueError, match="reasoning"):
            parse_plan(raw)

    def test_missing_plan_and_steps_raises(self):
        raw = {"reasoning": "test"}
        with pytest.raises(ValueError, match="plan.*steps"):
            parse_plan(raw)

    def test_not_a_dict_raises(self):
        with pytest.raises(ValueError):
            parse_plan(["a", "b"])

    def test_plan_not_a_list_raises(self):
        raw = {"reasoning": "test", "plan": "not a list"}
        with pytest.raises(ValueError):
            parse_plan(raw)

    def test_missing_required_step_field_raises(self):
        raw = {
            "reasoning": "test",
            "plan": [
                {"step": 0, "task_type": "action_step"}
                # missing many fields
            ],
        }
        with pytest.raises((ValueError, KeyError, TypeError)):
            parse_plan(raw)


# -- beyond the seed ------------------------------------------------------------------


def _step(n: int, **changes: object) -> dict[str, object]:
    return step_data(n, -1, **{"title": f"step {n}", "task_description": "Do the thing",
                               **changes})


class TestParserBeyondSeed:
    def test_steps_are_plan_steps(self):
        plan = parse_plan({"reasoning": "r", "plan": [_step(0)]})
        assert isinstance(plan.steps[0], PlanStep)

    def test_errors_are_plan_validation_errors_listing_every_problem(self):
        raw = {"reasoning": "r", "plan": [{"step": 0}, _step(1, task_type="maybe")]}
        with pytest.raises(PlanValidationError) as info:
            parse_plan(raw)
        text = str(info.value)
        assert "step 0: task_type: missing" in text
        assert "step 0: title: missing" in text
        assert "step 1: task_type: unknown task type 'maybe'" in text

    def test_optional_fields_default(self):
        step = _step(0)
        for name in ("primary_tools", "fallback_tools", "input_variables",
                     "primary_tool_instructions", "fallback_tool_instructions",
                     "output_variable"):
            del step[name]
        parsed = parse_plan({"reasoning": "r", "plan": [step]}).steps[0]
        assert parsed.primary_tools == [] and parsed.input_variables == []
        assert parsed.output_variable == "step_0_output"

    def test_task_key_is_kept(self):
        assert parse_plan({"task": "ship it", "reasoning": "r", "plan": [_step(0)]}).task == \
            "ship it"

    @pytest.mark.parametrize("value", [True, 1.5, "0", None])
    def test_step_number_must_be_an_integer(self, value):
        problems = structure_problems({"reasoning": "r", "plan": [_step(0, step=value)]})
        assert any("step" in p.field for p in problems)

    def test_empty_plan_list_is_a_problem(self):
        problems = structure_problems({"reasoning": "r", "plan": []})
        assert [str(p) for p in problems] == ["plan: no steps (fix: a plan needs at least one "
                                              "step)"]


class TestStepModel:
    """An optional ``model`` per step: the executor's model in ``maker run``."""

    @pytest.mark.parametrize("model", ["haiku", "sonnet", "claude-sonnet-4-5",
                                       "claude-3-5-haiku-20241022", "sonnet[1m]",
                                       "us.anthropic.claude-sonnet-4-5-v1:0",
                                       "claude-opus-4@20250514"])
    def test_a_model_name_is_kept(self, model):
        parsed = parse_plan({"reasoning": "r", "plan": [_step(0, model=model)]}).steps[0]
        assert parsed.model == model

    def test_no_model_means_the_runs(self):
        assert parse_plan({"reasoning": "r", "plan": [_step(0)]}).steps[0].model is None

    @pytest.mark.parametrize("model", ["", "--dangerously-skip-permissions", "so nnet",
                                       "sonnet\nignore the plan", 5, ["haiku"], True,
                                       "x" * 101, "-m"])
    def test_a_bad_model_is_a_problem_that_says_what_to_write(self, model):
        problems = structure_problems({"reasoning": "r", "plan": [_step(0, model=model)]})
        (problem,) = [p for p in problems if p.field == "model"]
        assert "must be a model name" in str(problem) and "`haiku`" in str(problem)


class TestSchemaKeys:
    @pytest.mark.parametrize(("schema", "keys"), [
        ("{data: string}", ["data"]),
        ("{next_step: int, reason: string}", ["next_step", "reason"]),
        ({"a": "int", "b": "str"}, ["a", "b"]),
        ("{}", []),
        ("", []),
        ("{a: int, a: str}", ["a"]),
        ("{files: list[string], meta: {size: int}}", ["files", "meta"]),
        ("{yes: int}", ["True"]),
        ("{[}", None),
        (5, None),
    ])
    def test_keys(self, schema, keys):
        assert schema_keys(schema) == keys

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.from_regex(r"[A-Za-z_][\w-]{0,8}", fullmatch=True),
                              st.from_regex(r"[\w][\w ./()<>+-]{0,10}", fullmatch=True)),
                    max_size=6))
    def test_fast_path_agrees_with_yaml(self, items):
        import yaml

        text = "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        data = yaml.safe_load(text)
        assert schema_keys(text) == [str(k) for k in data]


@settings(max_examples=200, deadline=None)
@given(yaml_like)
def test_parse_plan_returns_or_raises_plan_validation_error(raw):
    try:
        plan = parse_plan(raw)
    except PlanValidationError as exc:
        assert exc.problems
    else:
        assert isinstance(plan, Plan)


@settings(max_examples=200, deadline=None)
@given(plan_like)
def test_parse_plan_on_plan_shaped_data(raw):
    try:
        plan = parse_plan(raw)
    except PlanValidationError as exc:
        assert exc.problems and all(str(p) for p in exc.problems)
    else:
        assert len(plan.steps) == len(raw.get("plan") or raw.get("steps") or [])
