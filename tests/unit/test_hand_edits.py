"""Hand edits and planner slips that used to be dropped silently or end in a traceback.

Each is one error naming the file (or step), the field and the fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import linear
from maker.cli.main import cli
from maker.planner.linter import lint_text
from maker.planner.parser import MAX_SCHEMA_DEPTH

PLAN = """task: Build it
reasoning: Two steps.
plan:
  - step: 1
    task_type: action_step
    title: Write the file
    task_description: Write it.
    primary_tools: [Write]
    output_schema: "{result: string}"
    next_step_sequence_number: 2
  - step: 2
    task_type: action_step
    title: Check the file
    task_description: Check it.
    primary_tools: [Read]
    input_variables: [step_1_output.result]
    output_schema: "{result: string}"
    next_step_sequence_number: -1
"""


def messages(text: str) -> list[str]:
    plan, problems = lint_text(text)
    assert (plan is None) == bool(problems)
    return [str(p) for p in problems]


def test_a_sound_plan_has_no_problems() -> None:
    assert messages(PLAN) == []
    assert messages(PLAN.replace("plan:", "steps:")) == []  # the seed's other name


@pytest.mark.parametrize(("edit", "expected"), [
    (("primary_tools: [Write]", "primary_tool: [Write]"),
     "step 1: primary_tool: is not a step field (fix: did you mean `primary_tools`?)"),
    (("    next_step_sequence_number: -1", "    next_step_sequence_number: -1\n    dependson: [1]"),
     "step 2: dependson: is not a step field (fix: did you mean `depends_on`?)"),
    (("    task_description: Check it.", "    task_description: Check it.\n    colour: red"),
     "step 2: colour: is not a step field (fix: remove it; a step's fields are step, "
     "task_type, title"),
    (("reasoning: Two steps.", "reasonning: Two steps."),
     "reasonning: is not a plan field (fix: did you mean `reasoning`?)"),
    (("task: Build it", "budget: 5"),
     "budget: is not a plan field (fix: remove it; a plan's fields are task, reasoning, plan, "
     "steps, summary, discoveries, blockers, decisions, for_next_agent)"),
])
def test_unknown_keys_in_a_planners_plan_are_errors_with_the_likely_name(
        edit: tuple[str, str], expected: str) -> None:
    found = messages(PLAN.replace(*edit))
    assert any(m.startswith(expected) for m in found), found


def test_the_cli_refuses_a_misspelt_tool_list(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["plan", "lint", "-"],
                                input=PLAN.replace("primary_tools: [Write]",
                                                   "primary_tool: [Write]"))
    assert result.exit_code == 1
    assert "did you mean `primary_tools`?" in result.output


@pytest.mark.parametrize("schema", [
    "'" + "{a: " * 3000 + "x" + "}" * 3000 + "'",    # a text: the loaders would recurse
    "{a: " * 450 + "x" + "}" * 450,                  # a mapping: the brief would recurse
])
def test_a_deeply_nested_output_schema_is_an_error(schema: str) -> None:
    found = messages(PLAN.replace('"{result: string}"', schema, 1))
    assert any(re.match(rf"step 1: output_schema: nests \d+ levels deep, more than the "
                        rf"{MAX_SCHEMA_DEPTH} maker reads \(fix: ", m) for m in found), found


def _edit_step(store_root: Path, pattern: str, replacement: str) -> Path:
    path = next((store_root / "steps").glob("01-*.md"))
    text = path.read_text()
    path.write_text(re.sub(pattern, lambda _: replacement, text, count=1, flags=re.M))
    return path


@pytest.mark.parametrize("command", [["status"], ["context", "1"], ["step", "start", "1"],
                                     ["step", "reset", "1"], ["plan", "lint"]], ids=" ".join)
@pytest.mark.parametrize(("pattern", "replacement", "field"), [
    (r"^status: pending$", "status: pending\nresets: abc", "resets: must be a count"),
    (r"^output_schema: .*$", "output_schema: '" + "{a: " * 3000 + "x" + "}" * 3000 + "'",
     "output_schema: nests 3000 levels deep"),
    (r"^output_schema: .*$", "output_schema: " + "{a: " * 450 + "x" + "}" * 450,
     "output_schema: nests 450 levels deep"),
], ids=["resets", "deep-text-schema", "deep-mapping-schema"])
def test_a_broken_step_file_names_file_field_and_fix(project: Path, command: list[str],
                                                     pattern: str, replacement: str,
                                                     field: str) -> None:
    store = linear(project, 2)
    path = _edit_step(store.root, pattern, replacement)
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, RecursionError | ValueError), result.exception
    assert str(path) in result.output and field in result.output
    assert "(fix: " in result.output


def test_a_huge_number_gets_makers_own_message() -> None:
    found = messages("reasoning: x\nplan:\n- step: " + "9" * 5000 + "\n")
    assert found == ["yaml: invalid YAML: a value cannot be read: a number has more than 4300 "
                     "digits; quote it to keep it as text, or write a shorter one (fix: answer "
                     "with the plan YAML only: `reasoning:` and `plan:`)"]


@pytest.mark.parametrize("command", [["status"], ["plan", "lint"]], ids=" ".join)
def test_a_missing_plan_md_is_said_as_such(project: Path, command: list[str]) -> None:
    store = linear(project, 2)
    store.overview_path.unlink()
    result = CliRunner().invoke(cli, command)
    assert f"PLAN.md: {store.overview_path} is missing" in result.output
    assert "or write the plan again with /maker:plan" in result.output
    assert "reasoning" not in result.output.replace("task and reasoning", "")
