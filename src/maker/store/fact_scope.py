"""Which part of a plan a ``NOTES.md`` fact belongs to: a component, or the whole plan.

A step may name its ``component`` (``api``, ``billing-ui``). A fact tagged
``(step N)`` (or ``(step N, attempt A)``) belongs to step N's component. It is
plan-wide when it has no step tag (a person's, or one written with no step), when step
N has no component or is not in the plan, when its steps are of several components, or
when its text begins with ``Plan-wide:`` (a person's mark). A plan without components
has only plan-wide facts, so everything reads as it always did.

Two readers: ``maker.store.notes`` trims each section per scope (a busy component
cannot push a quiet one's facts into the archive), and the brief shows a step of a
component only the facts of its scope, of the steps it depends on, and the plan-wide
ones (``maker.executor.launch.previous_work``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["PLAN_WIDE_MARK", "RETIRED_LABEL", "SECTION_SCOPES", "fact_scope",
           "fact_steps", "marked_plan_wide", "scoped_keep", "visible_to"]

PLAN_WIDE_MARK = "Plan-wide:"
RETIRED_LABEL = "earlier attempt (reset): "  # before a reset attempt's decision or blocker
# A section keeps the newest ``keep`` facts of each scope (as many as a brief can show),
# and at most ``SECTION_SCOPES * keep`` in all: past that, the scopes share it
# (``scoped_keep``). A plan names at most 100 components (the linter), so each keeps
# a tenth of ``keep`` at the least.
SECTION_SCOPES = 25

# The tag at the end of a fact's last line: (step 3), (step 3, attempt 2), (steps 3, 5),
# (from step 3).
_TAG = re.compile(r"\((?:steps?|from step) ([\d, ]+?)(?:,? *attempt \d+)?\)_?\s*$",
                  re.IGNORECASE)
_MARK = re.compile(r"^\s*(?:[-*+] +)?(?:" + re.escape(RETIRED_LABEL) + r"\w+: )?"
                   + re.escape(PLAN_WIDE_MARK), re.IGNORECASE)

_TAG_CHARS = 200
K = TypeVar("K", bound=Hashable)


def fact_steps(text: str) -> tuple[int, ...]:
    """The steps a fact's tag names; () for an untagged fact."""
    m = _TAG.search(text, max(0, len(text) - _TAG_CHARS))  # (the tag ends the text)
    return tuple(int(n) for n in re.findall(r"\d+", m.group(1))) if m else ()


def marked_plan_wide(text: str) -> bool:
    """Whether a person marked the fact plan-wide (it begins ``Plan-wide:``; a reset
    attempt's label before it does not count)."""
    return _MARK.match(text) is not None


def fact_scope(text: str, components: Mapping[int, str | None]) -> str | None:
    """The component a fact belongs to; None when it is plan-wide."""
    if marked_plan_wide(text):
        return None
    names = {components.get(n) for n in fact_steps(text)}
    return names.pop() if len(names) == 1 else None


def visible_to(text: str, component: str | None, steps: Collection[int],
               components: Mapping[int, str | None]) -> bool:
    """Whether a step of ``component`` that depends on ``steps`` is shown the fact: every
    fact when it has no component, else its component's, its dependencies', and the
    plan-wide ones."""
    if component is None:
        return True
    scope = fact_scope(text, components)
    return scope is None or scope == component or any(n in steps for n in fact_steps(text))


def scoped_keep(scopes: Sequence[K], keep: int) -> list[bool]:
    """Which of a section's facts stay (their scopes given oldest first): the newest
    ``keep`` of each scope, within ``SECTION_SCOPES * keep`` in all. Past that, a scope
    with few facts keeps them all and the busier ones share the rest equally. One scope
    (a plan without components): the newest ``keep``, as before components."""
    counts = Counter(scopes)
    room = SECTION_SCOPES * keep
    share: dict[K, int] = {}
    for i, scope in enumerate(sorted(counts, key=lambda s: counts[s])):  # quietest first
        share[scope] = min(counts[scope], keep, room // (len(counts) - i))
        room -= share[scope]
    out = [False] * len(scopes)
    for i in range(len(scopes) - 1, -1, -1):  # newest first
        if share[scopes[i]] > 0:
            share[scopes[i]] -= 1
            out[i] = True
    return out
