"""Where maker cannot run a project's tests with pytest, it cannot vote on code: `maker run`'s
own planning refuses a plan whose writing step has `votes: K` there, with the reason and
the fix the plugin's planner hook gives (one function: ``maker.verify.pytest_runs.
code_vote_problems``), and `maker run --vote K` says there that it cannot vote on code
steps and runs them once, rather than failing them later. The planner model and the
executor sessions are scripted; the planner module, the hook, the engine, the store and
the CLI are real."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness.engine_fakes import FakeLedger, FakePlanner, ScriptedModel, oriented, parts, run
from harness.session_hooks import PLANNER, decision, fire, said
from harness.step_plans import handoff, make_step, step_spec, write
from maker.cli import run_cmd
from maker.cli.main import cli
from maker.core.models import Plan
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_FAILED, EXIT_STOPPED
from maker.engine.vote_step import code_lead, unvoted_code
from maker.planner.planner import PlannerModule
from maker.store.plan_store import PlanStore
from maker.tools.registry import ToolRegistry
from maker_scripted.scenarios import greeting_plan

NOT_PYTEST = "npm test"
REFUSED = "- step 0: votes: a vote on a code step runs its samples' tests against one"


def _plan_text(votes: int | None) -> str:
    """The greeting plan (step 0 writes hello.txt), its code step with ``votes``."""
    plan = greeting_plan()
    if votes is not None:
        plan["plan"][0]["votes"] = votes
    return yaml.safe_dump(plan, sort_keys=False)


class _Sdk:
    """The planner model: answers in order, and what it was told."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    async def __call__(self, prompt: str, **_: Any) -> str:
        self.prompts.append(prompt)
        return self.answers.pop(0)


def _planning(project: Path, *answers: str) -> tuple[Any, _Sdk, PlanStore]:
    """``maker run "Greet"``'s planning, with the real planner module; the run stops
    before any step (as a person's stop does), so only the plan is at stake."""
    planner = PlannerModule(ToolRegistry.default())
    planner._call_sdk = sdk = _Sdk(*answers)  # type: ignore[method-assign]
    store = PlanStore(project / "plans")
    engine = parts(ScriptedModel([]))
    engine.keep_going = lambda: False
    return run(Orchestrator(store, engine, planner=planner, approve="auto"), "Greet"), sdk, \
        store


def _problem_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(REFUSED))


def test_maker_runs_planner_refuses_a_code_vote_as_the_plugins_hook_does(
        plugin_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same plan, in a project whose test command is not pytest's: the plugin's hook
    and `maker run`'s planner refuse it with the same problem (reason and fix), which goes
    back to the model; its answer without `votes` is the plan written."""
    monkeypatch.setenv("TEST_CMD", NOT_PYTEST)
    out = fire("pre-tool-use", agent_id="planner-1", agent_type=PLANNER,
               tool_name="SubagentHandback", tool_input={"message": _plan_text(2)})
    assert decision(out) == "deny"
    plugins = _problem_line(said(out))
    assert "(fix: remove `votes` from the step)" in plugins

    result, sdk, store = _planning(plugin_project, _plan_text(2), _plan_text(None))
    assert result.exit_code == EXIT_STOPPED, result.message  # (planned; no step started)
    assert len(sdk.prompts) == 2
    assert "maker rejected the plan (attempt 1 of 3)" in sdk.prompts[1]
    assert _problem_line(sdk.prompts[1]) == plugins
    assert [r.spec.votes for r in store.load().steps] == [None, None]


def test_a_plan_that_keeps_its_code_vote_is_refused_and_nothing_is_written(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", NOT_PYTEST)
    result, sdk, store = _planning(project, *[_plan_text(3)] * 3)
    assert result.exit_code == EXIT_FAILED
    assert result.message.startswith("the plan was refused: ")
    assert "remove `votes` from the step" in result.message
    assert len(sdk.prompts) == 3 and not store.exists()


def test_where_the_tests_are_pytests_the_code_vote_is_planned(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q")
    result, sdk, store = _planning(project, _plan_text(2))
    assert result.exit_code == EXIT_STOPPED, result.message
    assert len(sdk.prompts) == 1 and store.load().get(0).spec.votes == 2


def test_the_engine_refuses_such_a_plan_from_any_planner(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine checks the plan it is given before it writes it, whatever planned it."""
    monkeypatch.setenv("TEST_CMD", NOT_PYTEST)
    writer = step_spec(1, -1, primary_tools=["Read", "Write"], votes=2)
    store = PlanStore(project / "plans")
    planned = Plan(reasoning="Because.", steps=[writer], task="Greet")
    result = run(Orchestrator(store, parts(ScriptedModel([])), planner=FakePlanner(planned),
                              approve="auto"), "Greet")
    assert result.exit_code == EXIT_FAILED
    assert "step 1: votes: a vote on a code step" in result.message
    assert not store.exists()


# -- maker run --vote K ---------------------------------------------------------------


def _vote_run(project: Path, monkeypatch: pytest.MonkeyPatch, model: ScriptedModel
              ) -> Any:
    monkeypatch.setattr(run_cmd, "build_parts",
                        lambda store, budget, name: parts(model, FakeLedger()))
    return CliRunner().invoke(cli, ["run", "--vote", "3", "--events", "-"])


def test_vote_k_says_it_cannot_vote_on_code_steps_and_runs_them_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project with no pytest (its tests off): step 1 only reads and votes (3 agreeing
    samples); step 2 writes and runs once, and the run says why and what it did."""
    store = write(project, [make_step(1, 2),
                            step_spec(2, -1, primary_tools=["Read", "Write"])])
    (project / "hello.txt").write_text("hello\n")
    done = handoff(2, files_changed=["hello.txt"])
    model = ScriptedModel([handoff(1)] * 3 + [oriented(store, 2, done)])
    result = _vote_run(project, monkeypatch, model)
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["event"] for line in result.stdout.splitlines()] == [
        "StepStarted", "StepCompleted", "StepStarted", "StepCompleted", "TaskCompleted"]
    assert [n for n, _ in model.prompts] == [1, 1, 1, 2]  # (step 2: one session)
    assert ("--vote 3 cannot vote on code steps in this project: maker compares a code "
            "step's samples by running their tests against one another's code, with pytest "
            "only, and this project's test command (maker verify's) is not pytest's. So "
            "step 2 runs once, as without --vote") in " ".join(result.stderr.split())


@pytest.mark.parametrize(("test_cmd", "votes", "lead"), [
    (NOT_PYTEST, None, 1), (f"{sys.executable} -m pytest -q", None, 3),
    (NOT_PYTEST, 2, 2)])  # (a step's own votes stand: the engine fails it with the fix)
def test_which_code_steps_vote_under_vote_k(project: Path, monkeypatch: pytest.MonkeyPatch,
                                            test_cmd: str, votes: int | None,
                                            lead: int) -> None:
    monkeypatch.setenv("TEST_CMD", test_cmd)
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write"], votes=votes)])
    spec = store.load().get(1).spec
    assert code_lead(spec, 3, store.project, os.environ) == lead
    said = unvoted_code(store.load(), 3, store.project, os.environ)
    assert ("cannot vote on code steps" in said) == (lead == 1)
