"""maker's AgentRunner over the real claude-agent-sdk and bundled Claude Code CLI, its
environment isolated and pointed at the scripted Messages API (``make_runner``), and the
step it runs in the e2e tests (``greet_step``)."""

from __future__ import annotations

import os
from pathlib import Path

from maker.core.models import PlanStep
from maker.executor.launch.agent_runner import AgentRunner
from maker_scripted import FakeMessagesAPI, isolated_env


def greet_step(fallback: list[str] | None = None) -> PlanStep:
    """Step 2, "Greet": reads README.md, answers with a greeting (the e2e tests' step)."""
    return PlanStep(step=2, task_type="action_step", title="Greet",
                    task_description="Say hello.", primary_tools=["Read"],
                    fallback_tools=fallback or ["Grep"], primary_tool_instructions="Read README.md",
                    fallback_tool_instructions="", input_variables=[],
                    output_variable="step_2_output", output_schema="{greeting: string}",
                    next_step_sequence_number=-1)


def make_runner(api: FakeMessagesAPI, claude_binary: Path, home: Path, **kw: object
                ) -> AgentRunner:
    isolated = isolated_env(api.base_url, home)
    # The SDK starts the CLI with os.environ under options.env: blank what isolated_env
    # left out (a real key…) so none of it comes back.
    blanked = {k: "" for k in os.environ if k not in isolated}
    return AgentRunner(env={**blanked, **isolated}, cli_path=claude_binary, **kw)  # type: ignore[arg-type]

