"""A deliverable the client will not let a subagent write (a file named like a report):
the linter says so before the step runs, and the brief tells the executor how."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.step_plans import step_data, step_spec
from maker.core.models import Plan
from maker.executor.launch.brief import build_brief
from maker.planner.linter import lint_plan
from maker.planner.report_names import report_named
from maker.store.plan_store import PlanStore


@pytest.mark.parametrize(("text", "named"), [
    ("Write REPORT.md with the results", ["REPORT.md"]),
    ("write docs/summary-2026.md", ["docs/summary-2026.md"]),
    ("Findings.MD and ANALYSIS_auth.md", ["Findings.MD", "ANALYSIS_auth.md"]),
    ("docs/auth-report.md, README.md, reports/x.md", []),
    ("REPORT.txt, SUMMARY", []),
])
def test_what_the_client_refuses_is_named(text: str, named: list[str]) -> None:
    assert report_named([text]) == named


def _plan(**step: object) -> dict[str, object]:
    return {"reasoning": "One step.", "plan": [step_data(0, -1, **step)]}


def test_a_step_that_delivers_one_without_bash_is_refused_with_the_fix() -> None:
    problems = lint_plan(_plan(task_description="Audit the auth code; write FINDINGS.md.",
                               primary_tools=["Read", "Write"]))
    (problem,) = [p for p in problems if "FINDINGS.md" in str(p)]
    assert "refuses a subagent's Write" in str(problem) and "add `Bash`" in str(problem)
    assert problem.step == 0
    named_in_writes = lint_plan(_plan(primary_tools=["Write"], writes=["SUMMARY.md"]))
    assert [p for p in named_in_writes if "SUMMARY.md" in str(p)]


def test_with_bash_the_step_is_sound_and_its_brief_says_how(tmp_path: Path) -> None:
    assert lint_plan(_plan(task_description="Write REPORT.md.",
                           primary_tools=["Read", "Bash"])) == []
    store = PlanStore(tmp_path / "plans")
    store.write_plan(Plan(reasoning="r", task="t", steps=[step_spec(
        0, -1, task_description="Write REPORT.md.", primary_tools=["Read", "Bash"])]))
    brief = build_brief(store, None, 0)
    assert "refuses a subagent's Write" in brief
    assert "write `REPORT.md` with Bash (`cat > REPORT.md <<'EOF'`" in brief


def test_an_ordinary_deliverable_changes_nothing(tmp_path: Path) -> None:
    assert lint_plan(_plan(task_description="Write docs/auth-review.md.",
                           primary_tools=["Write"])) == []
    store = PlanStore(tmp_path / "plans")
    store.write_plan(Plan(reasoning="r", task="t", steps=[step_spec(
        0, -1, task_description="Write docs/auth-review.md.", primary_tools=["Write"])]))
    assert "refuses a subagent's Write" not in build_brief(store, None, 0)
