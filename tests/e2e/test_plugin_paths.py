"""Claude Code started in a package of a monorepo: the hooks (told the project dir)
and the command lines and Bash tool (not told) find the same plans/."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import PLUGIN_ROOT, Run, write_plan
from harness.scenarios import plugin_env
from maker_scripted import FakeMessagesAPI, Reply

pytestmark = pytest.mark.e2e


def test_a_plan_in_a_package_of_a_monorepo_is_found_everywhere(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    pkg = project / "packages" / "web"  # `project` is the git repository's root
    pkg.mkdir(parents=True)
    write_plan(pkg)
    fake_api.script("main", Reply.tool("Bash", {"command": "maker next",
                                                "description": "What is next"}),
                    Reply.text("Step 0 is next."))

    run = run_claude("/maker:status", cwd=pkg, plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    fake_api.assert_done()
    first, second = fake_api.requests_for("main")
    # The SessionStart hook (CLAUDE_PROJECT_DIR) and the command's line (no such
    # variable) both read packages/web/plans.
    assert f"maker plan ({pkg}/plans)" in first.all_text
    assert "0     Write hello.txt  pending  -" in first.all_text
    # So does the Bash tool.
    assert "Write hello.txt" in second.tool_results[0].text
    assert not (project / "plans").exists()
    assert run.result == "Step 0 is next."
