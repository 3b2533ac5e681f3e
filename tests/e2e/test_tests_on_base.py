"""Tests that can fail, end to end: a step fixes src/calc.py and adds two test files; one
catches the bug, the other passes on the code before the step too. ``maker verify`` runs
both on the tree the step started from, and the step's verdict names the one that proves
nothing (TESTS PASS ON THE BASE); its code change goes to the person, not the policy.
A fix whose only test passes on the base is refused with the fix: the executor adds a
test that fails there, or (``maker run``) says why none can, and the person reads why.
In ``/maker:step`` (the real CLI and plugin: the executor runs ``maker verify``) and in
``maker run`` (the real SDK: the engine verifies)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.calc_project import CATCHES, FILES, FIXED, TEST_CMD, VACUOUS, buggy
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

NAMED = "TESTS PASS ON THE BASE: tests/test_exists.py"
REFUSED = "tests/test_exists.py passes on the code before this step too"
ONLY_VACUOUS = ["src/calc.py", "tests/test_exists.py"]
WHY = "the step keeps add() as it was"


def writes_all(*, brief: bool, files: tuple[str, ...] = tuple(FILES)
               ) -> Callable[[RecordedRequest], Reply]:
    """One turn that writes the fix and the test files among ``files`` (after the brief,
    or after ``maker orient``)."""
    texts = dict(zip(FILES, (FIXED, CATCHES, VACUOUS), strict=True))

    def turn(request: RecordedRequest) -> Reply:
        said = " ".join(r.text for r in request.tool_results)
        assert ("# Step 0" in said) if brief else ("oriented (none)" in said), said
        root = Path(request_cwd(request))
        return Reply.of(*(ToolUseBlock("Write", {"file_path": str(root / name),
                                                 "content": texts[name]})
                          for name in files))
    return turn


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


def test_the_plugin_refuses_a_code_change_whose_tests_all_pass_on_the_base(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    """Its only test passes without the fix: the handoff goes back with the fix; the
    executor adds a test that fails on the base, verifies again, and is accepted."""
    buggy(project)
    write_plan(project)

    def verifies(request: RecordedRequest) -> Reply:
        return tool("Bash", command="maker verify --step 0", description="Verify step 0")

    def adds_a_test_that_can_fail(request: RecordedRequest) -> Reply:
        assert REFUSED in request.last_user_text, request.last_user_text[-1500:]
        assert "add a test that fails on the code before your change" in \
            request.last_user_text
        return tool("Write", file_path=str(Path(request_cwd(request)) / FILES[1]),
                    content=CATCHES)

    def reports(request: RecordedRequest) -> Reply:
        return Reply.text(f"maker's verdict:\n\n{request.tool_results[-1].text}\n\nREPORTED")

    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(), reports)
    executor_flow(fake_api, [writes_all(brief=True, files=tuple(ONLY_VACUOUS)), verifies],
                  Reply.text(handoff(0, {"files": ONLY_VACUOUS}, files=ONLY_VACUOUS)),
                  adds_a_test_that_can_fail, verifies,
                  Reply.text(handoff(0, {"files": FILES}, files=FILES)))
    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT],
                     env=plugin_env(extra={"TEST_CMD": TEST_CMD}))

    fake_api.assert_done()
    assert run.result is not None and NAMED in run.result, run.result
    assert step(project, 0).status == "awaiting-approval"


def test_maker_run_refuses_it_and_takes_the_reason_a_refactor_gives(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    """The same refusal in ``maker run``: a new session gets it, says why no test can fail
    (``behaviour_kept``), and the step stops for the person, who reads why."""
    buggy(project)
    write_plan(project)

    def says_why_when_told(request: RecordedRequest) -> Reply:
        assert REFUSED in request.last_user_text, request.last_user_text[-1500:]
        return Reply.text(handoff(0, {"files": ONLY_VACUOUS}, files=ONLY_VACUOUS,
                                  behaviour_kept=WHY))

    fake_api.script(EXECUTOR, orients(0), writes_all(brief=False, files=tuple(ONLY_VACUOUS)),
                    Reply.text(handoff(0, {"files": ONLY_VACUOUS}, files=ONLY_VACUOUS)),
                    says_why_when_told)
    run = run_maker(fake_api, project, claude_home, "--approve", "auto",
                    extra={"TEST_CMD": TEST_CMD})

    said = run.stdout + run.stderr
    assert run.returncode == 4, said[-2000:]
    fake_api.assert_done()
    assert NAMED in said and f"the executor says: {WHY}" in said, said[-2000:]
    assert step(project, 0).status == "awaiting-approval"
