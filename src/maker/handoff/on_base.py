"""Tests that can fail: a step's new and changed test files, run on the code before it.

A test is evidence of a change only if it fails without the change. ``maker verify --step
N``, once the step's own checks pass, writes the tree the step started from (its measure's
start: ``maker.handoff.measured``) into a throwaway folder in the step's own ``/tmp``, puts
the step's versions of its test files into it, and runs each file there with the
project's pytest, inside the step's box: a file that fails (or cannot be collected: what
it tests is not there yet) can catch what the step changed; one whose tests all pass proves
nothing about it. The outcome of each file, with the hash of the text that ran, is sealed
beside the step's evidence (``step-NN-base.json``); at the handoff, a file that passes on
the base and is still that text is named in the verdict (``TESTS PASS ON THE BASE``).

A step that changed code and whose tests so run all pass on the base has no evidence of
its change: its handoff is refused with the fix (a test that fails before it), unless it
says why none can (``behaviour_kept``: a refactor keeps behaviour), which the person reads
at the question (:func:`check_can_fail`).

Only pytest's files (``test_*.py``, ``*_test.py``) are run; a project whose test command
is not pytest's has none run, and its record says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from maker.core.clock import utc_now
from maker.errors import GitRefusedError, MakerError, Problem
from maker.handoff.measured import MEASURE_KEY, measured_changes
from maker.handoff.weak_tests import is_test_file
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.seal import check, seal
from maker.store.workspace import step_project
from maker.tools.box.boundary import step_tmp
from maker.tools.git.git_tree import export_tree
from maker.verify.check_run import TIMEOUT_EXIT_CODE, run_check, step_box
from maker.verify.detect import VerifyCommand
from maker.verify.pytest_runs import pytest_file, pytest_runner

__all__ = ["FAILS", "PASSES", "base_record_path", "check_can_fail", "on_base_said",
           "passes_on_base", "run_on_base"]

FAILS, PASSES = "fails", "passes"  # a file's outcome on the base (else "not run: why")
_FILES = 10  # test files run on the base in one verification
_ALL_S = 180.0  # seconds they may take there, all told (a Bash call waits for them)
_NO_FOLDER = 97  # the base's folder was not there to run in: not run, not a failure
_SIZE = 1 << 20  # bytes of one test file copied


def base_record_path(store: PlanStore, step: int) -> Path:
    return store.state_dir / "evidence" / f"step-{step:02d}-base.json"


def _sha(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(_SIZE + 1)
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if len(data) <= _SIZE else None


def run_on_base(store: PlanStore, step: int, env: dict[str, str] | None = None
                ) -> dict[str, str] | None:
    """Run step ``step``'s new and changed pytest files on the tree it started from, each
    file's outcome (:data:`FAILS`, :data:`PASSES`, ``"not run: why"``) recorded, sealed;
    None when it changed no such file (or nothing was measured)."""
    env = dict(os.environ if env is None else env)
    record = store.load_step(step)
    start = record.meta.get(MEASURE_KEY)
    try:
        changed = measured_changes(store, record)
    except GitRefusedError:
        changed = None
    home = step_project(store, record)
    tests = [f for f in changed or [] if pytest_file(f) and (home / f).is_file()
             and not (home / f).is_symlink() and _sha(home / f) is not None][:_FILES]
    if not tests or not isinstance(start, str):
        return None
    runner = pytest_runner(home, env)
    outcomes = ({f: "not run: the project's test command is not pytest's" for f in tests}
                if runner is None else _run_all(store, step, home, start, tests, runner, env))
    shas = {f: _sha(home / f) for f in tests}
    atomic_write(base_record_path(store, step), json.dumps(seal({
        "step": step, "attempt": str(record.meta.get("started_at") or ""),
        "ran_at": utc_now(), "files": {f: {"outcome": o, "sha256": shas[f]}
                                       for f, o in outcomes.items()}}), indent=2) + "\n")
    return outcomes


def _run_all(store: PlanStore, step: int, home: Path, start: str, tests: list[str],
             runner: list[str], env: dict[str, str]) -> dict[str, str]:
    box = step_box(store, step, home)
    boxed = box is not None and box("true")[1] is not None
    own = step_tmp(store.root, step)[0] if boxed and sys.platform.startswith("linux") else None
    if boxed and sys.platform.startswith("linux") and own is None:
        return {f: "not run: the step's own /tmp cannot be made" for f in tests}
    base = Path(tempfile.mkdtemp(prefix="maker-base-", dir=own))
    deadline = time.monotonic() + _ALL_S
    inside = f"/tmp/{base.name}" if own is not None else str(base)  # (the box's /tmp: own)
    try:
        if not export_tree(home, start, base):
            return {f: "not run: git could not write the tree the step started from"
                    for f in tests}
        for f in tests:
            (base / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(home / f, base / f, follow_symlinks=False)
        found = Path(base / "src").is_dir()
        path = f"{inside}/src:{inside}" if found else inside
        outcomes = {}
        for f in tests:
            left = deadline - time.monotonic()
            outcomes[f] = f"not run: out of time (maker gives them {_ALL_S:g} s all told)" \
                if left < 1 else _outcome(run_check(VerifyCommand("test", (
                    f"cd {shlex.quote(inside)} || exit {_NO_FOLDER}; PYTHONDONTWRITEBYTECODE=1 "
                    f"PYTHONPATH={shlex.quote(path)} {shlex.join(runner)} -q -p no:cacheprovider "
                    f"-o addopts= --confcutdir={shlex.quote(inside)} -- {shlex.quote(f)}")),
                    1, 1, home, env, left, left, None, box if boxed else None).exit_code)
        return outcomes
    except (OSError, MakerError) as exc:
        return {f: f"not run: {exc}" for f in tests}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _outcome(code: int) -> str:
    """pytest's exit code as an outcome: 0 all passed; 1 a test failed, 2 or 3 it could
    not collect or run them (what they test is not there yet): the file fails."""
    return {0: PASSES, 1: FAILS, 2: FAILS, 3: FAILS, 5: "not run: it holds no test",
            _NO_FOLDER: "not run: the tree before the step was not there to run in",
            TIMEOUT_EXIT_CODE: "not run: out of time"}.get(
        code, f"not run: pytest exited {code}")


def _recorded(store: PlanStore, step: int) -> dict[str, Any] | None:
    try:
        data = json.loads(base_record_path(store, step).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if check(data) and data.get("step") == step else None


def _outcomes(store: PlanStore, step: int, home: Path) -> dict[str, str]:
    """Each test file's sealed outcome on the base, where its text is still the one that
    ran (``home``: where the step works)."""
    data = _recorded(store, step)
    files = data.get("files") if data else None
    if not isinstance(files, dict):
        return {}
    return {f: str(said.get("outcome")) for f, said in files.items()
            if isinstance(said, dict) and said.get("sha256") == _sha(home / f)}


def passes_on_base(store: PlanStore, step: int, home: Path) -> list[str]:
    """The test files whose sealed outcome on the base is :data:`PASSES` and whose text is
    still the one that ran (``home``: where the step works)."""
    return sorted(f for f, o in _outcomes(store, step, home).items() if o == PASSES)


def check_can_fail(store: PlanStore, record: StepRecord, measured: list[str], kept: str,
                   problems: list[Problem]) -> None:
    """A problem when step ``record`` changed code (``measured``: its files) and every one
    of its test files run on the base passed there, none failing: its only evidence shows
    nothing it did. ``kept``: the handoff's ``behaviour_kept``, why none can fail."""
    ran = {f: o for f, o in _outcomes(store, record.number, step_project(store, record)).items()
           if f in measured}
    passing = sorted(f for f, o in ran.items() if o == PASSES)
    if not passing or FAILS in ran.values() or kept or all(map(is_test_file, measured)):
        return
    shown = ", ".join(passing[:5]) + (f" and {len(passing) - 5} more" if len(passing) > 5 else "")
    problems.append(Problem(
        "evidence", f"{shown} pass{'es' * (len(passing) == 1)} on the code before this step "
        "too (maker verify ran them there): they show nothing your change did",
        record.number, fix="add a test that fails on the code before your change and passes "
        f"after it, and run `maker verify --step {record.number}` again; if the step keeps "
        "behaviour as it was (a refactor), say why no test can fail in `behaviour_kept: "
        "<why>`, and the person decides"))


def on_base_said(outcomes: dict[str, str]) -> list[str]:
    """One line per file, as ``maker verify`` prints them."""
    words = {FAILS: "fails there: it can catch what the step changed",
             PASSES: "passes there: evidence of nothing about the step's change"}
    return [f"on the code before the step, {f} {words.get(o, o)}"
            for f, o in sorted(outcomes.items())]
