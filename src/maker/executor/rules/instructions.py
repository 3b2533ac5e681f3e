"""What maker tells the main agent to do next, one wording for each instruction, so that
every prompt, verdict and status line says it the same way."""

from __future__ import annotations

__all__ = ["EXECUTOR_AGENT", "decide_hint", "relaunch_instruction"]

EXECUTOR_AGENT = "maker:step-executor"


def relaunch_instruction(n: int | str) -> str:
    """The one way every prompt and message tells the main agent to run step ``n``'s
    executor (again). In the foreground where the client lets it (``claude -p``, the
    SDK); an interactive session drops the flag and runs it in the background."""
    return (f"launch the {EXECUTOR_AGENT} subagent with the Agent tool, "
            f"run_in_background: false, and the prompt \"Execute maker step {n}.\"")


def decide_hint(n: int) -> str:
    """How a person approves or rejects step ``n``: the one wording every message uses."""
    return (f"the user types `/maker:approve {n}`, or `/maker:reject {n} <what to change>`, "
            f"in Claude Code (or runs `maker step approve {n}` / `maker step reject {n}` in "
            "a terminal outside Claude Code)")
