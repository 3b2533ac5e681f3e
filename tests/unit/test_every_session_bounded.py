"""Every agent under a wall-clock bound in maker's engine: the executor (as before,
``test_tunables.py``), the reviewer and the planner each stop at ``session_timeout``, are
recorded with their cost unknown, and the run says which session it was; the seed's
``AgentRunner.run(…, timeout=…)`` holds one session so too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from harness.engine_fakes import FakeLedger, ScriptedModel, parts, run
from harness.step_plans import handoff, linear, make_step
from maker.core.models import TaskConfig
from maker.core.sdk import SdkAnswer
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_APPROVAL, EXIT_COMPLETE
from maker.errors import SessionTimeoutError
from maker.executor.agent_runner import AgentRunner
from maker.planner.planner import PlannerModule
from maker.store.plan_store import PlanStore
from maker.tools.registry import ToolRegistry

APPROVES = "GREEN: ok\nVERDICT: approve"
PAST = "session ran past session_timeout (0.2 s: plans/settings.yaml, or --session-timeout)"


class HangingReviewer:
    def __init__(self) -> None:
        self.cancelled = 0

    async def __call__(self, prompt: str, *, max_budget_usd: float | None,
                       model: str | None, resume: str | None = None) -> SdkAnswer:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return SdkAnswer(text="VERDICT: approve")


def test_a_review_past_session_timeout_is_cut_drawn_again_and_then_asks(
        project: Path) -> None:
    store = linear(project, 1, policy="never")
    reviewer, ledger = HangingReviewer(), FakeLedger()
    p = parts(ScriptedModel([handoff(1)]), ledger=ledger, reviewer=reviewer)  # type: ignore[arg-type]
    p.session_timeout = 0.2
    result = run(Orchestrator(store, p, approve="reviewer"))
    assert result.exit_code == EXIT_APPROVAL
    assert "its review was cut 3 times in a row" in result.message, result.message
    assert f"step 1's review {PAST}" in result.message
    assert "`maker run` again asks for the review anew" in result.message
    assert "`STEP_SKIP_REVIEW=1 maker step approve 1`" in result.message
    assert reviewer.cancelled == 3  # (each cut, none left running)
    review = [c for c in ledger.calls if c.kind == "reviewer"]
    assert len(review) == 3 and all(not c.cost_known and "session_timeout" in (c.error or "")
                                    for c in review)
    assert store.load_step(1).status == "awaiting-approval"  # (a person decides)


class HangsOnceReviewer(HangingReviewer):
    async def __call__(self, prompt: str, *, max_budget_usd: float | None,
                       model: str | None, resume: str | None = None) -> SdkAnswer:
        if self.cancelled:
            return SdkAnswer(text=APPROVES)
        return await super().__call__(prompt, max_budget_usd=max_budget_usd, model=model)


def test_a_review_cut_once_is_drawn_again_and_the_run_goes_on(project: Path) -> None:
    store = linear(project, 1, policy="never")
    reviewer, ledger = HangsOnceReviewer(), FakeLedger()
    p = parts(ScriptedModel([handoff(1)]), ledger=ledger, reviewer=reviewer)  # type: ignore[arg-type]
    p.session_timeout = 0.2
    result = run(Orchestrator(store, p, approve="reviewer"))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert store.load_step(1).status == "complete"
    review = [c for c in ledger.calls if c.kind == "reviewer"]
    assert len(review) == 2 and "session_timeout" in (review[0].error or "") \
        and not review[1].error


class HangingPlanner(PlannerModule):
    async def _call_sdk(self, prompt: str, *, system_prompt: str, config: TaskConfig,
                        resume: str | None = None) -> str:
        await asyncio.sleep(30)
        return "never"


def test_planning_past_session_timeout_is_stopped_and_recorded(project: Path) -> None:
    planner, ledger = HangingPlanner(ToolRegistry.default()), FakeLedger()
    p = parts(ScriptedModel([]), ledger=ledger)
    p.session_timeout = 0.2
    store = PlanStore(project / "plans")  # (no plan yet)
    result = run(Orchestrator(store, p, planner=planner), "Write a file")
    assert f"the planner's {PAST}" in result.message, result.message
    (call,) = planner.calls
    assert not call.cost_known and "session_timeout" in call.error
    assert [c.kind for c in ledger.calls] == ["planner"]


async def test_the_seeds_agent_runner_takes_a_timeout() -> None:
    runner = AgentRunner()

    async def hangs(prompt: str, **kwargs: Any) -> AsyncIterator[Any]:
        await asyncio.sleep(30)
        yield None

    runner._sdk_query = hangs  # type: ignore[method-assign]
    with pytest.raises(SessionTimeoutError, match=r"step 1's session ran past session_timeout "
                                                  r"\(0.1 s"):
        await runner.run(make_step(1, -1), "", TaskConfig(instruction="t"), timeout=0.1)


@pytest.mark.parametrize(("setting", "said"), [
    ("", "each session of maker's engine may take: 1800 s (session_timeout)"),
    ("", "each of the plugin's subagents may take: 3000 s (subagent_timeout)"),
    ("subagent_timeout: 0\n", "each of the plugin's subagents may take: no limit "
                              "(subagent_timeout: 0)"),
    ("session_timeout: 90\n", "each session of maker's engine may take: 90 s (session_timeout)"),
    ("session_timeout: 0\n", "each session of maker's engine may take: no limit "
                             "(session_timeout: 0)"),
])
def test_maker_status_says_the_bound(project: Path, setting: str, said: str) -> None:
    from click.testing import CliRunner

    from maker.cli.main import cli

    store = linear(project, 1)
    if setting:
        (store.root / "settings.yaml").write_text(setting)
    shown = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert shown.exit_code == 0, shown.output
    assert said in shown.output
