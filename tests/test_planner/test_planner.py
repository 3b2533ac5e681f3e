"""PlannerModule: seed 001 Task 2's tests (docs/architecture.md#the-seeds) verbatim
(``_mock_sdk_stream`` filled in),
then what the seed leaves open: refused plans sent back, the SDK call, its errors."""

from unittest.mock import patch

import claude_agent_sdk
import pytest
from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock

from harness.engine_fakes import ScriptedModel, parts, run
from harness.step_plans import handoff
from maker.core.events import PlanCreated, TaskSubmitted
from maker.core.models import TaskConfig
from maker.core.sdk import read_answer, translate_error
from maker.errors import (
    AgentProcessError,
    AgentSDKError,
    AgentStreamError,
    BudgetExceededError,
    ClaudeNotFoundError,
    PlanRefusedError,
    PlanValidationError,
)
from maker.planner.planner import PlannerModule
from maker.prompts import load_prompt, prompt_tools
from maker.tools.registry import ToolRegistry


def make_task_submitted(instruction="Do something"):
    config = TaskConfig(instruction=instruction)
    return TaskSubmitted(timestamp=1000.0, instruction=instruction, config=config)


def make_valid_yaml_output():
    """Simulate raw YAML that the planner LLM would produce."""
    return """reasoning: >
  Simple plan to read a file.

plan:
  - step: 0
    task_type: action_step
    title: read_file
    task_description: Read the file contents
    primary_tools: [Read]
    fallback_tools: []
    primary_tool_instructions: Use Read tool
    fallback_tool_instructions: ""
    input_variables: []
    output_variable: step_0_output
    output_schema: "{content: string}"
    next_step_sequence_number: -1"""


class TestPlannerModule:
    async def test_emits_plan_created(self):
        """Planner should emit PlanCreated with a valid Plan."""
        registry = ToolRegistry()
        registry.register_builtin("Read", "Read files")

        planner = PlannerModule(registry=registry)

        # Mock the SDK query to return a stream with our YAML
        mock_messages = _mock_sdk_stream(make_valid_yaml_output())

        with patch.object(planner, "_call_sdk", return_value=mock_messages):
            event = make_task_submitted("Read a file")
            events = [e async for e in planner.process(event)]

        assert len(events) == 1
        assert isinstance(events[0], PlanCreated)
        assert events[0].plan.reasoning is not None
        assert len(events[0].plan.steps) == 1
        assert events[0].plan.steps[0].title == "read_file"

    async def test_passes_tools_to_prompt(self):
        """Planner should include available tools in the prompt."""
        registry = ToolRegistry()
        registry.register_builtin("Read", "Read files")
        registry.register_builtin("Write", "Write files")

        planner = PlannerModule(registry=registry)

        prompt_used = None

        async def capture_prompt(prompt, **kwargs):
            nonlocal prompt_used
            prompt_used = prompt
            return _mock_sdk_stream(make_valid_yaml_output())

        planner._call_sdk = capture_prompt

        event = make_task_submitted("Do something")
        _ = [e async for e in planner.process(event)]

        assert "Read" in prompt_used
        assert "Write" in prompt_used

    async def test_uses_yaml_cleaner(self):
        """Planner should parse output through YAMLCleaner."""
        registry = ToolRegistry()
        registry.register_builtin("Read", "Read files")

        planner = PlannerModule(registry=registry)

        # Wrap YAML in fences — cleaner should strip them
        fenced_yaml = "```yaml\n" + make_valid_yaml_output() + "\n```"
        mock_messages = _mock_sdk_stream(fenced_yaml)

        with patch.object(planner, "_call_sdk", return_value=mock_messages):
            events = [e async for e in planner.process(make_task_submitted())]

        assert len(events) == 1
        assert isinstance(events[0], PlanCreated)

    async def test_ignores_non_task_submitted_events(self):
        """Planner should yield nothing for events it doesn't handle."""
        from maker.core.events import StepStarted

        registry = ToolRegistry()
        planner = PlannerModule(registry=registry)

        event = StepStarted(timestamp=1000.0, step=0, title="x")
        events = [e async for e in planner.process(event)]
        assert events == []

    async def test_sdk_error_raises(self):
        """If SDK query fails, planner should propagate the error."""
        registry = ToolRegistry()
        registry.register_builtin("Read", "Read files")

        planner = PlannerModule(registry=registry)

        async def failing_sdk(*args, **kwargs):
            raise RuntimeError("SDK connection failed")

        planner._call_sdk = failing_sdk

        with pytest.raises(RuntimeError, match="SDK connection failed"):
            _ = [e async for e in planner.process(make_task_submitted())]


