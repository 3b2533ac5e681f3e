"""A person's tunables in ``plans/settings.yaml``, each applied by both
front ends and proven at its edge (N allowed, N + 1 refused):

- ``max_fix_attempts``: ``maker run``'s fix loop, and in the plugin ``maker verify --step
  N`` (which counts the failing runs of the step's run, says STOP past the bound) and the
  gate (which then refuses a ``complete`` handoff);
- ``gate_attempts``: the handoffs the gate refuses before the step fails, in the hooks and
  in the engine;
- ``session_timeout`` (and ``maker run --session-timeout``): a hung SDK session is
  stopped, recorded in the ledger, and the step stays resumable;
- a broken settings file is a clear error in every command and hook that reads it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.engine_fakes import FakeCall, FakeLedger, ScriptedModel, parts, run
from harness.hooks import fire, subagent_input
from harness.step_plans import handoff, linear
from maker.cli.main import cli
from maker.core.events import StepFailed, StepFlagged
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.core.sdk import SessionTimedOut, within
from maker.engine.orchestrator import Orchestrator
from maker.engine.parts import EngineParts
from maker.engine.stops import EXIT_COMPLETE, EXIT_FAILED
from maker.errors import HandoffRejectedError, PlanFileError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.brief import build_brief
from maker.executor.rules.step_rules import GATE_ATTEMPTS, MAX_FIX_ATTEMPTS, MAX_REVIEW_ATTEMPTS
from maker.executor.state.lifecycle import reset_step, start_step
from maker.executor.verdicts.verdict import executor_verdict
from maker.store.plan_store import PlanStore
from maker.store.settings import Settings
from maker.verify.fixes import fix_budget_spent

EXECUTOR = "maker:step-executor"


def settings_file(store: PlanStore, text: str) -> None:
    (store.root / "settings.yaml").write_text(text)


def test_the_settings_defaults_are_the_rules_defaults() -> None:
    s = Settings()
    assert (s.max_fix_attempts, s.max_review_attempts, s.gate_attempts) == \
        (MAX_FIX_ATTEMPTS, MAX_REVIEW_ATTEMPTS, GATE_ATTEMPTS)


@pytest.mark.parametrize("bound", [0, 1, 2, 5])
def test_the_fix_rule_at_its_edge(bound: int) -> None:
    assert not fix_budget_spent(bound, bound)  # N failing runs: each gets its fix
    assert fix_budget_spent(bound + 1, bound)  # N + 1: the budget is spent


# -- max_fix_attempts in the plugin: maker verify --step N, then the gate ----------------


def verify(store: PlanStore, step: int = 1) -> Any:
    return CliRunner().invoke(cli, ["verify", "--step", str(step), "--plans-dir",
                                    str(store.root)])


@pytest.mark.parametrize("bound", [0, 1, 2])
def test_maker_verify_counts_the_failing_runs_and_says_stop_past_the_bound(
        project: Path, monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)
    settings_file(store, f"max_fix_attempts: {bound}\n")
    start_step(store, 1)
    for n in range(1, bound + 1):  # N failing runs: each is told to fix and run again
        out = verify(store)
        assert out.exit_code == 1 and "STOP" not in out.output, out.output
        assert f"this is failing run {n} in this run of step 1" in out.output
    out = verify(store)  # failing run N + 1: the budget is spent
    assert out.exit_code == 1
    assert f"STOP: verification failed {bound + 1} times in this run of step 1, and " \
           f"max_fix_attempts is {bound} (plans/settings.yaml)" in out.output
    assert "hand off now with `status: failed`" in out.output
    # A pass now changes nothing: the step's run is over.
    (project / "fixed.txt").write_text("fixed\n")
    out = verify(store)
    assert out.exit_code == 1 and "STOP" in out.output
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(store, handoff(1))
    assert "the fix budget is spent" in str(refused.value)
    assert "hand off with `status: failed`" in str(refused.value)
    assert store.load_step(1).status == "in-progress"
    result = accept_handoff(store, handoff(1, status="failed", blockers=["tests fail"]))
    assert result.status == "failed"


@pytest.mark.parametrize("bound", [0, 2])
def test_n_failing_runs_then_a_pass_is_accepted(project: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                bound: int) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)
    settings_file(store, f"max_fix_attempts: {bound}\n")
    start_step(store, 1)
    for _ in range(bound):
        assert verify(store).exit_code == 1
    (project / "fixed.txt").write_text("fixed\n")
    out = verify(store)
    assert out.exit_code == 0 and "STOP" not in out.output, out.output
    assert accept_handoff(store, handoff(1)).status in ("complete", "awaiting-approval")


def test_a_new_run_of_the_step_counts_afresh(project: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)
    settings_file(store, "max_fix_attempts: 0\n")
    start_step(store, 1)
    assert "STOP" in verify(store).output
    accept_handoff(store, handoff(1, status="failed", blockers=["tests fail"]))
    reset_step(store, 1)
    start_step(store, 1)
    out = verify(store)
    assert "STOP: verification failed 1 times" in out.output  # 1, not 2: a new count
    data = json.loads(CliRunner().invoke(cli, ["verify", "--step", "1", "--json",
                                               "--plans-dir", str(store.root)]).stdout)
    assert data["failed_runs"] == 2 and data["fix_budget"]["spent"] is True


def test_the_brief_states_the_fix_budget(project: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "make test")
    store = linear(project, 1)
    settings_file(store, "max_fix_attempts: 4\n")
    brief = build_brief(store, None, 1)
    assert "Your fix budget (max_fix_attempts: 4)" in brief
    assert "failing run 5 spends the budget" in brief


# -- max_fix_attempts in maker run ------------------------------------------------------


def fixed_on(project: Path, attempt: int) -> list[Any]:
    """Answers that are each complete; the one at ``attempt`` (1-based) fixes the tests."""

    def fixes(prompt: str) -> str:
        (project / "fixed.txt").write_text("fixed\n")
        return handoff(1)

    return [handoff(1) if i + 1 != attempt else fixes for i in range(attempt)]


@pytest.mark.parametrize("bound", [0, 1, 3])
def test_maker_run_fixes_as_often_as_the_settings_say(
        project: Path, monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    monkeypatch.setenv("TEST_CMD", "test -f fixed.txt")
    store = linear(project, 1)
    settings_file(store, f"max_fix_attempts: {bound}\n")
    # N fixes allowed: fixed by the last of them.
    model = ScriptedModel(fixed_on(project, bound + 1))
    result = run(Orchestrator(store, parts(model)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert len(model.prompts) == bound + 1

    (project / "fixed.txt").unlink()
    store = linear(project / "again", 1)
    settings_file(store, f"max_fix_attempts: {bound}\n")
    monkeypatch.chdir(project / "again")
    model = ScriptedModel([handoff(1)] * (bound + 1))  # never fixed: N + 1 failures
    orch = Orchestrator(store, parts(model))
    result = run(orch)
    assert result.exit_code == EXIT_FAILED
    assert [k for k, _ in orch.parts.ledger.kinds()] == ["executor"] + ["fix"] * bound
    failed = [e for e in result.events if isinstance(e, StepFailed)]
    assert failed and f"after {bound} fix attempts (max_fix_attempts)" in failed[0].reason


# -- gate_attempts: the hooks and the engine ----------------------------------------------


@pytest.mark.parametrize("bound", [1, 2, 7])
def test_gate_attempts_bounds_both_front_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              verification_off: None, bound: int) -> None:
    plugin, engine = tmp_path / "plugin", tmp_path / "engine"
    for where in (plugin, engine):
        where.mkdir()
    monkeypatch.chdir(plugin)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(plugin))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    wrong = handoff(2)  # for the wrong step: the gate refuses it

    store = linear(plugin, 1)
    settings_file(store, f"gate_attempts: {bound}\n")
    start_step(store, 1, session_id="sess-1")
    for n in range(1, bound):  # N - 1 refusals are sent back ...
        out = fire("subagent-stop", subagent_input(plugin, EXECUTOR, wrong))
        assert out is not None and out.get("decision") == "block", out
        assert f"(attempt {n} of {bound})" in out["reason"]
    out = fire("subagent-stop", subagent_input(plugin, EXECUTOR, wrong))
    assert out is not None and "decision" not in out  # ... the Nth fails the step
    assert f"rejected {bound} times" in out["systemMessage"]
    assert store.load_step(1).status == "failed"

    engine_store = linear(engine, 1)
    settings_file(engine_store, f"gate_attempts: {bound}\n")
    model = ScriptedModel([wrong] * bound)
    result = run(Orchestrator(engine_store, parts(model), approve="auto"))
    assert result.exit_code == EXIT_FAILED
    assert f"the gate refused {bound} handoffs" in result.message
    assert len(model.prompts) == bound


# -- session_timeout ------------------------------------------------------------------


def test_within_lets_a_session_under_the_limit_finish_and_stops_one_over_it() -> None:
    async def takes(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "answer"

    assert asyncio.run(within(0.5, takes(0.01))) == "answer"
    assert asyncio.run(within(None, takes(0.01))) == "answer"
    assert asyncio.run(within(0, takes(0.01))) == "answer"  # 0: no limit
    with pytest.raises(SessionTimedOut):
        asyncio.run(within(0.05, takes(5)))


def test_within_counts_a_session_that_swallowed_the_cancellation() -> None:
    async def stubborn() -> str:  # as an SDK task group that absorbs it and ends "in error"
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            return "ended in error"
        return "answer"

    with pytest.raises(SessionTimedOut):
        asyncio.run(within(0.05, stubborn()))


def test_within_lets_another_cancellation_through() -> None:
    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().call_later(0.05, task.cancel)  # Ctrl-C's handler
        await within(5, asyncio.sleep(5))

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


class Hangs:
    """An executor session that hangs (``seconds``), then answers; what it was asked."""

    def __init__(self, seconds: float, answer: str) -> None:
        self.seconds, self.answer = seconds, answer
        self.cancelled = 0

    def factory(self, **options: Any) -> Hangs:
        return self

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return AgentResult({"step": step.step}, self.answer, cost_usd=0.01, duration_ms=5,
                           session_id="s")


def hang_parts(session: Hangs, ledger: FakeLedger) -> EngineParts:
    return EngineParts(runner_factory=session.factory, ledger=ledger, call_type=FakeCall)


@pytest.mark.parametrize("where", ["file", "option"])
def test_a_session_past_session_timeout_is_cut_recorded_and_drawn_again_then_fails(
        project: Path, where: str) -> None:
    store = linear(project, 1)
    settings_file(store, "session_timeout: 0.2\n" if where == "file"
                  else "session_timeout: 600\n")
    session, ledger = Hangs(30, handoff(1)), FakeLedger()
    p = hang_parts(session, ledger)
    if where == "option":  # maker run --session-timeout: this run's, over the file's
        p.session_timeout = 0.2
    result = run(Orchestrator(store, p))
    assert result.exit_code == EXIT_FAILED
    past = "ran past session_timeout (0.2 s: plans/settings.yaml, or --session-timeout)"
    assert "step 1 is failed: 3 sessions in a row were red-flagged or cut at their bound" \
        in result.message and past in result.message, result.message
    flagged = [e for e in result.events if isinstance(e, StepFlagged)]
    assert len(flagged) == 3 and all(past in e.reason for e in flagged)
    assert session.cancelled == 3  # each session was cancelled, none left running
    assert [c.kind for c in ledger.calls] == ["executor"] * 3
    assert all("session_timeout" in (c.error or "") and 200 <= c.duration_ms < 5000
               for c in ledger.calls)
    record = store.load_step(1)
    assert record.status == "failed" and past in record.meta["reasons"][0]


class HangsOnce(Hangs):
    """A session that hangs the first time it is drawn, and answers after."""

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        if self.cancelled:
            return AgentResult({"step": step.step}, self.answer, cost_usd=0.01,
                               duration_ms=5, session_id="s")
        return await super().run(step, context, config)


def test_a_cut_session_is_drawn_again_and_the_run_goes_on(project: Path) -> None:
    store = linear(project, 1)
    settings_file(store, "session_timeout: 0.2\n")
    session, ledger = HangsOnce(30, handoff(1)), FakeLedger()
    result = run(Orchestrator(store, hang_parts(session, ledger)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert store.load_step(1).status == "complete"
    (flag,) = [e for e in result.events if isinstance(e, StepFlagged)]
    assert "ran past session_timeout" in flag.reason
    assert [c.kind for c in ledger.calls][:2] == ["executor", "executor"]
    assert "session_timeout" in (ledger.calls[0].error or "") and not ledger.calls[1].error


def test_session_timeout_0_is_no_limit(project: Path) -> None:
    store = linear(project, 1)
    settings_file(store, "session_timeout: 0\n")
    result = run(Orchestrator(store, hang_parts(Hangs(0.3, handoff(1)), FakeLedger())))
    assert result.exit_code == EXIT_COMPLETE, result.message


@pytest.mark.parametrize("value,ok", [("0", True), ("90", True), ("604800", True),
                                      ("-1", False), ("604801", False), ("soon", False)])
def test_the_session_timeout_option_is_checked(project: Path, value: str, ok: bool) -> None:
    out = CliRunner().invoke(cli, ["run", "--session-timeout", value, "--plans-dir",
                                   str(project / "plans")])
    if ok:  # (then: no plan to continue)
        assert "--session-timeout" not in out.output and "no plan" in out.output
    else:
        assert out.exit_code == 2 and "--session-timeout" in out.output


# -- a broken settings file -------------------------------------------------------------

BROKEN = "max_fix_attempts: lots\n"


def said_broken(text: str) -> bool:
    return "settings.yaml" in text and "max_fix_attempts" in text and "whole number" in text


def test_a_broken_settings_file_is_a_clear_error_in_each_command(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "true")
    store = linear(project, 1)
    start_step(store, 1)
    settings_file(store, BROKEN)
    # (`maker run TASK`: said before the planner is paid for)
    for args in (["verify", "--step", "1"], ["run"], ["run", "a new task"], ["context", "1"]):
        out = CliRunner().invoke(cli, [*args, "--plans-dir", str(store.root)])
        assert out.exit_code != 0 and said_broken(out.output), (args, out.output)
        assert "Traceback" not in out.output
    with pytest.raises(PlanFileError):
        build_brief(store, None, 1)


def test_a_broken_settings_file_in_the_gate_hook_is_said_and_the_answer_kept(
        plugin_project: Path) -> None:
    store = linear(plugin_project, 1)
    start_step(store, 1, session_id="sess-1")
    settings_file(store, BROKEN)
    out = fire("subagent-stop", subagent_input(plugin_project, EXECUTOR, handoff(1)))
    assert out is not None and "decision" not in out  # no block: the executor cannot fix it
    assert said_broken(out["systemMessage"]) and "was not checked" in out["systemMessage"]
    kept = list((store.state_dir / "refused").iterdir())
    assert len(kept) == 1 and "step: 1" in kept[0].read_text()
    assert store.load_step(1).status == "in-progress"
    verdict = executor_verdict(store, {"outcome": "unchecked", "step": 1,
                                       "error": "plans/settings.yaml: broken"})
    assert "Do not launch it again" in verdict and verdict.endswith("STEP_BLOCKED.")
