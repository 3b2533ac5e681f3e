"""Tests that can fail, end to end: a step fixes src/calc.py and adds two test files; one
catches the bug, the other passes on the code before the step too. ``maker verify`` runs
both on the tree the step started from, and the step's verdict names the one that proves
nothing (TESTS PASS ON THE BASE); its code change goes to the person, not the policy.
In ``/maker:step`` (the real CLI and plugin: the executor runs ``maker verify``) and in
``maker run`` (the real SDK: the engine verifies)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.maker_run import orients, request_cwd, run_maker
from harness.plugin import PLUGIN_ROOT, Run, step, write_plan
from harness.scenarios import (
    EXECUTOR,
    MAIN,
    executor_flow,
    handoff,
    main_launches_executor,
    main_runs_outcome,
    plugin_env,
    tool,
)
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, ToolUseBlock

pytestmark = pytest.mark.e2e

TEST_CMD = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FIXED = "def add(a, b):\n    return a + b\n"
CATCHES = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
VACUOUS = "from calc import add\n\n\ndef test_add_exists():\n    assert callable(add)\n"
FILES = ["src/calc.py", "tests/test_calc.py", "tests/test_exists.py"]
NAMED = "TESTS PASS ON THE BASE: tests/test_exists.py"


def writes_all(*, brief: bool) -> Callable[[RecordedRequest], Reply]:
    """One turn that writes the fix and both test files (after the brief, or after
    ``maker orient``)."""
    def turn(request: RecordedRequest) -> Reply:
        said = " ".join(r.text for r in request.tool_results)
        assert ("# Step 0" in said) if brief else ("oriented (none)" in said), said
        root = Path(request_cwd(request))
        return Reply.of(*(ToolUseBlock("Write", {"file_path": str(root / name),
                                                 "content": text})
                          for name, text in zip(FILES, (FIXED, CATCHES, VACUOUS),
                                                strict=True)))
    return turn


def buggy(project: Path) -> None:
    """src/calc.py subtracts; pytest finds it through pyproject.toml; all committed."""
    (project / "src").mkdir()
    (project / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "tests").mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['src']\n")
    for cmd in (["git", "add", "-A"], ["git", "-c", "user.name=a", "-c", "user.email=a@b",
                                       "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=project, check=True, capture_output=True)


def test_the_plugins_verdict_names_a_test_that_passes_on_the_base(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    buggy(project)
    write_plan(project)

    def verifies(request: RecordedRequest) -> Reply:
        return tool("Bash", command="maker verify --step 0", description="Verify step 0")

    def hands_off(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "tests/test_calc.py fails there" in said, said
        assert "tests/test_exists.py passes there: evidence of nothing" in said, said
        return Reply.text(handoff(0, {"files": FILES}, files=FILES))

    def reports(request: RecordedRequest) -> Reply:
        return Reply.text(f"maker's verdict:\n\n{request.tool_results[-1].text}\n\nREPORTED")

    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), reports)
    executor_flow(fake_api, [writes_all(brief=True), verifies], hands_off)
    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env=plugin_env(extra={"TEST_CMD": TEST_CMD}))

    fake_api.assert_done()
    assert run.result is not None and NAMED in run.result, run.result
    assert step(project, 0).status == "awaiting-approval"  # (auto: still the person's)


def test_maker_run_names_it_and_stops_for_the_person(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    buggy(project)
    write_plan(project)

    fake_api.script(EXECUTOR, orients(0), writes_all(brief=False),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)))
    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": TEST_CMD})

    said = run.stdout + run.stderr
    assert run.returncode == 4, said[-2000:]
    assert NAMED in said, said[-2000:]
    assert step(project, 0).status == "awaiting-approval"
    handoff_file = next((project / "plans" / "handoffs").glob("00-*.md")).read_text()
    assert "tests_pass_on_base" in handoff_file and "tests/test_exists.py" in handoff_file
