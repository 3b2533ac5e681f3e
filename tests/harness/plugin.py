"""Running the real maker plugin in the e2e tests: the repository root as --plugin-dir,
this venv's interpreter for its hooks and `maker` command, and plans set up by code."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.queries import tool_uses
from harness.scenarios import (
    find_plugin_root,
    greeting_plan,
    handoff,
    plugin_env,
    to_yaml,
)
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import set_policy
from maker.executor.state.lifecycle import start_step
from maker.planner.linter import lint_text
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker_scripted import ClaudeRun, FakeMessagesAPI
from maker_scripted.turns import hook_feedback

PLUGIN_ROOT = find_plugin_root()

Run = Callable[..., ClaudeRun]


def run_maker(run_claude: Run, prompt: str, **options: Any) -> ClaudeRun:
    """``claude -p PROMPT`` with the maker plugin, against the test's fake API."""
    return run_claude(prompt, plugin_dirs=[PLUGIN_ROOT], env=plugin_env(), **options)


def write_plan(project: Path, plan: dict[str, Any] | None = None,
               policy: str = "auto") -> PlanStore:
    """The greeting plan (or ``plan``) written under project/plans, as the hook would,
    with the approval ``policy`` a person set (``auto`` unless a test is about approval:
    most are about what comes before it)."""
    data = plan or greeting_plan()
    parsed, problems = lint_text(to_yaml(data))
    assert parsed is not None and not problems, problems
    store = PlanStore(project / "plans")
    store.write_plan(parsed, data["task"])
    if policy != "never":
        set_policy(store, policy, "person (terminal)")
    return store


def finish_step_0(store: PlanStore) -> None:
    """Step 0 of the greeting plan done through the gate (under the plan's policy)."""
    start_step(store, 0)
    deliver(store, 0, "hello.txt")


def deliver(store: PlanStore, n: int, name: str) -> None:
    """Step ``n`` (in progress) done as its protocol says, through the gate: oriented,
    ``name`` written, the handoff claiming it accepted."""
    from maker.executor.protocol.orient import record_orient

    record_orient(store, n, "none")
    (store.project / name).write_text(f"{name} by step {n}\n")
    accept_handoff(store, handoff(n, {"files": [name]}, files=[name]))
    (store.root.parent / "hello.txt").write_text("hello\n")


def step(project: Path, n: int) -> StepRecord:
    return PlanStore(project / "plans").load().get(n)


def feedback(api: FakeMessagesAPI, agent: str) -> list[str]:
    """Every 'Stop hook feedback' that ``agent`` was sent, in order, as
    ``Stop hook feedback:\n<reason>`` whichever client's wording carried it."""
    said = [hook_feedback(r.last_user_text) for r in api.requests_for(agent)]
    return [f"Stop hook feedback:\n{reason}" for reason in said if reason is not None]


def tool_names(run: ClaudeRun) -> list[str]:
    return [t.name for t in tool_uses(run)]


def branching_plan(votes: int | None = None) -> dict[str, Any]:
    """Step 0 decides (conditional): step 1 writes tests, step 2 writes docs."""
    common = {"task_type": "action_step", "fallback_tools": [], "primary_tools": ["Read"],
              "fallback_tool_instructions": "None needed.", "input_variables": [],
              "primary_tool_instructions": "Read what you need."}
    decide = {**common, "step": 0, "task_type": "conditional_step", "title": "Decide",
              "task_description": "Read the project and choose step 1 (tests) or step 2 "
                                  "(docs) as next_step.",
              "output_variable": "step_0_output",
              "output_schema": "{next_step: int, reason: string}",
              "next_step_sequence_number": -2}
    if votes is not None:
        decide["votes"] = votes
    return {
        "task": "Decide whether the project needs tests, then do that",
        "reasoning": "Step 0 decides; step 1 writes tests, step 2 writes docs; one runs.",
        "plan": [decide,
                 {**common, "step": 1, "title": "Write tests", "task_description":
                  "Write the missing tests and report them.", "output_variable":
                  "step_1_output", "output_schema": "{tests: list}",
                  "next_step_sequence_number": -1},
                 {**common, "step": 2, "title": "Write docs", "task_description":
                  "Write the missing docs and report them.", "output_variable":
                  "step_2_output", "output_schema": "{docs: list}",
                  "next_step_sequence_number": -1}],
    }


def git_trap(project: Path) -> Path:
    """A change in ``project``'s git repository, and its config naming a program (as
    ``diff.external`` and ``core.fsmonitor``) that writes the returned file when it runs:
    a read-only git command maker lets through must never create that file."""
    ran = project.parent / "ran.txt"
    trap = project.parent / "trap.sh"
    trap.write_text(f"#!/bin/sh\necho \"$*\" >> {ran}\n")
    trap.chmod(0o755)
    (project / "notes.txt").write_text("one\n")
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    (project / "notes.txt").write_text("one\ntwo\n")
    for key in ("diff.external", "core.fsmonitor"):
        subprocess.run(["git", "config", key, str(trap)], cwd=project, check=True)
    return ran
