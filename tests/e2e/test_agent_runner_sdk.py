"""AgentRunner against the real claude-agent-sdk and the real bundled Claude Code CLI.

The scripted Messages API on 127.0.0.1 plays the model; everything between it and
AgentRunner (the SDK's subprocess transport and control protocol, the CLI's agent loop,
its cost estimate, its ResultMessage) is real. ``_sdk_query`` is not patched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import write_plan
from harness.sdk_runner import greet_step, make_runner
from maker.core.models import TaskConfig
from maker.errors import ClaudeNotFoundError
from maker_scripted import FakeMessagesAPI, Reply
from maker_scripted.replies import ApiError

pytestmark = pytest.mark.e2e

HANDOFF = """\
step: 2
status: complete
output:
  greeting: hello from the scripted model
summary: Wrote the greeting.
discoveries:
  - The project greets in English.
decisions: []
blockers: []
for_next_agent: The greeting is in output.greeting.
files_changed: []
"""


async def test_real_sdk_answer_is_parsed_with_cost_and_duration(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path,
        claude_home: Path) -> None:
    fake_api.script("step-executor", Reply.text(HANDOFF))
    runner = make_runner(fake_api, claude_binary, claude_home)

    result = await runner.run(greet_step(), context="step_1_output:\n  name: maker\n",
                              config=TaskConfig(instruction="greet", cwd=str(project)))

    assert result.error is None, result.error
    assert result.output["output"] == {"greeting": "hello from the scripted model"}
    assert result.output["for_next_agent"] == "The greeting is in output.greeting."
    assert result.raw_response.strip() == HANDOFF.strip()
    assert result.was_repaired is False
    # From the real ResultMessage: the CLI's own cost estimate and timing.
    assert result.cost_usd > 0
    assert result.duration_ms > 0
    assert result.tokens > 0
    fake_api.assert_done()
    # The session really was the step executor's, with the step's prompt.
    (request,) = fake_api.requests_for("step-executor")
    assert "maker-agent: step-executor" in request.system_text
    assert "# Step 2: Greet" in request.last_user_text
    assert "name: maker" in request.last_user_text


async def test_real_sdk_api_failure_is_a_result_with_error(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path,
        claude_home: Path) -> None:
    fake_api.script("step-executor", ApiError(529, "overloaded_error", "Overloaded"))
    runner = make_runner(fake_api, claude_binary, claude_home)

    result = await runner.run(greet_step(), context="",
                              config=TaskConfig(instruction="greet", cwd=str(project)))

    assert result.output is None
    assert result.error is not None and "error" in result.error


async def test_missing_cli_is_translated_with_what_to_do(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path, tmp_path: Path) -> None:
    runner = make_runner(fake_api, tmp_path / "no-such-claude", claude_home)

    with pytest.raises(ClaudeNotFoundError, match="pip install"):
        await runner.run(greet_step(), context="",
                         config=TaskConfig(instruction="greet", cwd=str(project)))


async def test_notes_keep_only_the_facts_of_an_answer_that_passes(
        fake_api: FakeMessagesAPI, claude_binary: Path, project: Path,
        claude_home: Path) -> None:
    """With the real SDK, seed 002's NotesContext (docs/architecture.md#the-seeds) on
    AgentRunner writes
    NOTES.md from an answer the red flagger and the gate's checks accept, never from one
    they refuse."""
    from maker.executor.launch.notes_context import NotesContext
    from maker.store.plan_store import PlanStore

    store: PlanStore = write_plan(project)
    spec = store.load().get(0).spec
    refused = ("step: 0\nstatus: complete\noutput: {files: [hello.txt]}\n"
               "discoveries:\n  - A fact from a refused answer.\n")  # no summary
    good = ("step: 0\nstatus: complete\noutput: {files: [hello.txt]}\nsummary: Wrote it.\n"
            "discoveries:\n  - A fact from a good answer.\n")
    fake_api.script("step-executor", Reply.text(refused), Reply.text(good))
    runner = make_runner(fake_api, claude_binary, claude_home, notes=NotesContext(store))
    config = TaskConfig(instruction="greet", cwd=str(project))

    await runner.run(spec, context="", config=config)
    notes = store.notes_path
    assert not notes.exists() or "refused answer" not in notes.read_text()
    await runner.run(spec, context="", config=config)
    assert "A fact from a good answer." in notes.read_text()
    assert "refused answer" not in notes.read_text()
    fake_api.assert_done()
