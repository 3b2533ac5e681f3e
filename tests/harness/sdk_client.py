"""Drive the real Claude Code CLI through claude-agent-sdk, as an app or IDE would.

``claude -p`` disables AskUserQuestion ("No such tool available"); a client on the
SDK's streaming protocol gets it through ``can_use_tool`` and answers it. This is
how the approval question of ``/maker:step`` is answered in the tests: the script's
model asks, :func:`run_sdk`'s ``answer`` plays the user, the CLI hands the answer
back to the model. Everything else is :func:`maker_scripted.run_claude`'s setup:
the same isolated environment, the same fake Messages API.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maker_scripted.claude_cli import find_claude, isolated_env
from maker_scripted.fake_api import FakeMessagesAPI

__all__ = ["Answer", "Question", "SdkRun", "run_sdk"]


@dataclass(frozen=True)
class Question:
    """One AskUserQuestion question: its text and its options' labels."""

    question: str
    options: list[str]


Answer = Callable[[Question], str]
"""Plays the user: the answer (an option's label, or free text) to one question."""


@dataclass
class SdkRun:
    """What an SDK session produced: its messages and the questions it asked."""

    messages: list[Any] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def results(self) -> list[str | None]:
        """The ``result`` of each ResultMessage (one per turn), in order."""
        return [value if isinstance(value := getattr(m, "result", None), str) else None
                for m in self.messages if type(m).__name__ == "ResultMessage"]

    @property
    def result(self) -> str | None:
        """The last turn's ``result``, or None."""
        return self.results[-1] if self.results else None


def run_sdk(prompts: Sequence[str], *, api: FakeMessagesAPI, cwd: Path | str,
            home: Path | str, answer: Answer, plugin_dirs: Iterable[Path | str] = (),
            env: Mapping[str, str] | None = None, permission_mode: str = "default",
            timeout: float = 60) -> SdkRun:
    """Send ``prompts`` in one SDK session against ``api``, each once the previous
    turn has its result; ``answer`` answers every AskUserQuestion and every other tool
    is allowed. Raises TimeoutError after ``timeout`` seconds (the SDK then stops the
    CLI)."""
    from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow, query

    run = SdkRun()
    isolated = isolated_env(api.base_url, home, extra=env)
    # The SDK starts the CLI with os.environ under options.env: blank what
    # isolated_env left out (a real key, a Bedrock switch…) so none of it comes back.
    blanked = {k: "" for k in os.environ if k not in isolated}

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        if name != "AskUserQuestion":
            return PermissionResultAllow()
        answers: dict[str, str] = {}
        for q in tool_input.get("questions") or []:
            question = Question(str(q.get("question", "")),
                                [str(o.get("label", "")) for o in q.get("options") or []])
            run.questions.append(question)
            answers[question.question] = answer(question)
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    turn_over = asyncio.Event()

    async def user_turns() -> AsyncIterator[dict[str, Any]]:
        for prompt in prompts:
            turn_over.clear()
            yield {"type": "user", "message": {"role": "user", "content": prompt}}
            await turn_over.wait()  # the input closes, and the CLI ends, after the last

    options = ClaudeAgentOptions(
        cli_path=str(find_claude()), cwd=str(cwd), env={**blanked, **isolated},
        can_use_tool=can_use_tool, permission_mode=permission_mode,  # type: ignore[arg-type]
        plugins=[{"type": "local", "path": str(p)} for p in plugin_dirs])

    async def collect() -> None:
        async for message in query(prompt=user_turns(), options=options):
            run.messages.append(message)
            if type(message).__name__ == "ResultMessage":
                turn_over.set()

    async def bounded() -> None:
        try:
            await asyncio.wait_for(collect(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"the SDK session did not finish within {timeout:g}s; "
                               f"{len(run.messages)} messages so far") from None

    asyncio.run(bounded())
    return run
