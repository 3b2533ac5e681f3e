"""The probe of a vote on a step's code: one more session, which writes tests alone.

Samples of a code step (``maker.engine.code_vote``) are compared by their own tests. Two
samples wrong in the same way, each with tests that pass on its code, agree, and their
vote can be won wrongly. A step with ``probe: true`` (``maker run``, where its code is
voted on) draws one session more, the probe, in a worktree of its own from the same base,
with a brief of its own (:func:`probe_prompt`): the step's brief, but told to write only
tests of the step's interface as the plan gives it (its task, inputs and output schema),
and no code. It is drawn with the first samples.

- It is measured as a sample is (``maker.engine.code_sample``), and dropped too, its
  tests unused, where it changed a file that is not a test (:func:`not_tests`).
- Its tests run in every sample's folder and twice on the base
  (``maker.verify.cross_runs``); those that fail on the base on both runs are shared
  tests: a column of every sample's row (``maker.voting.behaviour``). Its code is the
  base's: it is no voter, and never wins.
- Its session counts in the vote's cost, and goes into the ledger as kind ``probe``; the
  vote's record names it in its matrix (:func:`probe_matrix`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from maker.handoff.weak_tests import is_test_file

__all__ = ["PROBE", "not_tests", "probe_matrix", "probe_prompt"]

PROBE = "probe"
"""The probe's name: its worktree's, and the prefix of its tests' ids."""


def probe_prompt(brief: str) -> str:
    """What the probe's session is told: the step's ``brief``, after what to do instead."""
    return (
        "# You are this step's probe, not its executor\n\n"
        "maker votes on this step's code: several sessions each do the step below in a "
        "worktree of their own, and each one's tests run against the others' code. You are "
        "one more session, the probe, and you do NOT do the step: you write tests of it, "
        "and nothing else.\n\n"
        "- Test the interface the step names (in its task, its inputs and its output "
        "schema below: the modules, functions, classes, commands and values it gives), as "
        "its task says they must behave, with the cases it names and those its words "
        "imply.\n"
        "- Write pytest files only (`test_<name>.py` or `<name>_test.py`, where the "
        "project keeps its tests), each test with an assertion. They must fail on the code "
        "as it is now (the step is not done yet) and pass on any code that does the step "
        "right: test what the task asks, not what one way of doing it would do.\n"
        "- Change no other file: no code under test, no stub, no `conftest.py`, no pytest "
        "configuration; do not edit or delete an existing test. A probe that changes a "
        "file that is not a test is dropped, and its tests are not used.\n\n"
        "Then hand off as the brief asks (`status: complete`), `files_changed` listing "
        "your test files. Where the brief below asks you to change code, do not: write "
        "its tests only.\n\n" + brief)


def not_tests(changed: Sequence[str]) -> str | None:
    """Why the probe's tests are not used when it changed ``changed`` (files that are not
    tests: the probe writes tests alone), or None."""
    code = [f for f in changed if not is_test_file(f)]
    if not code:
        return None
    return (f"it changed files that are not tests (a probe writes tests alone): "
            f"{', '.join(code[:3])}" + (f" and {len(code) - 3} more" if len(code) > 3 else ""))


def probe_matrix(session: str | None, flag: str | None,
                 columns: Sequence[str]) -> dict[str, Any]:
    """The probe as the vote's record keeps it (its matrix's ``probe``): its session,
    why its tests were not used (None: they were), and the columns they gave."""
    return {"name": PROBE, "session": session, "flag": flag,
            "tests": [c for c in columns if c.startswith(f"{PROBE}:")]}
