"""The step executor's one rule (maker.tools.guards.executor_rules), shared by the plugin's
PreToolUse hook and the headless engine's SDK session, driven with plain values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import tool_step
from maker.tools.guards.executor_rules import executor_decision

OUTSIDE = "may use only"
PLANS = "maker's own record of the plan"
STATE = "does not move the plan's state"
DATA = "maker's own data"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "plans" / "steps").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    return tmp_path


TABLE: list[tuple[list[str], str, dict[str, Any], str | None]] = [
    # The step's own tools, and only those.
    (["Read"], "Read", {"file_path": "src/a.py"}, None),
    (["Read"], "Write", {"file_path": "src/a.py", "content": "x"}, OUTSIDE),
    (["Read"], "Edit", {"file_path": "src/a.py"}, OUTSIDE),
    (["Task"], "Agent", {"prompt": "go"}, None),  # an older name is the current tool
    (["Read"], "ToolSearch", {"query": "x"}, None),  # always allowed
    (["Read"], "AskUserQuestion", {}, OUTSIDE),  # a PlanStep's tools add it; see below
    # Bash: the whole tool, a rule, read-only for a searching step, maker's commands.
    (["Read"], "Bash", {"command": "ls"}, OUTSIDE),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test -- -x"}, None),
    (["Bash(npm test:*)"], "Bash", {"command": "npm test; rm -rf src"}, OUTSIDE),
    (["Grep"], "Bash", {"command": "ls src"}, None),
    (["Grep"], "Bash", {"command": "rm src/a.py"}, OUTSIDE),
    (["Read"], "Bash", {"command": "maker verify --step 3"}, None),
    # The guard, whatever the step lists.
    (["Write"], "Write", {"file_path": "plans/x", "content": "x"}, PLANS),
    (["Write"], "Write", {"file_path": "src/b.py", "content": "x"}, None),
    (["Bash"], "Bash", {"command": "touch plans/x"}, PLANS),
    (["Bash"], "Bash", {"command": "maker step approve 3"}, STATE),
    (["Bash"], "Bash", {"command": "pytest -q"}, None),
    (["Read"], "Read", {"file_path": "data/key"}, DATA),
]


@pytest.mark.parametrize(("tools", "tool", "tool_input", "expected"), TABLE)
def test_executor_decision_table(project: Path, tools: list[str], tool: str,
                                 tool_input: dict[str, Any], expected: str | None) -> None:
    step = tool_step(3, tools)
    # A PlanStep always lists AskUserQuestion: the table's "outside" rows use a spec
    # whose tools are exactly ``tools``.
    spec = _Spec(step.step, tools)
    reason = executor_decision(spec, tool, tool_input, cwd=project,
                               plans_root=project / "plans", data_dirs=(project / "data",),
                               home=project)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason


def test_outside_reason_names_the_step_its_tools_and_the_way_out(project: Path) -> None:
    reason = executor_decision(tool_step(3, ["Read"], ["Grep"]), "Write",
                               {"file_path": "src/a.py"}, cwd=project,
                               plans_root=project / "plans")
    assert reason == (
        "maker: step 3 may use only Read, Grep, AskUserQuestion (its primary and fallback "
        "tools); `Write` is not among them. Do the step with those tools, or report the gap "
        "in your handoff (status: blocked, with the reason in blockers).")


def test_a_plan_step_may_ask_its_question(project: Path) -> None:
    """The rule itself lets AskUserQuestion through (a person answers it in Claude
    Code); the headless engine answers it (maker.engine.tool_limits)."""
    assert executor_decision(tool_step(3, ["Read"]), "AskUserQuestion", {}, cwd=project,
                             plans_root=project / "plans") is None


class _Spec:
    def __init__(self, step: int, tools: list[str], writes: list[str] | None = None) -> None:
        self.step = step
        self.tools = tools
        self.writes = writes
