"""`maker demo` end to end: the real CLI, the real plugin, the scenarios' scripted model."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from maker.cli.main import cli

pytestmark = pytest.mark.e2e


def test_demo_narrates_plan_a_refused_then_accepted_handoff_and_status() -> None:
    result = CliRunner().invoke(cli, ["demo", "--keep"])

    assert result.exit_code == 0, result.output
    out = result.output
    kept = re.search(r"^The demo project is kept at (\S+)$", out, re.M)
    assert kept
    project = Path(kept.group(1))
    try:
        for line in [
            "maker demo (SCRIPTED)",
            "no real model, no API key, nothing leaves",
            "  you type  /maker:plan Add a hello.txt greeting to the project, and check it",
            "              Add a hello.txt greeting to the project, and check it\n"
            "              </user-text>",
            "  model     planner (scripted) answers: its plan YAML",
            "  maker     SubagentStop hook ACCEPTED the plan and wrote plans/ (PLAN.md and",
            "            | | 0 | [Write hello.txt](steps/00-write-hello-txt.md) | action |",
            "  you type  /maker:step 0",
            "              STARTED: step 0 (Write hello.txt) started.",
            "  model     step executor (scripted) calls Bash: maker context 0",
            "  maker     SubagentStop hook BLOCKED that answer (nothing recorded) and sent",
            "              - summary: missing (fix: add `summary:` with what you did, in a",
            "  model     step executor (scripted) answers: the corrected handoff YAML",
            "  maker     SubagentStop hook ACCEPTED the handoff through the gate and wrote\n"
            "            plans/handoffs/00-write-hello-txt.md",
            "            | STEP_AWAITING_APPROVAL",
            "  you type  /maker:approve 0",
            "            | Approved step 0 (Write hello.txt); it is complete.",
            "            | STEP_COMPLETE",
            "  you type  /maker:status",
            "            | 0     Write hello.txt  complete  -",
            "== What you just saw ==",
            "  claude --plugin-dir ",
            "_bundled/claude)",
            "  /plugin marketplace add /path/to/the/clean/clone",
        ]:
            assert line in out
        assert out.index("== 1/4") < out.index("== 2/4") < out.index("== 3/4") \
            < out.index("== 4/4")
        assert out.index("hook BLOCKED") < out.index("hook ACCEPTED the handoff")
        assert (project / "hello.txt").read_text() == "hello\n"
        assert (project / "plans/handoffs/00-write-hello-txt.md").is_file()
    finally:
        shutil.rmtree(project.parent)
