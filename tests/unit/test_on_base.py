"""Tests that can fail: ``maker verify --step N`` runs the step's new and changed pytest
files on the tree the step started from (inside the step's box where the machine makes
one); a file that fails there can catch what the step changed, one that passes proves
nothing, and is named at the handoff (TESTS PASS ON THE BASE). A code change whose tests
all pass without it goes to the person whatever the policy; a step of tests alone does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.boxed import env_path
from harness.kernel import require_kernel
from harness.step_plans import handoff, step_spec, write
from maker.cli.main import cli
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.review_route import review_need
from maker.executor.loop.words import approval_screen
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.handoff.measured import BASE_FIELD, PASS_ON_BASE
from maker.handoff.on_base import FAILS, PASSES, base_record_path
from maker.store.plan_store import PlanStore

__all__ = ["env_path"]  # (the fixture, from the harness)

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CATCHES = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
VACUOUS = "from calc import add\n\n\ndef test_add_exists():\n    assert callable(add)\n"
ALL = ["src/calc.py", "src/shapes.py", "tests/test_calc.py", "tests/test_vacuous.py",
       "tests/test_shapes.py"]
NEW_MODULE = "from shapes import area\n\n\ndef test_area():\n    assert area(2) == 4\n"


@pytest.fixture
def started(plugin_project: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    """A project whose src/calc.py subtracts when step 1 starts; its tests run by the
    running Python's pytest (format, lint and build off)."""
    project = plugin_project
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "src").mkdir()
    (project / "src" / "calc.py").write_text(BUGGY)
    (project / "tests").mkdir()
    (project / "tests" / "conftest.py").write_text("")
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['src']\n")
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"])],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    return store


def _verify(store: PlanStore) -> dict[str, object]:
    done = CliRunner().invoke(cli, ["verify", "--step", "1", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def _fixed_with_tests(project: Path) -> None:
    (project / "src" / "calc.py").write_text(FIXED)
    (project / "tests" / "test_calc.py").write_text(CATCHES)
    (project / "tests" / "test_vacuous.py").write_text(VACUOUS)
    (project / "tests" / "test_shapes.py").write_text(NEW_MODULE)
    (project / "src" / "shapes.py").write_text("def area(side):\n    return side * side\n")


def test_a_test_that_passes_on_the_base_is_named_and_the_change_goes_to_the_person(
        started: PlanStore) -> None:
    project = started.project
    _fixed_with_tests(project)
    data = _verify(started)
    assert data["on_base"] == {"tests/test_calc.py": FAILS, "tests/test_vacuous.py": PASSES,
                               "tests/test_shapes.py": FAILS}  # (shapes: not there yet)
    assert base_record_path(started, 1).is_file()
    accept_handoff(started, handoff(1, files_changed=ALL))
    assert started.read_handoff(1)[BASE_FIELD] == ["tests/test_vacuous.py"]
    assert review_need(started, started.load_step(1), "auto").route == "person"
    assert f"{PASS_ON_BASE}: tests/test_vacuous.py" in approval_screen(started)


def test_a_code_change_whose_tests_all_pass_on_the_base_is_refused_with_the_fix(
        started: PlanStore) -> None:
    """Its only evidence shows nothing it did: refused, with the fix; a handoff that says
    why no test can fail (behaviour kept) is accepted, goes to the person, who reads why."""
    project = started.project
    (project / "src" / "calc.py").write_text(FIXED)
    (project / "tests" / "test_vacuous.py").write_text(VACUOUS)
    assert _verify(started)["on_base"] == {"tests/test_vacuous.py": PASSES}
    files = ["src/calc.py", "tests/test_vacuous.py"]
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(started, handoff(1, files_changed=files))
    said = str(refused.value)
    assert "tests/test_vacuous.py passes on the code before this step too" in said, said
    assert "add a test that fails on the code before your change" in said
    assert "behaviour_kept" in said
    with pytest.raises(HandoffRejectedError):  # (a reason that is no text)
        accept_handoff(started, handoff(1, files_changed=files, behaviour_kept=["x"]))
    accept_handoff(started, handoff(1, files_changed=files,
                                    behaviour_kept="a rename: add() computes what it did"))
    assert review_need(started, started.load_step(1), "auto").route == "person"
    screen = approval_screen(started)
    assert f"{PASS_ON_BASE}: tests/test_vacuous.py" in screen
    assert "the executor says: a rename: add() computes what it did" in screen


def test_a_test_that_fails_on_the_base_is_evidence_enough(started: PlanStore) -> None:
    project = started.project
    (project / "src" / "calc.py").write_text(FIXED)
    (project / "tests" / "test_vacuous.py").write_text(VACUOUS)
    (project / "tests" / "test_calc.py").write_text(CATCHES)
    _verify(started)
    accept_handoff(started, handoff(1, files_changed=[
        "src/calc.py", "tests/test_calc.py", "tests/test_vacuous.py"]))
    assert started.read_handoff(1)[BASE_FIELD] == ["tests/test_vacuous.py"]


def test_a_file_changed_after_its_run_on_the_base_is_not_named_for_that_run(
        started: PlanStore) -> None:
    project = started.project
    _fixed_with_tests(project)
    _verify(started)
    (project / "tests" / "test_vacuous.py").write_text(CATCHES.replace("test_add", "test_b"))
    accept_handoff(started, handoff(1, files_changed=ALL))
    assert BASE_FIELD not in started.read_handoff(1)


def test_a_step_of_tests_alone_is_named_but_stays_the_policys(started: PlanStore) -> None:
    (started.project / "tests" / "test_more.py").write_text(VACUOUS)
    assert _verify(started)["on_base"] == {"tests/test_more.py": PASSES}
    accept_handoff(started, handoff(1, files_changed=["tests/test_more.py"]))
    assert started.read_handoff(1)[BASE_FIELD] == ["tests/test_more.py"]
    assert review_need(started, started.load_step(1), "auto").route == "policy"


def test_a_forged_record_names_nothing(started: PlanStore) -> None:
    project = started.project
    _fixed_with_tests(project)
    _verify(started)
    path = base_record_path(started, 1)
    data = json.loads(path.read_text())
    data["files"]["tests/test_calc.py"]["outcome"] = PASSES  # (not maker's seal)
    path.write_text(json.dumps(data))
    accept_handoff(started, handoff(1, files_changed=ALL))
    assert BASE_FIELD not in started.read_handoff(1)


def test_no_pytest_no_run(started: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "true")
    _fixed_with_tests(started.project)
    said = _verify(started)["on_base"]
    assert isinstance(said, dict) and set(said.values()) == {
        "not run: the project's test command is not pytest's"}


def test_past_their_time_the_files_are_not_run_and_prove_nothing_either_way(
        started: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.handoff import on_base

    monkeypatch.setattr(on_base, "_ALL_S", 0.0)
    _fixed_with_tests(started.project)
    said = _verify(started)["on_base"]
    assert isinstance(said, dict) and set(said.values()) == {
        "not run: out of time (maker gives them 0 s all told)"}


@pytest.mark.kernel
def test_in_the_box_the_base_runs_from_the_steps_own_tmp(started: PlanStore) -> None:
    require_kernel()
    _fixed_with_tests(started.project)
    assert _verify(started)["on_base"] == {"tests/test_calc.py": FAILS,
                                           "tests/test_vacuous.py": PASSES,
                                           "tests/test_shapes.py": FAILS}
