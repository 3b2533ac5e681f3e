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
- Its test files that chose the winner (each a shared test's, every one of them passed by
  the winner: :func:`chose`) are copied into the winner's worktree before it lands
  (:func:`copy_tests`), so they land with it: not over a file the winner wrote, nor
  outside the step's ``writes``, nor through a link. The record says which landed and
  why any did not.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from maker.handoff.weak_tests import is_test_file
from maker.planner.writes import clash
from maker.voting.behaviour import PASS

__all__ = ["PROBE", "chose", "copy_tests", "not_tests", "probe_matrix", "probe_prompt"]

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


def probe_matrix(session: str | None, flag: str | None, columns: Sequence[str],
                 landed: Sequence[str] = (), left: Mapping[str, str] | None = None
                 ) -> dict[str, Any]:
    """The probe as the vote's record keeps it (its matrix's ``probe``): its session,
    why its tests were not used (None: they were), the columns they gave, the test files
    that landed with the winner and why each other file of a column did not."""
    return {"name": PROBE, "session": session, "flag": flag,
            "tests": [c for c in columns if c.startswith(f"{PROBE}:")],
            "landed": list(landed), "not_landed": dict(left or {})}


def chose(columns: Sequence[str], row: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The probe's test files that chose the winner (``row``: its outcomes over
    ``columns``): each file of a column, every test of it passed by the winner; and why
    each other file of a column is not (a test the winner fails, or cannot import)."""
    files: dict[str, list[str]] = {}
    for column, outcome in zip(columns, row, strict=True):
        if column.startswith(f"{PROBE}:"):
            file = column.removeprefix(f"{PROBE}:").partition("::")[0]
            files.setdefault(file, []).append(outcome)
    left = {f: f"the winner's outcome of a test of it is {next(o for o in got if o != PASS)}"
            for f, got in files.items() if any(o != PASS for o in got)}
    return [f for f in files if f not in left], left


def copy_tests(probe: Path, winner: Path, files: Sequence[str], writes: Sequence[str],
               theirs: Collection[str] | None) -> tuple[list[str], dict[str, str]]:
    """The probe's test ``files`` (in its worktree ``probe``) copied into the winner's
    worktree ``winner`` under the same paths: ``(landed, why each other was not)``. Not
    one outside the step's ``writes``, nor over a file the winner changed (``theirs``;
    None: git could not tell them, and nothing is copied), nor through a link."""
    landed: list[str] = []
    left: dict[str, str] = {}
    top = os.path.realpath(winner)
    for file in files:
        source, target = probe / file, winner / file
        if writes and not clash([file], writes):
            left[file] = "it lies outside the step's writes"
        elif theirs is None:
            left[file] = "git could not tell which files the winner changed"
        elif file in theirs:
            left[file] = "the winner wrote a file of that path: the winner's is kept"
        elif not source.is_file() or source.is_symlink():
            left[file] = "it is no longer a file in the probe's worktree"
        elif not _inside(target.parent, top):
            left[file] = "its folder in the winner's worktree is a link out of it"
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            spare = target.with_name(f".{target.name}.maker-probe")
            spare.unlink(missing_ok=True)
            with open(os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                              0o644), "wb") as out:
                out.write(source.read_bytes())
            os.replace(spare, target)  # (a link there is replaced, never written through)
            landed.append(file)
    return landed, left


def _inside(folder: Path, top: str) -> bool:
    """``folder`` (or the nearest folder above it that there is) lies in ``top``: no
    link on the way leads out of it."""
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    real = os.path.realpath(folder)
    return real == top or real.startswith(top + os.sep)
