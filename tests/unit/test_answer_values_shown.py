"""A value an answer gave is quoted in maker's refusal cut to size: an answer of a few
hundred bytes (YAML aliases) must not make a refusal of megabytes, sent back to the
agent and kept in its record."""

from __future__ import annotations

import pytest

from maker.core.text import shown_value
from maker.handoff.fields import parse_handoff
from maker.yaml_cleaner.load import load_yaml

BOMB = ("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n")


@pytest.mark.parametrize("field", ["status", "step"])
def test_a_huge_value_is_quoted_in_a_line(field: str) -> None:
    data = load_yaml(BOMB + f"{field}: [*d, *d, *d, *d, *d, *d, *d]\n")
    assert len(repr(data[field])) > 100_000  # (what an uncut quote would send back)
    data = {"step": 1, "status": "complete", "output": {}, "summary": "s", **{
        field: data[field]}}
    _, problems = parse_handoff(data)
    said = "\n".join(str(p) for p in problems)
    assert field in said and len(said) < 2000, len(said)


@pytest.mark.parametrize(("value", "shown"), [
    ("ok", "'ok'"), (3, "3"), (None, "None"), ([1, 2], "[1, 2]"),
])
def test_a_small_value_is_quoted_whole(value: object, shown: str) -> None:
    assert shown_value(value) == shown


def test_a_long_text_is_cut() -> None:
    said = shown_value("x" * 10_000)
    assert len(said) <= 81 and "..." in said
