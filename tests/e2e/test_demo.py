"""`maker demo` end to end: the real CLI, the real plugin, the scenarios' scripted model."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from maker.cli.main import cli

pytestmark = pytest.mark.e2e


def kept_demo(*args: str) -> tuple[str, Path]:
    """``maker demo ARGS`` (with --keep): its output and the project it kept."""
    result = CliRunner().invoke(cli, ["demo", *args])
    assert result.exit_code == 0, result.output
    kept = re.search(r"^The demo project is kept at (\S+)$", result.output, re.M)
    assert kept, result.output
    return result.output, Path(kept.group(1))


def test_demo_shows_an_interactive_session_with_background_subagents() -> None:
    """`maker demo` as people run the client: the real CLI in a terminal, auto mode,
    subagents in the background, the approval question answered by a key."""
    out, project = kept_demo("--keep")
    try:
        for line in [
            "maker demo (SCRIPTED)",
            "runs in a terminal, as you start it",
            "  you type  /maker:plan Add a hello.txt greeting to the project, and check it",
            "            | ● maker:planner(Plan the task)",
            "Backgrounded agent (",  # the client draws "⎿\xa0 Backgrounded agent"
            "  maker     told the main agent at launch: it runs in the background, nothing",
            "maker's verdict on the maker:planner subagent that just ended",
            "  you type  /maker:step 0",
            "  maker     REFUSED the hand-back (PreToolUse hook): the subagent was told",
            "              - summary: missing (fix: add `summary:` with what you did, in a",
            "            | maker: approve step 0 (Write hello.txt)?",
            "            | ❯ 1. Approve step 0",
            "  you press Enter: Approve step 0",
            "            |   STEP_COMPLETE",
            "  maker     recorded YOUR answer to the question (PostToolUse hook): step 0 is",
            "  you type  /maker:status",
            "            |   0     Write hello.txt  complete  -",
            "== What you just saw ==",
            "`maker demo --print` shows the same commands in print mode (claude -p,",
            "  claude --plugin-dir ",
        ]:
            assert line in out, line
        assert out.index("== 1/3") < out.index("== 2/3") < out.index("== 3/3")
        assert out.index("REFUSED the hand-back") < out.index("handoff accepted; status:")
        assert (project / "hello.txt").read_text() == "hello\n"
        assert (project / "plans/handoffs/00-write-hello-txt.md").is_file()
    finally:
        shutil.rmtree(project.parent)


def test_print_demo_narrates_plan_a_refused_then_accepted_handoff_and_status() -> None:
    out, project = kept_demo("--print", "--keep")
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


def test_headless_demo_plans_runs_flags_and_shows_the_ledger() -> None:
    out, project = kept_demo("--headless", "--keep")
    try:
        for line in [
            "maker demo --headless (SCRIPTED)",
            "no real model, no API key,",
            '  you type  maker run --approve auto "Add a hello.txt greeting and a README"',
            "  model     planner (scripted) answers its plan YAML",
            "  model     step executor (scripted) calls Write hello.txt",
            "  model     step executor (scripted) answers 'hello.txt looks right to me,",
            "            | maker run: every reachable step is complete (exit 0)",
            "  you type  maker status",
            "            | 3     Rewrite hello.txt  skipped   -        1",
            "  files     new: README.md, hello.txt",
            "== What you just saw ==",
        ]:
            assert line in out
        # The live lines of `maker run`, in order: step 1 flagged, resampled, decided.
        live = re.findall(r"^ {12}\| step +(\d) +(.+?) {2,}(running|complete|flagged)", out,
                          re.M)
        assert [(n, state) for n, _, state in live] == [
            ("0", "running"), ("0", "complete"), ("1", "running"), ("1", "flagged"),
            ("1", "complete"), ("2", "running"), ("2", "complete")]
        assert re.search(r"^ {12}\| spent: \$\d+\.\d{4} in 7 calls \(planner \$", out, re.M)
        assert out.index("== 1/3") < out.index("== 2/3") < out.index("== 3/3")
        assert (project / "hello.txt").read_text() == "hello\n"
        assert (project / "README.md").is_file()
        # Step 1 chooses the branch: a vote of 3 samples (one flagged) and its record.
        assert len((project / "plans/ledger.jsonl").read_text().splitlines()) == 7
    finally:
        shutil.rmtree(project.parent)


def test_headless_demo_quiet_keeps_the_run_and_drops_the_model(
        tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--headless", "--quiet"])

    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("maker demo --headless (SCRIPTED): maker run")
    assert "            | maker run: every reachable step is complete (exit 0)" in out
    assert "  files     new: README.md, hello.txt" in out
    assert "(scripted) calls" not in out and "excerpt" not in out
    assert "kept at" not in out


def test_headless_demo_off_script_fails_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from maker_scripted import headless

    script = headless._script

    def one_reply_too_many(api: Any, project: Path) -> None:
        script(api, project)
        api.script("step-executor", "a reply no step asks for")

    monkeypatch.setattr(headless, "_script", one_reply_too_many)

    result = CliRunner().invoke(cli, ["demo", "--headless", "--quiet"])

    assert result.exit_code == 1
    assert "the demo stopped: maker run went off script" in result.output
    assert "'step-executor' left 1 scripted reply unused" in result.output
    assert "Traceback" not in result.output
