"""PlannerModule: seed 001 Task 2's tests verbatim (``_mock_sdk_stream`` filled in),
then what the seed leaves open: refused plans sent back, the SDK call, its errors."""

from unittest.mock import patch

import pytest
from claude_agent_sdk import AssistantMessage, TextBlock

from maker.core.events import PlanCreated, TaskSubmitted
from maker.core.models import TaskConfig
from maker.planner.planner import PlannerModule
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
