"""A step's brief scoped by its component, through ``maker run`` (the real SDK and CLI):
what a step of component ``api`` discovers reaches the next ``api`` step's brief, and not
the brief of a step of ``web`` that does not depend on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.maker_run import EXECUTOR, run_maker
from harness.plugin import step, write_plan
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e

API_FACT = "The api listens on port 7001."
WEB_FACT = "The web page is served by htmx."


def reads(n: int, component: str) -> dict[str, Any]:
    """A step that only reads (no sweep, no verification needed), of ``component``,
    depending on no earlier step."""
    return {"step": n, "task_type": "action_step", "title": f"Look at the {component}",
            "task_description": f"Read the {component}'s code and report what you learn.",
            "primary_tools": ["Read"], "fallback_tools": [], "primary_tool_instructions":
            "Read the files.", "fallback_tool_instructions": "None.", "input_variables": [],
            "output_variable": f"step_{n}_output", "output_schema": "{ok: bool}",
            "next_step_sequence_number": n + 1 if n < 2 else -1, "depends_on": [],
            "component": component}


def test_a_steps_brief_carries_its_components_discoveries_not_anothers(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    write_plan(project, {"task": "Learn the api and the web page", "reasoning": "Two parts.",
                         "plan": [reads(0, "api"), reads(1, "web"), reads(2, "api")]})
    briefs: list[str] = []

    def answers(n: int, **fields: Any) -> Any:
        def turn(request: RecordedRequest) -> Reply:
            briefs.append(request.last_user_text)
            return Reply.text(handoff(n, {"ok": True}, **fields))
        return turn

    fake_api.script(EXECUTOR, answers(0, discoveries=[API_FACT]),
                    answers(1, discoveries=[WEB_FACT]), answers(2))
    run = run_maker(fake_api, project, claude_home, "--approve", "auto")

    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    fake_api.assert_done()
    assert [step(project, n).status for n in range(3)] == ["complete"] * 3
    notes = (project / "plans" / "NOTES.md").read_text()
    assert f"{API_FACT} (step 0)" in notes and f"{WEB_FACT} (step 1)" in notes
    web, api = briefs[1], briefs[2]
    assert "facts of component `web`" in web and API_FACT not in web
    assert "(1 fact of other components left out: it is in plans/NOTES.md)" in web
    assert "facts of component `api`" in api and API_FACT in api and WEB_FACT not in api
