"""Tests a step weakened, named before its tests count as evidence: a test file deleted,
lines of existing tests changed or removed, a skip or expected-failure mark added, a new
test file that asserts nothing. Each is named to the person at the question, on the
screen and in maker status, and the step goes to them whatever the policy; tests the
step only added, with assertions, are the policy's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.named import named_to_the_person
from harness.step_plans import handoff, step_spec, write
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.review_route import review_need
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.handoff.measured import TESTS_FIELD, TESTS_WEAKENED
from maker.handoff.weak_tests import is_test_file, weakened
from maker.store.plan_store import PlanStore

WRITER = step_spec(1, -1, primary_tools=["Read", "Write", "Edit"])
OLD = ("def test_sum():\n    assert sum([1, 2]) == 3\n\n\n"
       "def test_max():\n    assert max(1, 2) == 2\n")


def _started(project: Path) -> PlanStore:
    """A project whose tests/test_calc.py and tests/test_old.py exist when step 1 starts."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "tests").mkdir()
    (project / "tests" / "test_calc.py").write_text(OLD)
    (project / "tests" / "test_old.py").write_text(OLD)
    store = write(project, [WRITER], policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    return store


def _accepted(store: PlanStore, files: list[str]) -> list[str]:
    accept_handoff(store, handoff(1, files_changed=files))
    return list(store.read_handoff(1).get(TESTS_FIELD) or [])


@pytest.mark.parametrize(("change", "named"), [
    (lambda p: (p / "tests/test_old.py").unlink(), "tests/test_old.py (deleted)"),
    (lambda p: (p / "tests/test_calc.py").write_text(OLD.replace("== 3", "== 3 or True")),
     "tests/test_calc.py (1 line of its tests changed or removed)"),
    (lambda p: (p / "tests/test_calc.py").write_text(
        "import pytest\n\n\n@pytest.mark.skip\n" + OLD), "tests/test_calc.py (adds "
     "`@pytest.mark.skip`)"),
    (lambda p: (p / "tests/test_calc.py").write_text(
        OLD + "\n\n@pytest.mark.xfail\ndef test_new():\n    assert 1 == 2\n"),
     "tests/test_calc.py (adds `@pytest.mark.xfail`)"),
    (lambda p: (p / "tests/test_new.py").write_text("def test_new():\n    sum([1, 2])\n"),
     "tests/test_new.py (a test file with no assertion)"),
    (lambda p: (p / "web").mkdir() or (p / "web/app.test.ts").write_text(
        "it.skip('adds', () => { expect(add(1, 2)).toBe(3) })\n"),
     "web/app.test.ts (adds `it.skip(`)"),
], ids=["deleted", "edited", "skip", "xfail", "no-assertion", "jest-skip"])
def test_a_weakened_test_is_named_and_no_policy_takes_the_step(
        project: Path, change: object, named: str) -> None:
    store = _started(project)
    assert callable(change)
    change(project)
    files = [named.split(" (")[0]]
    assert _accepted(store, files) == [named]
    named_to_the_person(store, 1, f"{TESTS_WEAKENED}: {named}", TESTS_WEAKENED)


def test_tests_only_added_with_assertions_are_the_policys(project: Path) -> None:
    store = _started(project)
    (project / "tests" / "test_calc.py").write_text(
        OLD + "\n\ndef test_min():\n    assert min(1, 2) == 1\n")
    (project / "tests" / "test_new.py").write_text("def test_new():\n    assert 1 + 1 == 2\n")
    (project / "tests" / "conftest.py").write_text("import sys\n")  # (no test of its own)
    assert _accepted(store, ["tests/test_calc.py", "tests/test_new.py",
                             "tests/conftest.py"]) == []
    assert review_need(store, store.load_step(1), "auto").route == "policy"


@pytest.mark.parametrize(("path", "test"), [
    ("tests/test_a.py", True), ("test_a.py", True), ("pkg/a_test.py", True),
    ("src/conftest.py", True), ("cmd/main_test.go", True), ("web/app.test.tsx", True),
    ("web/app.spec.mjs", True), ("spec/models/user_spec.rb", True),
    ("src/test/java/AppTest.java", True), ("__tests__/x.js", True),
    ("src/app.py", False), ("testing.md", False), ("src/contest.py", False),
    ("docs/test-plan.md", False), ("latest_results.py", False),
])
def test_a_test_file_is_known_by_its_place_or_name(path: str, test: bool) -> None:
    assert is_test_file(path) is test


def test_a_change_that_keeps_every_line_weakens_nothing() -> None:
    assert weakened("tests/test_a.py", "changed", ["def test_b():", "    assert 1"], 0) == ""
    assert weakened("tests/helpers.py", "added", ["X = 1"], 0) == ""  # (no test file's name)
