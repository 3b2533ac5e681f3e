"""AgentRunner beyond seed 000 (docs/architecture.md#the-seeds): the options of a real run,
the SDK's errors translated,
the answer's edge cases, and seed 002's persistent context through NOTES.md."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    CLIJSONDecodeError,
    CLINotFoundError,
    ProcessError,
    ResultMessage,
    TextBlock,
    ToolUseBlock,
)
from claude_agent_sdk._errors import ResultError

from harness.step_plans import step_spec
from maker.core.clock import utc_now
from maker.core.models import AgentResult, Plan, PlanStep, TaskConfig
from maker.errors import (
    AgentProcessError,
    AgentSDKError,
    AgentStreamError,
    ClaudeNotFoundError,
)
from maker.executor.launch.agent_runner import AgentRunner
from maker.executor.launch.notes_context import NotesContext
from maker.prompts import load_prompt
from maker.store.notes import add_notes, read_notes
from maker.store.plan_store import PlanStore

Script = Callable[..., AsyncIterator[Any]]


def make_step(n: int = 0, **overrides: Any) -> PlanStep:
    return step_spec(n, -1, **{"title": f"Step {n}", "fallback_tools": ["Bash"],
                               "primary_tool_instructions": "Read first.", **overrides})


def assistant(*texts: str, parent: str | None = None) -> AssistantMessage:
    return AssistantMessage(content=[TextBlock(t) for t in texts], model="m",
                            parent_tool_use_id=parent)


def result(subtype: str = "success", cost: float | None = 0.01, duration: int = 100,
           is_error: bool = False, **kw: Any) -> ResultMessage:
    return ResultMessage(subtype=subtype, duration_ms=duration, duration_api_ms=duration,
                         is_error=is_error, num_turns=1, session_id="s", total_cost_usd=cost,
                         **kw)


def scripted(*messages: Any, raise_after: BaseException | None = None,
             seen: dict[str, Any] | None = None) -> Script:
    async def query(prompt: str, **kwargs: Any) -> AsyncIterator[Any]:
        if seen is not None:
            seen.update(kwargs, prompt=prompt)
        for m in messages:
            yield m
        if raise_after is not None:
            raise raise_after

    return query


async def run(runner: AgentRunner, script: Script, step: PlanStep | None = None,
              config: TaskConfig | None = None, context: str = "") -> AgentResult:
    runner._sdk_query = script  # type: ignore[method-assign]
    return await runner.run(step or make_step(), context=context,
                            config=config or TaskConfig(instruction="t"))


# -- the options of a real run ----------------------------------------------------------


async def test_options_of_a_real_run() -> None:
    async def guard(*_: Any) -> Any: ...
    hooks = {"PreToolUse": ["a matcher"]}
    seen: dict[str, Any] = {}
    runner = AgentRunner(cwd="/proj", model="opus", max_budget_usd=0.5, can_use_tool=guard,
                         hooks=hooks, disallowed_tools=["Write", "Edit"], env={"A": "1"},
                         cli_path="/bin/claude")
    await run(runner, scripted(assistant("result: ok"), result(), seen=seen),
              config=TaskConfig(instruction="t", model="haiku", max_turns=7, cwd="/other"))
    assert seen["allowed_tools"] == ["Read", "Bash", "AskUserQuestion"]
    assert seen["system_prompt"] == load_prompt("step-executor")
    assert "maker-agent: step-executor" in seen["system_prompt"]
    assert not seen["system_prompt"].startswith("---")  # the front matter is not the prompt
    assert seen["cwd"] == "/proj" and seen["model"] == "opus"
    assert seen["max_budget_usd"] == 0.5 and seen["max_turns"] == 7
    assert seen["can_use_tool"] is guard and seen["hooks"] == hooks
    assert seen["disallowed_tools"] == ["Write", "Edit"]
    assert seen["permission_mode"] == "default"  # the callback decides
    assert seen["env"] == {"A": "1"} and seen["cli_path"] == "/bin/claude"


async def test_defaults_deny_what_is_not_allowed_and_take_the_config() -> None:
    seen: dict[str, Any] = {}
    await run(AgentRunner(), scripted(assistant("result: ok"), result(), seen=seen),
              config=TaskConfig(instruction="t", model="haiku", cwd="/proj"))
    assert seen["permission_mode"] == "dontAsk"
    assert seen["cwd"] == "/proj" and seen["model"] == "haiku"
    for unset in ("max_budget_usd", "can_use_tool", "hooks", "env", "cli_path", "max_turns"):
        assert unset not in seen  # left to the SDK's defaults


async def test_prompt_has_the_step_and_the_handoff_to_answer_with() -> None:
    seen: dict[str, Any] = {}
    await run(AgentRunner(), scripted(assistant("result: ok"), result(), seen=seen),
              step=make_step(3, title="Add the flag"))
    prompt = seen["prompt"]
    assert "# Step 3: Add the flag" in prompt and "Do the work of step 3." in prompt
    assert "Read first." in prompt
    assert "step: 3" in prompt and "for_next_agent:" in prompt  # the handoff template
    assert "Context from previous work" not in prompt  # no NotesContext, no seed-002 part


# -- the answer ---------------------------------------------------------------------------


async def test_real_sdk_types_last_text_block_of_the_final_message() -> None:
    msg = AssistantMessage(content=[TextBlock("first: x"),
                                    ToolUseBlock(id="t", name="Read", input={}),
                                    TextBlock("final: answer")], model="m")
    res = await run(AgentRunner(), scripted(assistant("early: no"), msg, result()))
    assert res.output == {"final": "answer"}


async def test_a_subagents_message_is_not_the_answer() -> None:
    res = await run(AgentRunner(), scripted(assistant("result: mine"),
                                            assistant("result: subagent's", parent="tool-1"),
                                            result()))
    assert res.output == {"result": "mine"}


async def test_final_message_without_text_is_an_error() -> None:
    only_tool = AssistantMessage(content=[ToolUseBlock(id="t", name="Read", input={})],
                                 model="m")
    res = await run(AgentRunner(), scripted(assistant("result: earlier"), only_tool,
                                            result()))
    assert res.output is None and res.error and "no text" in res.error


async def test_answer_without_yaml_is_an_error_kept_raw() -> None:
    res = await run(AgentRunner(), scripted(assistant("key: [unclosed"), result(cost=0.2)))
    assert res.output is None and res.error and "no usable YAML" in res.error
    assert res.raw_response == "key: [unclosed" and res.cost_usd == 0.2


async def test_budget_stop_is_an_error_with_its_cost() -> None:
    res = await run(AgentRunner(), scripted(
        assistant("result: half"), result("error_max_budget_usd", cost=0.51, is_error=True)))
    assert res.error and "error_max_budget_usd" in res.error and "budget" in res.error
    assert res.cost_usd == 0.51


async def test_api_error_in_a_success_result_is_an_error() -> None:
    res = await run(AgentRunner(), scripted(
        assistant("API Error: 529 Overloaded"),
        result(is_error=True, result="API Error: 529 Overloaded")))
    assert res.error and "529 Overloaded" in res.error


async def test_tokens_from_the_results_usage() -> None:
    res = await run(AgentRunner(), scripted(assistant("result: ok"), result(
        usage={"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2,
               "service_tier": "standard"})))
    assert res.tokens == 17


# -- the SDK's errors, translated ---------------------------------------------------------


@pytest.mark.parametrize(("error", "kind", "says"), [
    (CLINotFoundError("Claude Code not found", "/x/claude"), ClaudeNotFoundError,
     "pip install"),
    (ProcessError("Command failed", exit_code=1, stderr="Invalid API key"),
     AgentProcessError, "ANTHROPIC_API_KEY"),
    (ProcessError("Command failed", exit_code=2, stderr="boom"), AgentProcessError,
     "claude -p hello"),
    (CLIJSONDecodeError("{not json", ValueError("x")), AgentStreamError,
     "pip install -U claude-agent-sdk"),
])
async def test_sdk_errors_become_makers_with_what_to_do(
        error: Exception, kind: type[AgentSDKError], says: str) -> None:
    with pytest.raises(kind, match=says) as info:
        await run(AgentRunner(), scripted(raise_after=error))
    assert info.value.cause is error and info.value.__cause__ is error


async def test_process_error_keeps_exit_code_and_stderr() -> None:
    with pytest.raises(AgentProcessError) as info:
        await run(AgentRunner(), scripted(raise_after=ProcessError("x", 3, "tail")))
    assert info.value.exit_code == 3 and info.value.stderr == "tail"


async def test_the_clis_exit_after_an_error_result_is_that_result() -> None:
    err = ResultError("failed", {"subtype": "error_during_execution"}, exit_code=1)
    res = await run(AgentRunner(), scripted(
        assistant("partial: yes"), result("error_during_execution", is_error=True,
                                          errors=["tool crashed"]), raise_after=err))
    assert res.error and "tool crashed" in res.error


async def test_a_failure_after_a_success_result_is_raised() -> None:
    with pytest.raises(AgentProcessError):
        await run(AgentRunner(), scripted(assistant("result: ok"), result(),
                                          raise_after=ProcessError("x", 1)))


async def test_other_exceptions_are_not_translated() -> None:
    with pytest.raises(ZeroDivisionError):
        await run(AgentRunner(), scripted(raise_after=ZeroDivisionError()))


# -- seed 002: persistent context through NOTES.md -----------------------------------------


HANDOFF_1 = """\
step: 1
status: complete
output: {result: done}
summary: Did step 1.
discoveries: [The API retries on 429 already.]
decisions: [Keep the old client.]
blockers: []
for_next_agent: Read the client first.
"""


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(Plan(reasoning="why", task="t", steps=[
        make_step(0, next_step_sequence_number=1),
        make_step(1, input_variables=["step_0_output.result"])]))
    plan = store.load()
    store.write_handoff(0, {"step": 0, "status": "complete", "accepted_at": utc_now(),
                            "output": {"result": "r0"}, "summary": "did 0",
                            "for_next_agent": "Mind the feature flag."}, "body")
    add_notes(store.notes_path, {"discoveries": ["Tests live in tests/unit."]}, step=0,
              archive_dir=store.archive_dir, plan=plan.created_at)
    return store


async def test_prompt_carries_the_previous_note_and_the_notes(store: PlanStore) -> None:
    seen: dict[str, Any] = {}
    runner = AgentRunner(notes=NotesContext(store))
    await run(runner, scripted(assistant(HANDOFF_1), result(), seen=seen),
              step=store.load().get(1).spec, context="step_0_output:\n  result: r0")
    prompt = seen["prompt"]
    assert prompt.index("Context from previous work") < prompt.index("# Step 1")
    assert "Mind the feature flag." in prompt  # step 0's for_next_agent
    assert "Tests live in tests/unit." in prompt  # NOTES.md, read for this plan
    assert "result: r0" in prompt


async def test_answer_facts_go_to_notes_tagged_with_the_step(store: PlanStore) -> None:
    runner = AgentRunner(notes=NotesContext(store))
    res = await run(runner, scripted(assistant(HANDOFF_1), result()),
                    step=store.load().get(1).spec)
    assert res.error is None
    notes = read_notes(store.notes_path, plan=store.load().created_at)
    assert "The API retries on 429 already. (step 1)" in notes["Discoveries"]
    assert "Keep the old client. (step 1)" in notes["Decisions"]
    assert "Tests live in tests/unit. (step 0)" in notes["Discoveries"]
    # for_next_agent and summary are the handoff's, written only by the gate
    text = store.notes_path.read_text()
    assert "Read the client first" not in text and "Did step 1" not in text


@pytest.mark.parametrize("answer, final", [
    (HANDOFF_1, result("error_max_turns", is_error=True)),  # the session failed
    (HANDOFF_1.replace("step: 1", "step: 0"), result()),  # another step's handoff
    (HANDOFF_1.replace("summary: Did step 1.", "summary: 3"), result()),  # not a handoff
    # The gate refuses it: its output lacks the schema's key.
    (HANDOFF_1.replace("output: {result: done}", "output: {other: done}"), result()),
    # The red flagger discards it: an answer of over 20,000 characters.
    (HANDOFF_1.replace("summary: Did step 1.", "summary: " + "very " * 4500), result()),
])
async def test_a_discarded_answer_adds_no_facts(store: PlanStore, answer: str,
                                                final: ResultMessage) -> None:
    before = store.notes_path.read_text()
    await run(AgentRunner(notes=NotesContext(store)), scripted(assistant(answer), final),
              step=store.load().get(1).spec)
    assert store.notes_path.read_text() == before


def test_notes_context_records_nothing_for_a_result_with_error(store: PlanStore) -> None:
    import yaml

    handoff = yaml.safe_load(HANDOFF_1)
    context = NotesContext(store)
    assert context.update_from_result(AgentResult(handoff, HANDOFF_1, error="crash"), 1) == 0
    assert context.update_from_result(AgentResult(handoff, HANDOFF_1), 1) == 2


def test_notes_of_another_plan_are_not_this_plans(store: PlanStore) -> None:
    import yaml

    store.notes_path.write_text("# Notes\n\nPlan: 2001-01-01T00:00:00Z\n\n"
                                "## Decisions\n\n- Use the old plan's way. (step 1)\n")
    NotesContext(store).update_from_result(AgentResult(yaml.safe_load(HANDOFF_1), ""), 1)
    notes = read_notes(store.notes_path, plan=store.load().created_at)
    assert notes["Decisions"] == ["Keep the old client. (step 1)"]
