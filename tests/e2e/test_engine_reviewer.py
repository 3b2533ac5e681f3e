"""The headless reviewer (``maker run``) in a real SDK session, the real bundled Claude
Code CLI and the scripted Messages API: its Bash only reads, as the plugin's reviewer's
does (``maker.tools.guards.reader_bash``), and its git runs none of the programs git's config
names. Before, the session auto-approved every Bash command the reviewer wrote."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.plugin import git_trap
from maker.engine.sessions import sdk_reviewer
from maker_scripted import FakeMessagesAPI, Reply, isolated_env

pytestmark = pytest.mark.e2e


async def test_the_headless_reviewers_bash_only_reads_and_its_git_runs_no_program(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path,
        claude_home: Path) -> None:
    ran = git_trap(project)
    fake_api.script("reviewer",
                    Reply.tool("Bash", {"command": "touch made-by-the-reviewer"}),
                    Reply.tool("Bash", {"command": "git diff"}),
                    Reply.text("GREEN: as described.\nVERDICT: approve"))
    isolated = isolated_env(fake_api.base_url, claude_home)
    blanked = {k: "" for k in os.environ if k not in isolated}
    review = sdk_reviewer(project, env={**blanked, **isolated}, cli_path=claude_binary)

    answer = await review("Review maker step 0.", max_budget_usd=None, model=None)

    fake_api.assert_done()
    assert answer.error is None and "VERDICT: approve" in answer.text
    touch, diff = fake_api.requests_for("reviewer")[-1].all_tool_results
    assert touch.is_error and "the reviewer only reads" in touch.text
    assert not (project / "made-by-the-reviewer").exists()
    assert not diff.is_error and "+two" in diff.text, diff.text
    assert not ran.exists()
