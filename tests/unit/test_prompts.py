"""``load_prompt`` as seed 001 (docs/architecture.md#the-seeds) calls it:
``load_prompt("planner_system")`` is the
planner's system prompt (the plugin's agents/planner.md, one file for both), and
``load_prompt("planner_user", instruction=…, tools_list=…)`` the planner's first message."""

from __future__ import annotations

import pytest

from maker.prompts import load_prompt
from maker.tools.registry import ToolRegistry


def test_the_seeds_system_prompt_name_is_the_planners_prompt() -> None:
    assert load_prompt("planner_system") == load_prompt("planner")
    assert "maker-agent: planner" in load_prompt("planner_system")


def test_the_seeds_user_prompt_takes_the_task_and_the_tools() -> None:
    tools = ToolRegistry.default().describe()
    text = load_prompt("planner_user", instruction="Add OAuth {login}", tools_list=tools)
    assert text.startswith("Plan this task: Add OAuth {login}\n")  # (braces in the task kept)
    assert tools in text and "{tools_list}" not in text


@pytest.mark.parametrize(("values", "said"), [
    ({"instruction": "x"}, "needs values for ['tools_list']"),
    ({"instruction": "x", "tools_list": "y", "extra": 1}, "no placeholder for ['extra']"),
])
def test_a_template_is_filled_whole_or_refused(values: dict[str, object], said: str) -> None:
    with pytest.raises(KeyError, match=said.replace("[", r"\[").replace("]", r"\]")):
        load_prompt("planner_user", **values)


def test_a_prompt_without_values_keeps_its_braces() -> None:
    assert "{" in load_prompt("planner")  # (its schema examples, as written)
