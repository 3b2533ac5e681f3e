"""What users and models wrote is rendered safely: escaped in PLAN.md's table and graph,
without control characters in PLAN.md and briefs, and clipped where it is only shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import complete, make_step
from maker.cli.main import cli
from maker.core.models import Plan
from maker.core.text import clip, md_cell, mermaid_label, strip_controls, task_line
from maker.executor.launch.brief import build_brief
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore

pytestmark = pytest.mark.usefixtures("project")

EVIL = "x](https://evil.example/)|y"


def _plan(project: Path, title: str = "Plain", task: str = "Build it") -> PlanStore:
    store = PlanStore(project / "plans")
    store.write_plan(Plan(reasoning="Because.", task=task, steps=[
        make_step(1, 2, title=title), make_step(2, -1, inputs=["step_1_output.result"])]))
    return store


def test_a_title_cannot_become_a_link_or_a_column_in_plan_md(project: Path) -> None:
    store = _plan(project, title=EVIL)
    text = store.overview_path.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert row.startswith(r"| 1 | [x\](https://evil.example/)\|y](steps/01-")
    assert row.count(" | ") == 5  # six columns, as the header has
    assert "](https://evil.example/)" not in row.replace(r"\]", "")


@pytest.mark.parametrize(("text", "cell"), [
    ("a|b", r"a\|b"), ("[x](y)", r"\[x\](y)"), ("`code`", r"\`code\`"),
    ("<img src=x>", r"\<img src=x\>"), ("two\nlines", "two lines"), ("back\\slash", r"back\\slash"),
])
def test_md_cell(text: str, cell: str) -> None:
    assert md_cell(text) == cell


def test_mermaid_labels_cannot_close_their_quotes() -> None:
    assert mermaid_label('a"]; click s1 "https://x"') == "a#quot;]; click s1 #quot;https://x#quot;"
    assert mermaid_label("<b>`x`</b> #1") == "#lt;b#gt;#96;x#96;#lt;/b#gt; #35;1"


def test_plan_md_graph_escapes_titles(project: Path) -> None:
    store = _plan(project, title='Say "hi" <b>')
    text = store.overview_path.read_text()
    assert 's1["1. Say #quot;hi#quot; #lt;b#gt; [pending]"]' in text


def test_control_characters_never_reach_a_brief(project: Path) -> None:
    store = _plan(project, task="Build\x00 it\x1b[31m red")
    complete(store, 1, for_next_agent="keep\x00 this\x1b[2J\r\nverbatim")
    brief = build_brief(store, None, 2)
    assert "keep this[2J\nverbatim" in brief
    assert "Build it[31m red" in brief
    assert not any(ord(c) < 32 and c not in "\n\t" for c in brief)
    overview = store.overview_path.read_text()
    assert "\x00" not in overview and "\x1b" not in overview


def test_strip_controls_keeps_text_verbatim() -> None:
    assert strip_controls("a\x00b\tc\r\nd\x7fe\x9bf é ✓") == "ab\tc\nde f é ✓".replace(" f", "f")


def test_clip_says_how_much_more_and_where() -> None:
    assert clip("abcdef", 3, "PLAN.md") == "abc… (3 more characters in PLAN.md)"
    assert clip("abc", 3) == "abc"
    assert task_line("first line\nsecond", 5, "P") == "first… (12 more characters in P)"
    assert task_line("  \n") == "(no task text)"
    assert task_line("short\nsecond line") == "short"


def test_status_and_session_start_clip_a_huge_task(project: Path) -> None:
    task = "word " * 4000  # 20,000 characters on one line
    store = _plan(project, task=task)
    out = CliRunner().invoke(cli, ["status"]).output
    assert len(out) < 2000
    assert f"more characters in {store.overview_path})" in out
    data = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(project)}
    context = json.loads(run_hook("session-start", HANDLERS["session-start"],
                                  stdin=json.dumps(data)))
    text = context["hookSpecificOutput"]["additionalContext"]
    assert len(text) < 2000 and "more characters in" in text
    assert task.strip() in store.overview_path.read_text()  # PLAN.md keeps all of it
