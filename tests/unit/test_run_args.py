"""What a typed ``/maker:run`` may carry (``maker loop begin`` reads it): each option once,
each number checked, anything else refused with what is wrong."""

from __future__ import annotations

import pytest

from maker.cli.loop_cmd import run_args

OK = {"parallel": None, "budget": None, "subagents": False, "stop": False}


@pytest.mark.parametrize(("typed", "expected"), [
    ("", OK),
    ("  ", OK),
    ("--parallel 2", {**OK, "parallel": 2}),
    ("--parallel=3", {**OK, "parallel": 3}),
    ("--subagents", {**OK, "subagents": True}),
    ("--max-budget-usd 2.5", {**OK, "budget": 2.5}),
    ("--max-budget-usd=0.2 --parallel 2", {**OK, "budget": 0.2, "parallel": 2}),
    ("--subagents --parallel 4", {**OK, "subagents": True, "parallel": 4}),
    ("--stop", {**OK, "stop": True}),
])
def test_the_options_a_person_may_type(typed: str, expected: dict[str, object]) -> None:
    assert run_args(typed) == expected


@pytest.mark.parametrize(("typed", "said"), [
    ("--parallel 0", "--parallel needs a number above 0"),
    ("--parallel 17", "at most 16"),
    ("--parallel 1.5", "a whole number"),
    ("--parallel", "--parallel needs a number above 0, not ''"),
    ("--max-budget-usd -1", "--max-budget-usd needs a number above 0"),
    ("--max-budget-usd nan", "not 'nan'"),
    ("--max-budget-usd 1e9", "not '1e9'"),
    ("--subagents --subagents", "--subagents is given twice"),
    ("--approve auto", "'--approve' is not an option of /maker:run"),
    ("$(rm -rf ~)", "is not an option"),
    ("--stop --parallel 2", "--stop goes alone"),
    ("x" * 10_000, "is not an option"),
])
def test_anything_else_is_refused_with_what_is_wrong(typed: str, said: str) -> None:
    result = run_args(typed)
    assert isinstance(result, str) and said in result and len(result) < 200
