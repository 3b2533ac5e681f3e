"""The step executor's tool list and guard, for both of maker's hosts (the first two
checks of ``maker.executor.protocol.limits.executor_limits``, which both front ends call).

``executor_decision``: the step's own tool list (``maker.tools.guards.permissions``), then the
guard (``maker.tools.guards.guard``: nothing writes into ``plans/`` or maker's data, no Bash
that moves the plan's state); so a call refused in Claude Code is refused by ``maker
run`` with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from maker.tools.guards import guard
from maker.tools.guards.permissions import permits

__all__ = ["StepTools", "executor_decision", "outside_tools"]


class StepTools(Protocol):
    """What the rule reads of a step: its number and its tools (a ``PlanStep``)."""

    @property
    def step(self) -> int: ...

    @property
    def tools(self) -> list[str]: ...

    @property
    def writes(self) -> list[str] | None: ...


def executor_decision(step: StepTools, tool: str, tool_input: Mapping[str, Any], *,
                      cwd: Path, plans_root: Path,
                      data_dirs: tuple[Path, ...] | None = None,
                      home: Path | None = None, workspace: Path | None = None,
                      boxed: bool = False) -> str | None:
    """Why ``step``'s executor may not call ``tool`` with ``tool_input``, or None when it
    may. The reason is written for the model: what was refused and what to do instead.

    ``cwd`` is the directory the call runs in, ``plans_root`` the plan's ``plans/``;
    ``data_dirs``, ``home``, ``workspace`` and ``boxed`` as in
    ``maker.tools.guards.guard.executor_refusal``.
    """
    allowed = step.tools
    if not permits(allowed, tool, tool_input):
        return outside_tools(step.step, allowed, tool)
    # Through the module, so a test that replaces the guard replaces it here too.
    return guard.executor_refusal(tool, tool_input, cwd=cwd, plans_root=plans_root,
                                  data_dirs=data_dirs, home=home, workspace=workspace,
                                  step=step.step, writes=step.writes, boxed=boxed)


def outside_tools(number: int, allowed: list[str], tool: str) -> str:
    """The refusal of a tool the step does not list."""
    return (f"maker: step {number} may use only {', '.join(allowed)} (its primary and "
            f"fallback tools); `{tool}` is not among them. Do the step with those tools, or "
            f"report the gap in your handoff (status: blocked, with the reason in blockers).")
