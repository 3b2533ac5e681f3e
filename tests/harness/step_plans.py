"""The tests' builders of plan data: one step as YAML holds it (``step_data``) or parsed
(``step_spec``, ``make_step``), and plans on disk for the step-execution tests (schedule,
lifecycle, gate, CLI, the engine). A test file that needs other defaults passes them as changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from maker.core.models import Plan, PlanStep
from maker.executor.acceptance.approval import set_policy
from maker.store.approval_seal import seal_approval
from maker.store.plan_store import PlanStore

COND_SCHEMA = "{next_step: int, reason: string}"


def step_data(n: int, nxt: int | None = None, **changes: Any) -> dict[str, Any]:
    """A sound action step ``n`` as plan YAML holds it, leading to ``nxt`` (default
    ``n + 1``; -1 ends the plan); ``changes`` replace or add fields."""
    data: dict[str, Any] = {
        "step": n, "task_type": "action_step", "title": f"Step number {n}",
        "task_description": f"Do the work of step {n}.", "primary_tools": ["Read"],
        "fallback_tools": [], "primary_tool_instructions": "",
        "fallback_tool_instructions": "", "input_variables": [],
        "output_variable": f"step_{n}_output", "output_schema": "{result: string}",
        "next_step_sequence_number": n + 1 if nxt is None else nxt,
    }
    data.update(changes)
    return data


def step_spec(n: int, nxt: int | None = None, **changes: Any) -> PlanStep:
    """``step_data`` as a ``PlanStep``."""
    return PlanStep(**step_data(n, nxt, **changes))


def tool_step(n: int, primary: list[str], fallback: list[str] | None = None) -> PlanStep:
    """Step ``n``, "Edit", the plan's last, with these tool lists (the tests of what a
    step's tools permit)."""
    return step_spec(n, -1, title="Edit", task_description="Edit.", primary_tools=primary,
                     fallback_tools=fallback or [], output_schema="{}")


# A step whose executor may write (its tools: Read, Write, Edit).
WRITER = step_spec(1, -1, primary_tools=["Read", "Write", "Edit"])


def make_step(n: int, nxt: int, *, conditional: bool = False, inputs: list[str] | None = None,
              schema: Any = "{result: string}", depends_on: list[int] | None = None,
              title: str | None = None, votes: int | None = None) -> PlanStep:
    """A step of the plans below: ``conditional`` decides next at run time."""
    return step_spec(
        n, nxt, task_type="conditional_step" if conditional else "action_step",
        title=title or f"Step number {n}", input_variables=list(inputs or []),
        output_schema=COND_SCHEMA if conditional and schema == "{result: string}" else schema,
        depends_on=depends_on, votes=votes)


def write(root: Path, steps: list[PlanStep], policy: str = "auto") -> PlanStore:
    """The plan stored under ``root/plans``, with the approval ``policy`` a person set
    (``auto`` unless a test is about approval: most tests are about what comes after)."""
    store = PlanStore(root / "plans")
    store.write_plan(Plan(reasoning="Because.", steps=steps, task="Build the thing"))
    if policy != "never":
        set_policy(store, policy, "test")
    return store


def linear(root: Path, n: int = 3, policy: str = "auto") -> PlanStore:
    """Steps 1..n, each leading to the next; step k reads step k-1's output."""
    return write(root, [make_step(k, k + 1 if k < n else -1,
                                  inputs=[f"step_{k - 1}_output.result"] if k > 1 else None)
                        for k in range(1, n + 1)], policy)


def branching(root: Path, join_reads: list[str] | None = None) -> PlanStore:
    """1 → 2 (conditional: 3 or 4); 3 → 5; 4 → 5; 5 ends. Step 4 reads step 1."""
    return write(root, [
        make_step(1, 2),
        make_step(2, -2, conditional=True),
        make_step(3, 5, title="Write the missing tests"),
        make_step(4, 5, inputs=["step_1_output.result"], title="Refactor"),
        make_step(5, -1, inputs=join_reads, title="Ship"),
    ])


def branch_plan() -> Plan:
    """1 (conditional: 2 or 3); 2 ends; 3 ends."""
    return Plan(reasoning="Because.", task="Fix the bug", steps=[
        make_step(1, -2, conditional=True, title="Decide whether tests exist"),
        make_step(2, -1, title="Write the missing tests"),
        make_step(3, -1, title="Fix the bug"),
    ])


def complete(store: PlanStore, n: int, output: dict[str, Any] | None = None,
             status: str = "complete", **fields: Any) -> None:
    """Mark a step done directly in the files, as an accepted (and, for a complete step,
    approved) handoff would."""
    plan = store.load()
    record = plan.get(n)
    record.status = status
    store.write_handoff(n, {"step": n, "status": status,
                            "output": output if output is not None else {"result": "ok"},
                            **fields}, "body")
    if status == "complete":
        record.meta.update(approved_by="test", approved_at="2026-01-01T00:00:00Z")
        seal_approval(record, plan.created_at)
    store.save_step(record)


def handoff(step: int, status: str = "complete", output: Any = None, **fields: Any) -> str:
    """A handoff's YAML text, as a step executor would answer."""
    data: dict[str, Any] = {"step": step, "status": status,
                            "output": {"result": "ok"} if output is None else output,
                            "summary": f"Did step {step}.", "sweep": SWEPT}
    data.update(fields)
    if data["sweep"] is None:  # (`sweep=None`: a handoff that never swept)
        del data["sweep"]
    return yaml.safe_dump(data, sort_keys=False)


SWEPT = {"considered": ["an empty input"], "found": []}
"""The sweep a handoff records by default: one case considered, nothing found."""
