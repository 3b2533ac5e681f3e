"""The default key of a vote: two answers vote together when their canonical forms are equal."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Set
from typing import Any

__all__ = ["canonical"]

# Tags keep shapes apart: a mapping never equals the list of its pairs, True never equals 1.
_MAP, _SEQ, _SET, _BOOL, _NAN = "{}", "[]", "set", "bool", "nan"


def canonical(answer: Any) -> Hashable:
    """The hashable form of ``answer`` that votes compare.

    Mappings compare by content whatever their key order; strings compare with their
    whitespace collapsed (runs of spaces, tabs and newlines count as one space, ends trimmed);
    lists and tuples compare item by item, sets as sets, all recursively. ``True`` and ``1``
    stay different (JSON's ``true`` is not ``1``); ``1`` and ``1.0`` are the same number; NaN
    equals NaN. Any other hashable value is its own key.

    Raises TypeError for an unhashable value of another type: pass ``key=`` to the vote.
    """
    if isinstance(answer, str):
        return " ".join(answer.split())
    if isinstance(answer, bool):
        return (_BOOL, answer)
    if isinstance(answer, float) and math.isnan(answer):
        return (_NAN,)
    if isinstance(answer, Mapping):
        items = [(canonical(k), canonical(v)) for k, v in answer.items()]
        items.sort(key=lambda item: repr(item[0]))
        return (_MAP, tuple(items))
    if isinstance(answer, (list, tuple)):
        return (_SEQ, tuple(canonical(item) for item in answer))
    if isinstance(answer, Set):
        return (_SET, frozenset(canonical(item) for item in answer))
    if isinstance(answer, Hashable):
        try:
            hash(answer)
        except TypeError:
            pass
        else:
            return answer
    raise TypeError(
        f"cannot compare answers of type {type(answer).__name__}: they are not hashable; "
        "pass key= to first_to_ahead_by_k to say which answers are the same")
