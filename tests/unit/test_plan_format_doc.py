"""docs/plan-format.md, the plan format for people, says what the code does: its example
is a sound plan, and its tables name exactly the fields the parser knows."""

from __future__ import annotations

import re
from pathlib import Path

from maker.planner.linter import lint_text
from maker.planner.parser import PLAN_FIELDS, REQUIRED_FIELDS, STEP_FIELDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "plan-format.md"


def table(title: str) -> dict[str, bool]:
    """A table's fields (the first cell's code names) and whether each is required."""
    text = DOC.read_text(encoding="utf-8")
    part = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in part.splitlines() if line.startswith("| `")]
    return {name: row.split("|")[2].strip() == "yes" for row in rows
            for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}


def test_the_example_is_a_sound_plan() -> None:
    example = DOC.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    parsed, problems = lint_text(example)
    assert problems == [] and parsed is not None and len(parsed.steps) == 2


def test_the_tables_name_every_field_the_parser_knows_and_which_are_required() -> None:
    steps = table("A step's fields")
    assert set(steps) == set(STEP_FIELDS)
    assert {name for name, required in steps.items() if required} == set(REQUIRED_FIELDS)
    assert set(table("The plan's fields")) == set(PLAN_FIELDS)
