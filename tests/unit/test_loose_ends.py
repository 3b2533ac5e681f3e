"""Loose ends of issue 16, item 8: an error that keeps its problems, the step statuses
in one home, no ``noqa`` for a rule that is not enabled, every agent with its tools."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import maker
from harness.step_plans import linear
from maker.core.statuses import STEP_STATUSES
from maker.errors import PlanFileError
from maker.executor.rules.step_rules import REVIEW_THRESHOLD
from maker.store.plan_store import PlanStore

SRC = Path(maker.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
# What a step's executor must never be given: a subagent's calls are not held to the
# step's tools; the others reach past the step (other agents and tasks, the session's
# schedule, its working tree and mode) or run a command's lines outside the guard.
ESCAPES = {"Agent", "Task", "SendMessage", "TaskStop", "Skill", "SlashCommand", "CronCreate",
           "CronDelete", "EnterWorktree", "ExitWorktree", "EnterPlanMode", "ExitPlanMode"}


def test_a_plan_file_error_keeps_every_problem_with_its_file_field_and_fix(
        project: Path) -> None:
    store = linear(project, 3)
    steps = sorted((store.root / "steps").glob("*.md"))
    second = steps[1].read_text().replace("status: pending", "status: nope")
    steps[1].write_text(second.replace("## Task", "").replace("Do the work of step 2.", ""))
    steps[2].write_text(steps[2].read_text().replace("depends_on:\n- 2", "depends_on:\n- 9"))
    (store.root / "steps" / "xx-stray.md").write_text("stray")
    with pytest.raises(PlanFileError) as caught:
        PlanStore(store.root).load()
    error = caught.value
    found = [(p.path.name, p.field) for p in error.problems]
    assert found == [(steps[1].name, "status"), (steps[1].name, "body"),
                     ("xx-stray.md", None), (steps[2].name, "depends_on")]
    assert all(p.fix and p.problems == [p] for p in error.problems)
    assert str(error).splitlines()[1:] == [
        f"- {steps[1]}: status: 'nope' is not a status (fix: use one of "
        f"{', '.join(STEP_STATUSES)}); body: no task description (fix: write the task "
        "under a `## Task` heading)",
        f"- {steps[1].parent / 'xx-stray.md'}: not a step file name (NN-<title>.md) (fix: "
        f"move it out of {steps[1].parent})",
        f"- {steps[2]}: depends_on: no step 9 in the plan (fix: remove it from depends_on)"]


def _spelled(node: ast.AST) -> set[str]:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else []
    return {e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def test_the_step_statuses_are_spelled_out_in_one_place() -> None:
    places = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if set(STEP_STATUSES) <= _spelled(node):
                places.append(f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}")
    assert places == [f"core{os.sep}statuses.py:9"]


def test_no_noqa_names_a_rule_that_is_not_enabled() -> None:
    """Anywhere ruff looks: the package, the benchmarks, the tests and the demo's harness."""
    pytest.importorskip("ruff")
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--extend-select", "RUF100",
         "--output-format", "concise", "src", "benchmarks", "tests", "dev"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert found.returncode in (0, 1), found.stderr
    assert [line for line in found.stdout.splitlines() if "RUF100" in line] == []


def _front(agent: str) -> dict[str, str]:
    """An agent's front matter (one YAML mapping: ``tests/unit/test_front_matter.py``)."""
    text = (REPO / "agents" / f"{agent}.md").read_text(encoding="utf-8")
    head = yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))
    return {key: str(value) for key, value in head.items()}


def _names(line: str) -> set[str]:
    return {t.strip() for t in line.split(",") if t.strip()}


def test_the_executor_is_denied_what_escapes_its_step_and_keeps_what_a_step_may_name(
        ) -> None:
    """Its tools are its step's (the PreToolUse guard), MCP tools among them, which a
    static ``tools:`` list cannot grant (``mcp__*`` is not honoured: only a server's own
    name is); so its front matter takes away what no step may give it."""
    front = _front("step-executor")
    assert "tools" not in front
    denied = _names(front.get("disallowedTools", ""))
    assert ESCAPES <= denied
    planner = (REPO / "agents" / "planner.md").read_text(encoding="utf-8")
    offered = planner.split("Tool names are Claude Code tools (", 1)[1].split(")", 1)[0]
    assert not denied & _names(offered.replace("...", ""))


def test_the_reviewers_description_names_what_the_code_routes_to_it() -> None:
    description = _front("reviewer")["description"].split("<example>")[0]
    words = {5: "five"}
    assert f"changed {words[REVIEW_THRESHOLD]} or more files" in description
    assert "every step under the `reviewer` approval policy" in description
    # the boundaries a person declares (plans/settings.yaml), two of them crossed
    assert "crossed two declared architectural boundaries" in description