def _mock_sdk_stream(text_content: str):
    """Create a mock SDK message stream that returns the given text."""
    # Returns an async iterator of mock messages
    # Final AssistantMessage with a TextBlock containing text_content
    async def stream():
        yield AssistantMessage(content=[TextBlock(text="I'll read the file first.")],
                               model="scripted")
        yield AssistantMessage(content=[TextBlock(text=text_content)], model="scripted")

    return stream()


# -- beyond the seed ------------------------------------------------------------------

MISSPELT = make_valid_yaml_output().replace("primary_tools:", "primary_tool:")


def _result(session: str = "s-1", cost: float = 0.25, **changes):
    fields = dict(subtype="success", duration_ms=1200, duration_api_ms=900, is_error=False,
                  num_turns=1, session_id=session, total_cost_usd=cost,
                  usage={"input_tokens": 100, "output_tokens": 20})
    fields.update(changes)
    return ResultMessage(**fields)


def _stream(*messages):
    async def stream():
        for m in messages:
            yield m
    return stream()


def _answer(text: str, **result):
    return _stream(AssistantMessage(content=[TextBlock(text=text)], model="scripted"),
                   _result(**result))


class ScriptedSdk:
    """Plays ``_call_sdk``: answers in order, records every prompt and option."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.kwargs: list[dict] = []

    async def __call__(self, prompt, **kwargs):
        self.prompts.append(prompt)
        self.kwargs.append(kwargs)
        return self.answers.pop(0)


async def _plan(planner, instruction="Read a file"):
    return [e async for e in planner.process(make_task_submitted(instruction))]


class TestRefusedPlans:
    async def test_refused_plan_goes_back_with_every_problem(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        twice_wrong = MISSPELT.replace("Read]", "Raed]")
        sdk = ScriptedSdk(twice_wrong, make_valid_yaml_output())
        planner._call_sdk = sdk

        events = await _plan(planner)

        assert [type(e) for e in events] == [PlanCreated]
        assert len(sdk.prompts) == 2
        feedback = sdk.prompts[1]
        assert "attempt 1 of 3" in feedback
        assert "primary_tool: is not a step field (fix: did you mean `primary_tools`?)" in feedback
        # A fresh session (no session id came back): it sees the task and its answer again.
        assert "Plan this task: Read a file" in feedback
        assert twice_wrong in feedback

    async def test_gives_up_after_the_last_attempt_with_every_problem(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        sdk = ScriptedSdk(MISSPELT, MISSPELT, "no yaml here: [")
        planner._call_sdk = sdk

        with pytest.raises(PlanRefusedError) as caught:
            await _plan(planner)

        assert len(sdk.prompts) == 3
        assert caught.value.attempts == 3
        assert isinstance(caught.value, PlanValidationError)
        assert [p.field for p in caught.value.problems] == ["yaml"]
        assert "refused 3 times" in str(caught.value)

    @pytest.mark.parametrize("attempts", [1, 2, 5])
    async def test_the_number_of_attempts_is_configurable(self, attempts):
        planner = PlannerModule(registry=ToolRegistry.default(), max_attempts=attempts)
        sdk = ScriptedSdk(*[MISSPELT] * attempts)
        planner._call_sdk = sdk

        with pytest.raises(PlanRefusedError, match=f"refused {attempts} time"):
            await _plan(planner)
        assert len(sdk.prompts) == attempts
        assert f"attempt {attempts - 1} of {attempts}" in sdk.prompts[-1] or attempts == 1

    def test_zero_attempts_is_refused(self):
        with pytest.raises(ValueError, match="max_attempts"):
            PlannerModule(registry=ToolRegistry(), max_attempts=0)

    async def test_a_known_session_is_resumed_with_the_problems_only(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        sdk = ScriptedSdk(_answer(MISSPELT, session="s-1", cost=0.5),
                          _answer(make_valid_yaml_output(), session="s-1", cost=0.25))
        planner._call_sdk = sdk

        events = await _plan(planner)

        assert isinstance(events[0], PlanCreated)
        assert [k["resume"] for k in sdk.kwargs] == [None, "s-1"]
        assert sdk.prompts[1].startswith("maker rejected the plan (attempt 1 of 3)")
        assert "Plan this task" not in sdk.prompts[1]
        assert [c.cost_usd for c in planner.calls] == [0.5, 0.25]
        assert planner.cost_usd == 0.75
        assert planner.calls[0].tokens == 120

    async def test_the_plan_keeps_the_users_words_as_its_task(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk("task: the model's paraphrase\n" + make_valid_yaml_output())

        events = await _plan(planner, 'Read "a" file; then stop')

        assert events[0].plan.task == 'Read "a" file; then stop'

    async def test_call_sdk_must_return_text_or_a_stream(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk(42)
        with pytest.raises(TypeError, match="got int"):
            await _plan(planner)


class TestReadAnswer:
    async def test_the_last_text_block_of_the_final_top_level_assistant_message(self):
        messages = _stream(
            AssistantMessage(content=[TextBlock(text="early")], model="m"),
            AssistantMessage(content=[TextBlock(text="first"), TextBlock(text="last")],
                             model="m"),
            AssistantMessage(content=[TextBlock(text="a subagent's")], model="m",
                             parent_tool_use_id="tool-1"),
            _result(session="abc", cost=0.125),
        )
        answer = await read_answer(messages, agent="planner")
        assert answer.text == "last"
        assert (answer.cost_usd, answer.duration_ms, answer.tokens, answer.session_id) == (
            0.125, 1200, 120, "abc")

    async def test_a_stream_of_seed_000_style_mocks_reads_as_the_step_runner_reads_it(self):
        """Seed 000's mocks are known by their class's name, not by the SDK's classes:
        the planner takes the stream the step runner takes (one reader)."""
        from unittest.mock import MagicMock

        def mock(kind, **fields):
            message = MagicMock()
            message.__class__.__name__ = kind
            for key, value in fields.items():
                setattr(message, key, value)
            return message

        def messages():
            return _stream(mock("AssistantMessage",
                                content=[mock("TextBlock", text=make_valid_yaml_output())]),
                           mock("ResultMessage", subtype="success", total_cost_usd=0.01,
                                duration_ms=500))

        answer = await read_answer(messages(), agent="planner")
        assert answer.text == make_valid_yaml_output() and answer.cost_usd == 0.01
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk(messages())
        events = await _plan(planner)
        assert isinstance(events[-1], PlanCreated)

    async def test_an_empty_stream_is_empty_text(self):
        answer = await read_answer(_stream(), agent="planner")
        assert answer.text == "" and answer.cost_usd == 0.0

    @pytest.mark.parametrize("changes, error, says", [
        ({"subtype": "error_max_budget_usd"}, BudgetExceededError, "raise the budget"),
        ({"subtype": "error_max_turns"}, AgentSDKError, "raise max_turns"),
        ({"subtype": "success", "api_error_status": 401, "result": "API Error: 401"},
         AgentSDKError, "ANTHROPIC_API_KEY"),
        ({"subtype": "error_during_execution", "errors": ["boom"]}, AgentSDKError, "(boom)"),
    ])
    async def test_an_error_result_raises_with_what_to_do_and_its_cost(self, changes, error,
                                                                       says):
        messages = _stream(_result(is_error=True, cost=0.75, **changes))
        with pytest.raises(error, match=r"^planner: ") as caught:
            await read_answer(messages, agent="planner")
        assert says in str(caught.value)
        assert caught.value.cost_usd == 0.75 and caught.value.session_id == "s-1"


class TestTranslateError:
    @pytest.mark.parametrize("exc, error, says", [
        (claude_agent_sdk.CLINotFoundError("Claude Code not found", "/x/claude"),
         ClaudeNotFoundError, "-m pip install 'claude-agent-sdk>=0.2.180'"),
        (claude_agent_sdk.ProcessError("failed", exit_code=7, stderr="no network"),
         AgentProcessError, "with exit code 7; its error output ends with: no network"),
        (claude_agent_sdk.CLIJSONDecodeError("{oops", ValueError("x")), AgentStreamError,
         "pip install -U claude-agent-sdk"),
        (claude_agent_sdk.CLIConnectionError("closed"), AgentProcessError,
         "claude --version"),
        (claude_agent_sdk.ResultError("r", data={"subtype": "error_max_budget_usd",
                                                 "total_cost_usd": 2.0, "session_id": "z"}),
         BudgetExceededError, "raise the budget"),
    ])
    def test_each_sdk_error_becomes_a_maker_error_that_says_what_to_do(self, exc, error, says):
        translated = translate_error(exc, agent="planner")
        assert type(translated) is error
        assert says in str(translated)

    def test_a_result_error_keeps_its_cost(self):
        exc = claude_agent_sdk.ResultError("r", data={"subtype": "error_max_budget_usd",
                                                      "total_cost_usd": 2.0})
        assert translate_error(exc, agent="planner").cost_usd == 2.0


class FakeQuery:
    """Stands in for ``claude_agent_sdk.query``: records the options, plays a stream."""

    def __init__(self, *streams):
        self.streams = list(streams)
        self.calls: list[tuple[str, object]] = []

    def __call__(self, *, prompt, options):
        self.calls.append((prompt, options))
        item = self.streams.pop(0)
        if isinstance(item, BaseException):
            async def failing():
                raise item
                yield  # pragma: no cover
            return failing()
        return item


class TestCallSdk:
    async def test_query_gets_the_plugin_planners_prompt_tools_and_the_task_options(
            self, monkeypatch, tmp_path):
        fake = FakeQuery(_answer(MISSPELT, session="s-9", cost=0.5),
                         _answer(make_valid_yaml_output(), session="s-9", cost=0.25))
        monkeypatch.setattr(claude_agent_sdk, "query", fake)
        planner = PlannerModule(registry=ToolRegistry.default(), max_budget_usd=2.0,
                                env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
        config = TaskConfig(instruction="Read a file", model="claude-x", cwd=str(tmp_path),
                            max_turns=7)

        events = [e async for e in planner.process(
            TaskSubmitted(timestamp=1.0, instruction="Read a file", config=config))]

        assert isinstance(events[0], PlanCreated)
        (_, first), (feedback, second) = fake.calls
        assert first.tools == first.allowed_tools == prompt_tools("planner") == [
            "Read", "Grep", "Glob"]
        assert first.system_prompt == load_prompt("planner")
        assert (first.cwd, first.model, first.max_turns) == (str(tmp_path), "claude-x", 7)
        assert first.env == {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
        assert first.resume is None and second.resume == "s-9"
        # Each call gets what is left of the planning budget.
        assert (first.max_budget_usd, second.max_budget_usd) == (2.0, 1.5)
        assert "primary_tool: is not a step field" in feedback
        assert [c.cost_usd for c in planner.calls] == [0.5, 0.25]

    async def test_a_failed_call_is_translated_and_still_recorded(self, monkeypatch):
        monkeypatch.setattr(claude_agent_sdk, "query", FakeQuery(
            _stream(_result(is_error=True, subtype="error_max_budget_usd", cost=1.0))))
        planner = PlannerModule(registry=ToolRegistry.default(), max_budget_usd=1.0)

        with pytest.raises(BudgetExceededError):
            await _plan(planner)
        assert planner.cost_usd == 1.0
        assert "budget" in (planner.calls[0].error or "")

    async def test_an_sdk_exception_is_translated(self, monkeypatch):
        monkeypatch.setattr(claude_agent_sdk, "query", FakeQuery(
            claude_agent_sdk.ProcessError("failed", exit_code=1, stderr="bad")))
        planner = PlannerModule(registry=ToolRegistry.default())
        with pytest.raises(AgentSDKError,
                           match="with exit code 1; its error output ends with: bad"):
            await _plan(planner)

    async def test_a_spent_budget_stops_before_calling(self, monkeypatch):
        fake = FakeQuery(_answer(MISSPELT, cost=1.5))
        monkeypatch.setattr(claude_agent_sdk, "query", fake)
        planner = PlannerModule(registry=ToolRegistry.default(), max_budget_usd=1.0)

        with pytest.raises(BudgetExceededError, match="planning budget of \\$1 is spent"):
            await _plan(planner)
        assert len(fake.calls) == 1


class TestABudgetStopAfterThePlan:
    """The SDK ends a session in error once its budget is spent, also after the model
    answered: the valid plan that was paid for is kept, and `maker run` continues it
    (it used to be thrown away, and the next run found no plan)."""

    @staticmethod
    def _paid_but_stopped():
        return _answer(make_valid_yaml_output(), subtype="error_max_budget_usd",
                       is_error=True, cost=0.02)

    async def test_the_planner_yields_the_paid_for_plan_then_stops(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk(self._paid_but_stopped())
        events = []
        with pytest.raises(BudgetExceededError):
            async for event in planner.process(make_task_submitted("Read a file")):
                events.append(event)
        assert [type(e).__name__ for e in events] == ["PlanCreated"]
        assert events[0].plan.task == "Read a file"
        assert planner.cost_usd == 0.02  # the stopped call is paid for, and counted

    async def test_a_stop_before_any_valid_plan_keeps_nothing(self):
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk(_answer("I was about to plan", is_error=True,
                                                subtype="error_max_budget_usd"))
        with pytest.raises(BudgetExceededError):
            assert [e async for e in planner.process(make_task_submitted())] == []

    def test_maker_run_keeps_the_plan_and_a_continued_run_finishes_it(self, tmp_path,
                                                                      monkeypatch):
        from maker.engine.orchestrator import Orchestrator
        from maker.engine.stops import EXIT_BUDGET, EXIT_COMPLETE
        from maker.store.plan_store import PlanStore

        monkeypatch.setenv("MAKER_VERIFY", "off")
        store = PlanStore(tmp_path / "plans")
        planner = PlannerModule(registry=ToolRegistry.default())
        planner._call_sdk = ScriptedSdk(self._paid_but_stopped())
        first = run(Orchestrator(store, parts(ScriptedModel([])), planner=planner,
                                 approve="auto"), "Read a file")
        assert first.exit_code == EXIT_BUDGET, first.message
        assert "`maker run`" in first.message and "continues" in first.message
        assert store.exists() and [r.title for r in store.load().steps] == ["read_file"]
        answer = handoff(0, output={"content": "the file's text"})
        again = run(Orchestrator(store, parts(ScriptedModel([answer])), approve="auto"))
        assert again.exit_code == EXIT_COMPLETE, again.message
