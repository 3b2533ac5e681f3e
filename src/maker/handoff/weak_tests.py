"""Tests a step weakened: what a person must see before a step's tests count as evidence.

A model that takes shortcuts makes a red check green by changing the check: it deletes a
test, edits an assertion, marks a test skipped or expected to fail, or adds a test file that
asserts nothing. maker reads the step's measured change (the trees it started from and
ended with, read by git, running nothing) and names each such file at the step's question
(``TESTS WEAKENED``, the handoff's ``tests_weakened``: ``maker.handoff.measured``); no
policy approves the step on its own.

What counts as a test file: a file under a ``tests``, ``test``, ``__tests__`` or ``spec``
folder, or named as the common runners name theirs (``test_*.py``, ``*_test.py``,
``conftest.py``, ``*_test.go``, ``*.test.ts``, ``*.spec.js``, ``*_spec.rb``,
``*Test.java``, …). What a file holds is read from its diff alone: a file whose change is
larger than maker reads here is named as that, for a person to look at.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from maker.errors import GitRefusedError
from maker.handoff.measured import MEASURE_KEY, end_tree
from maker.tools.git.git_tree import file_diff, line_counts
from maker.tools.registry import only_read

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["is_test_file", "weakened", "weakened_tests"]

_FILES = 50  # test files read at one handoff
_LINES = 5000  # lines of one file's change read

_FOLDERS = frozenset({"tests", "test", "__tests__", "spec", "specs"})
_NAMES = re.compile(r"(?:test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|"
                    r".*\.(?:test|spec)\.[cm]?[jt]sx?|.*_spec\.rb|.*Tests?\.(?:java|kt|cs))")
# Marks that turn a test off or make its failure pass, as the common runners write them.
_SKIP = re.compile(r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail)\(|"
                   r"@unittest\.(?:skip\w*|expectedFailure)\b|\bself\.skipTest\(|"
                   r"\b(?:it|test|describe|context)\.(?:skip|todo|failing)\(|"
                   r"\bx(?:it|test|describe)\(|\bt\.Skip(?:Now|f)?\(|#\[ignore\]|@Disabled\b|"
                   r"@Ignore\b")
# What an assertion looks like in the common runners.
_ASSERTS = re.compile(r"\bassert|\bexpect\(|\.should\b|\bt\.(?:Error|Errorf|Fatal|Fatalf|"
                      r"Fail|FailNow)\(|\braises\(|\bassertThat\b|\brequire\.|\bmust\w*\(")


def is_test_file(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is a test file by its place or name."""
    *folders, name = path.split("/")
    return bool(_NAMES.fullmatch(name)) or any(f in _FOLDERS for f in folders)


def weakened(path: str, kind: str, added: list[str], lost: int) -> str:
    """Why the change of test file ``path`` weakens it ("" when it does not): ``kind``,
    ``added`` and ``lost`` as :func:`maker.tools.git.git_tree.file_diff` gives them."""
    if kind == "deleted":
        return f"{path} (deleted)"
    marks = sorted({m.group(0).strip() for line in added for m in _SKIP.finditer(line)})
    if marks:
        return f"{path} (adds {', '.join(f'`{m}`' for m in marks[:3])})"
    if kind == "changed" and lost:
        return f"{path} ({lost} line{'s' * (lost != 1)} of its tests changed or removed)"
    if kind == "added" and path.rsplit("/", 1)[-1] != "conftest.py" and \
            _NAMES.fullmatch(path.rsplit("/", 1)[-1]) and \
            not any(_ASSERTS.search(line) for line in added):
        return f"{path} (a test file with no assertion)"
    return ""


def weakened_tests(store: PlanStore, record: StepRecord, files: list[str]) -> list[str]:
    """Each test file among ``files`` (measured) that step ``record`` deleted, edited,
    marked skipped or expected to fail, or added with no assertion, with why (``[]`` when
    none, or nothing was measured)."""
    tests = [f for f in files if is_test_file(f)][:_FILES]
    start = record.meta.get(MEASURE_KEY)
    if not tests or not isinstance(start, str) or not start or only_read(record.spec.tools):
        return []
    home, end = end_tree(store, record)
    try:
        counts = line_counts(home, start, end, tests) if end else None
    except GitRefusedError:
        counts = None
    if counts is None or end is None:
        return []
    found = []
    for path in tests:
        added, lost = counts.get(path, (0, 0))
        if added < 0 or added + lost > _LINES:
            if added + lost > _LINES:
                found.append(f"{path} (a change of {added + lost} lines: read it yourself)")
            continue
        diff = file_diff(home, start, end, path)
        why = weakened(path, *diff) if diff is not None else ""
        if why:
            found.append(why)
    return found
