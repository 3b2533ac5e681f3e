"""The headless run with the real store, gate, verification and
approval, and scripted fakes for the model only (``harness.engine_fakes``): the
planner, the executor sessions, the reviewer, and the ledger/budget."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.engine_fakes import FakeLedger, FakePlanner, FakeReviewer, ScriptedModel, parts, run
from harness.step_plans import branch_plan, handoff, linear, make_step, write
from maker.core.events import (
    Event,
    StepCompleted,
    StepFailed,
    StepFlagged,
    StepStarted,
    TaskCompleted,
    TaskFailed,
    TaskSubmitted,
)
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.orchestrator import (
    EXIT_APPROVAL,
    EXIT_BUDGET,
    EXIT_COMPLETE,
    EXIT_FAILED,
    Orchestrator,
    RunResult,
)
from maker.executor.acceptance.approval import approve_step
from maker.store.plan_store import PlanStore
from maker.verify.runner import recorded_evidence


def names(result: RunResult) -> list[str]:
    return [type(e).__name__ for e in result.events]


# -- the tests --------------------------------------------------------------------------


def test_a_planned_task_with_a_branch_runs_to_completion_in_order(project: Path) -> None:
    store = PlanStore(project / "plans")
    # The conditional step 1 is decided by a vote (a lead of 2, as in /maker:step): two
    # isolated samples that agree.
    decided = handoff(1, output={"next_step": 3, "reason": "tests exist"})
    model = ScriptedModel([decided, decided, handoff(3)])
    planner = FakePlanner(branch_plan())
    seen: list[Event] = []
    orch = Orchestrator(store, parts(model), planner=planner, approve="auto",
                        on_event=seen.append)
    result = run(orch, "Fix the bug")
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert names(result) == ["TaskSubmitted", "PlanCreated", "StepStarted", "StepCompleted",
                             "StepStarted", "StepCompleted", "TaskCompleted"]
    assert seen == result.events
    assert isinstance(planner.received[0], TaskSubmitted)
    assert planner.received[0].instruction == "Fix the bug"
    started = [e.step for e in result.events if isinstance(e, StepStarted)]
    assert started == [1, 3]  # the branch not taken (step 2) is skipped
    assert [p[0] for p in model.prompts] == [1, 1, 3]
    assert "# Step 1: Decide whether tests exist" in model.prompts[0][1]  # the plugin's brief
    plan = store.load()
    assert [r.status for r in plan.steps] == ["complete", "pending", "complete"]
    done = result.events[-1]
    assert isinstance(done, TaskCompleted) and done.outputs["step_3_output"] == {"result": "ok"}
    ledger = orch.parts.ledger
    assert ledger.kinds() == [("planner", None), ("vote", 1), ("vote", 1), ("vote", 1),
                              ("executor", 3)]
    assert store.read_handoff(1)["vote"]["k"] == 2


def test_a_flagged_answer_is_discarded_and_a_fresh_sample_drawn(project: Path) -> None:
    store = linear(project, 1)
    model = ScriptedModel(["- a list\n- not a mapping\n", handoff(1)])
    orch = Orchestrator(store, parts(model))
    result = run(orch)
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert names(result) == ["StepStarted", "StepFlagged", "StepCompleted", "TaskCompleted"]
    flagged = result.events[1]
    assert isinstance(flagged, StepFlagged) and "not a dict" in flagged.reason
    assert model.prompts[0] == model.prompts[1]  # a fresh sample of the same brief
    assert orch.parts.ledger.kinds() == [("flagged", 1), ("executor", 1)]


def test_answers_flagged_every_time_fail_the_step(project: Path) -> None:
    store = linear(project, 2)
    model = ScriptedModel(["not yaml: [", "- x\n", "- y\n"])
    result = run(Orchestrator(store, parts(model)))
    assert result.exit_code == EXIT_FAILED
    assert names(result) == ["StepStarted", "StepFlagged", "StepFlagged", "StepFlagged",
                             "StepFailed", "TaskFailed"]
    assert store.load().get(1).status == "failed"


def test_a_refused_handoff_goes_back_with_every_problem_and_is_corrected(
        project: Path) -> None:
    store = linear(project, 1)
    model = ScriptedModel([handoff(1, output={"wrong": "key"}), handoff(1)])
    result = run(Orchestrator(store, parts(model)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    second = model.prompts[1][1]
    assert "maker refused your previous handoff" in second
    assert "result" in second.split("maker refused your previous handoff")[1]
    assert "wrong: key" in second  # its previous answer, quoted
    assert store.load().get(1).status == "complete"


def test_a_failing_verification_is_fixed_in_the_fix_loop(project: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)

    def second_try(prompt: str) -> str:
        assert "Verification failed" in prompt and "test -f fixed.txt" in prompt
        (project / "fixed.txt").write_text("fixed\n")
        return handoff(1, files_changed=["fixed.txt"])

    model = ScriptedModel([handoff(1), second_try])
    orch = Orchestrator(store, parts(model))
    result = run(orch)
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert orch.parts.ledger.kinds() == [("executor", 1), ("fix", 1)]
    evidence = recorded_evidence(store, 1)
    assert evidence is not None and evidence.passed and evidence.sealed
    assert store.read_handoff(1)["verification"]["status"] == "passed"
    # The same session, resumed: told only what failed, not the whole brief again.
    assert model.options[1]["resume"] == "session-1"
    assert "# Step 1:" in model.prompts[0][1] and "# Step 1:" not in model.prompts[1][1]
    assert [c.session_id for c in orch.parts.ledger.calls] == ["session-1", "session-1"]


def test_a_fix_whose_session_cannot_be_resumed_goes_to_a_fresh_one(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)

    def fresh_try(prompt: str) -> str:
        assert "# Step 1:" in prompt and "Verification failed" in prompt
        assert "Your previous answer" in prompt
        (project / "fixed.txt").write_text("fixed\n")
        return handoff(1)

    model = ScriptedModel([handoff(1), fresh_try], resumable=False)
    orch = Orchestrator(store, parts(model))
    result = run(orch)
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert orch.parts.ledger.kinds() == [("executor", 1), ("fix", 1), ("fix", 1)]
    assert "No conversation found" in (orch.parts.ledger.calls[1].error or "")
    assert "resume" not in model.options[2]


def test_the_fix_loop_is_bounded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f never.txt")
    store = linear(project, 1)
    model = ScriptedModel([handoff(1)] * 3)
    orch = Orchestrator(store, parts(model))
    result = run(orch)
    assert result.exit_code == EXIT_FAILED
    assert orch.parts.ledger.kinds() == [("executor", 1), ("fix", 1), ("fix", 1)]
    failed = [e for e in result.events if isinstance(e, StepFailed)]
    assert failed and "after 2 fix attempts" in failed[0].reason
    assert store.load().get(1).status == "failed"


def test_a_budget_stop_exits_3_and_a_continued_run_finishes(project: Path) -> None:
    store = linear(project, 3)
    ledger = FakeLedger()
    model = ScriptedModel([handoff(1), handoff(2)])
    orch = Orchestrator(store, parts(model, ledger, budget=0.015))
    result = run(orch)
    assert result.exit_code == EXIT_BUDGET
    assert names(result)[-1] == "TaskFailed" and "budget" in result.message
    assert model.options[0]["max_budget_usd"] == pytest.approx(0.015)  # the remaining budget
    assert model.options[1]["max_budget_usd"] == pytest.approx(0.005)
    assert [r.status for r in store.load().steps] == ["complete", "complete", "in-progress"]

    more = ScriptedModel([handoff(3)])
    again = run(Orchestrator(store, parts(more, ledger, budget=1.0)))
    assert again.exit_code == EXIT_COMPLETE, again.message
    assert names(again) == ["StepStarted", "StepCompleted", "TaskCompleted"]
    assert [r.status for r in store.load().steps] == ["complete"] * 3
    assert ledger.kinds() == [("executor", 1), ("executor", 2), ("executor", 3)]


def test_approve_never_stops_at_the_first_step_awaiting_approval(project: Path) -> None:
    store = linear(project, 2, policy="never")
    model = ScriptedModel([handoff(1), handoff(2)])
    result = run(Orchestrator(store, parts(model), approve="never"))
    assert result.exit_code == EXIT_APPROVAL
    assert "maker step approve 1" in result.message and "/maker:step" in result.message
    assert names(result) == ["StepStarted"]
    assert store.load().get(1).status == "awaiting-approval"
    assert len(model.prompts) == 1

    approve_step(store, 1, "person (test)")
    result = run(Orchestrator(store, parts(model), approve="never"))
    assert result.exit_code == EXIT_APPROVAL and "maker step approve 2" in result.message


def test_the_reviewer_policy_asks_the_reviewer_and_applies_its_verdict(project: Path) -> None:
    store = linear(project, 1, policy="never")
    model = ScriptedModel([handoff(1), handoff(1)])
    reviewer = FakeReviewer("changes-needed", "approve")
    orch = Orchestrator(store, parts(model, reviewer=reviewer), approve="reviewer")
    result = run(orch)
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert names(result) == ["StepStarted", "StepStarted", "StepCompleted", "TaskCompleted"]
    assert "Review step 1" in reviewer.prompts[0]
    record = store.load().get(1)
    assert record.status == "complete" and "reviewer" in str(record.meta["approved_by"])
    assert orch.parts.ledger.kinds() == [("executor", 1), ("reviewer", 1), ("executor", 1),
                                         ("reviewer", 1)]


def test_a_blocked_handoff_stops_the_run(project: Path) -> None:
    store = linear(project, 2)
    model = ScriptedModel([handoff(1, status="blocked", blockers=["no database"])])
    result = run(Orchestrator(store, parts(model)))
    assert result.exit_code == EXIT_FAILED
    assert names(result) == ["StepStarted", "StepFailed", "TaskFailed"]
    assert "no database" in result.message
    failed = result.events[-1]
    assert isinstance(failed, TaskFailed)


def test_a_steps_model_picks_its_executors_model_over_the_runs(project: Path) -> None:
    from dataclasses import replace

    store = write(project, [replace(make_step(1, 2), model="haiku"), make_step(2, -1)])
    model = ScriptedModel([handoff(1), handoff(2)])
    engine = parts(model)
    engine.model = "opus"  # the run's --model
    result = run(Orchestrator(store, engine))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert [o["model"] for o in model.options] == ["haiku", "opus"]
    assert [c.model for c in engine.ledger.calls] == ["haiku", "opus"]


def test_a_run_cancelled_mid_call_leaves_the_step_resumable_and_the_call_in_the_ledger(
        project: Path) -> None:
    store = linear(project, 2)
    entered = asyncio.Event()

    class Stuck(ScriptedModel):
        def factory(self, **options: Any) -> Any:
            class Session:
                async def run(self, step: PlanStep, context: str,
                              config: TaskConfig) -> AgentResult:
                    entered.set()
                    await asyncio.Event().wait()
                    raise AssertionError("unreachable")
            return Session()

    ledger = FakeLedger()
    orch = Orchestrator(store, parts(Stuck([]), ledger))

    async def stop_mid_call() -> None:
        task = asyncio.ensure_future(orch.run())
        await entered.wait()
        task.cancel()  # what Ctrl-C does to `maker run`
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stop_mid_call())
    assert store.load().get(1).status == "in-progress"
    (call,) = ledger.calls
    assert (call.kind, call.step) == ("executor", 1) and "interrupted" in (call.error or "")

    again = run(Orchestrator(store, parts(ScriptedModel([handoff(1), handoff(2)]))))
    assert again.exit_code == EXIT_COMPLETE, again.message
    assert [r.status for r in store.load().steps] == ["complete", "complete"]


def test_a_stop_the_sdk_absorbed_still_stops_the_run(project: Path) -> None:
    """Ctrl-C reaches the SDK's CLI too: the session ends in error and the SDK's task
    group may swallow the cancellation. The stop flag still ends the run there."""
    store = linear(project, 2)
    ledger = FakeLedger()
    engine = parts(ScriptedModel([]), ledger)

    class Interrupted(ScriptedModel):
        def factory(self, **options: Any) -> Any:
            class Session:
                async def run(self, step: PlanStep, context: str,
                              config: TaskConfig) -> AgentResult:
                    engine.stopping = True  # the signal handler ran meanwhile
                    return AgentResult(None, "", cost_usd=0.02,
                                       error="the agent's session ended in error")
            return Session()

    engine.runner_factory = Interrupted([]).factory
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(Orchestrator(store, engine).run())
    assert store.load().get(1).status == "in-progress"
    (call,) = ledger.calls  # one call: no resample, no refusal loop after the stop
    assert "interrupted" in (call.error or "") and call.cost_usd == 0.02


def test_continuing_without_a_plan_is_a_usage_error(project: Path) -> None:
    result = run(Orchestrator(PlanStore(project / "plans"), parts(ScriptedModel([]))))
    assert result.exit_code == 2 and "no plan" in result.message


def test_the_orchestrator_is_a_module(project: Path) -> None:
    store = PlanStore(project / "plans")
    decided = handoff(1, output={"next_step": 2, "reason": "none"})
    model = ScriptedModel([decided, decided, handoff(2)])  # (the branch: a vote of 2)
    orch = Orchestrator(store, parts(model), planner=FakePlanner(branch_plan()),
                        approve="auto")
    submitted = TaskSubmitted(timestamp=0.0, instruction="Fix the bug",
                              config=TaskConfig(instruction="Fix the bug"))

    async def collect() -> list[Event]:
        return [e async for e in orch.process(submitted)]

    events = asyncio.run(collect())
    assert events[0] is submitted
    assert [type(e).__name__ for e in events][-1] == "TaskCompleted"
    assert [e.step for e in events if isinstance(e, StepCompleted)] == [1, 2]


def _rendered_now(store: PlanStore) -> str:
    """PLAN.md as a fresh reader renders it from the step files."""
    from maker.executor.state.lifecycle import refresh_overview

    fresh = PlanStore(store.root)
    refresh_overview(fresh, fresh.load(), force=True)
    return fresh.overview_path.read_text()


@pytest.mark.parametrize("ends", ["complete", "budget"])
def test_plan_md_is_brought_up_to_date_when_a_run_ends(project: Path, ends: str) -> None:
    store = linear(project, 3)
    model = ScriptedModel([handoff(1), handoff(2), handoff(3)])
    orch = Orchestrator(store, parts(model, budget=0.015 if ends == "budget" else None))
    result = run(orch)
    assert result.exit_code == (EXIT_COMPLETE if ends == "complete" else EXIT_BUDGET)
    shown = store.overview_path.read_text()  # as the run left it
    assert ("| in-progress |" in shown) == (ends == "budget")
    assert shown == _rendered_now(store)


def test_plan_md_is_rewritten_at_most_once_a_second_during_a_run(project: Path) -> None:
    from maker.executor.state import lifecycle

    store = PlanStore(linear(project, 3).root)
    store.overview_every = 3600.0
    lifecycle.start_step(store, 1)  # the first change: written
    assert "| in-progress |" in store.overview_path.read_text()
    lifecycle.reset_step(store, 1)  # held back
    assert "| in-progress |" in store.overview_path.read_text() and store.overview_stale
    lifecycle.flush_overview(store)
    assert "| in-progress |" not in store.overview_path.read_text()
    assert store.overview_path.read_text() == _rendered_now(store)


class _PlannerThatFails:
    max_budget_usd = None
    calls: list[Any] = []

    async def process(self, event: Event) -> Any:
        from maker.errors import AgentSDKError

        raise AgentSDKError("the Claude Code CLI was not found")
        yield event  # (an async generator, as a planner is)


def test_an_sdk_failure_says_what_is_kept_as_it_is(project: Path) -> None:
    """No plan written: nothing is "kept" (the issue: a planner that could not start was
    said to keep a step in progress); a step in progress: that step."""
    store = PlanStore(project / "plans")
    orch = Orchestrator(store, parts(ScriptedModel([])), planner=_PlannerThatFails(),
                        approve="auto")
    result = run(orch, "add a greeting")
    assert result.exit_code == EXIT_FAILED
    assert "No plan was written; `maker run 'add a greeting'` starts again" in result.message
    assert "in progress" not in result.message

    from maker.engine.stops import what_is_kept
    from maker.executor.state.lifecycle import start_step

    written = write(project, [make_step(1, -1)])
    assert what_is_kept(written, None) == ("What is done is kept; `maker run` continues "
                                           "the plan")
    start_step(written, 1)
    assert what_is_kept(written, None) == "Step 1 stays in progress; `maker run` continues it"
