"""``maker calibrate``: samples one step, changes nothing but the ledger,
and reports the agreement and the law's k."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.engine_fakes import FakeLedger, ScriptedModel, parts
from harness.step_plans import branch_plan, handoff, make_step, write
from maker.cli import run_cmd
from maker.cli.main import cli
from maker.engine.calibrate import calibrate
from maker.errors import InputError
from maker.store.plan_store import PlanStore
from maker.voting import k_min


def chose(n: int) -> str:
    return handoff(1, output={"next_step": n, "reason": f"step {n} it is"})


def test_calibration_counts_agreement_and_asks_the_law(project: Path) -> None:
    store = write(project, branch_plan().steps)
    before = {p.name: p.read_bytes() for p in (project / "plans" / "steps").iterdir()}
    model = ScriptedModel([chose(3)] * 7 + [chose(2)] * 2 + ["no handoff here"])
    engine = parts(model)
    result = asyncio.run(calibrate(store, engine, 1, 10, target=0.95))
    assert (result.samples, len(result.flagged), result.voted) == (10, 1, 9)
    assert result.tally == [('["complete", 3]', 7), ('["complete", 2]', 2)]  # readable
    assert result.agreement == pytest.approx(7 / 9)
    assert result.steps == 3  # all three steps of the plan read only: all can vote
    assert result.k == k_min(3, 7 / 9, 0.95)
    assert result.interval[0] < 7 / 9 < result.interval[1]
    assert result.k_low is None or result.k_low >= result.k
    assert [c.kind for c in engine.ledger.calls] == ["calibrate"] * 10
    after = {p.name: p.read_bytes() for p in (project / "plans" / "steps").iterdir()}
    assert after == before and store.load().get(1).status == "pending"  # nothing started


def test_no_majority_means_voting_cannot_converge(project: Path) -> None:
    store = write(project, branch_plan().steps)
    result = asyncio.run(calibrate(store, parts(ScriptedModel([chose(2), chose(3)] * 2)), 1,
                                   4))
    assert result.k is None and "voting cannot converge" in result.notes[0]


def test_a_step_with_side_effects_is_refused(project: Path) -> None:
    store = write(project, [replace(make_step(1, -1), primary_tools=["Edit"])])
    with pytest.raises(InputError, match="would repeat its side effects"):
        asyncio.run(calibrate(store, parts(ScriptedModel([])), 1, 5))


def test_the_command_prints_the_tally_and_what_to_run(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(project, branch_plan().steps)
    model = ScriptedModel([chose(3)] * 9 + [chose(2)])

    def fake_parts(store: PlanStore, budget: float | None, model_name: str | None) -> Any:
        return parts(model, FakeLedger())

    monkeypatch.setattr(run_cmd, "build_parts", fake_parts)
    out = CliRunner().invoke(cli, ["calibrate", "1", "--samples", "10", "--steps", "1000"])
    assert out.exit_code == 0, out.output
    k = k_min(1000, 0.9, 0.95)
    assert "10 samples, 0 flagged, 10 voted" in out.output
    assert "agreement: 9/10 = 0.90" in out.output
    assert f"for 1000 voted steps and a whole-task success of 0.95, k = {k}" in out.output
    assert f"maker run --vote {k}" in out.output
    bad = CliRunner().invoke(cli, ["calibrate", "1", "--samples", "1"])
    assert bad.exit_code == 2


def test_calibrate_budget_counts_only_its_own_samples(project: Path) -> None:
    """The plan's earlier runs spent $5; `--max-budget-usd 0.03` still buys three
    samples of $0.01, then stops with a message about this command."""
    from maker.engine.budget import Budget
    from maker.engine.ledger import Call, Ledger
    from maker.errors import BudgetExceededError

    store = write(project, branch_plan().steps)
    ledger = Ledger(store)
    ledger.record(Call(kind="executor", step=1, attempt=1, cost_usd=5.0, duration_ms=1,
                       input_tokens=0, output_tokens=0, model=None, error=None, at="t",
                       session_id=None))
    engine = parts(ScriptedModel([chose(3)] * 10))
    engine.ledger, engine.call_type = ledger, Call
    engine.budget = Budget(0.03, ledger, own_calls=True)
    with pytest.raises(BudgetExceededError, match="on this command's calls"):
        asyncio.run(calibrate(store, engine, 1, 10))
    assert [c.kind for c in ledger.calls()].count("calibrate") == 3


def test_a_code_step_is_calibrated_from_the_votes_on_its_code(project: Path) -> None:
    """Its samples are not drawn again (each would repeat its writes): its p is the share
    of the counted samples of its votes in the ledger that voted with the winner."""
    from maker.engine.ledger import Call, Ledger

    store = write(project, [replace(make_step(1, -1), primary_tools=["Edit"], votes=2)])
    ledger = Ledger(store)
    for samples, flagged, won in ((4, 0, 3), (6, 1, 3)):
        ledger.record(Call(kind="vote", step=1, attempt=0, cost_usd=0.5, duration_ms=0,
                           input_tokens=0, output_tokens=0, model=None, error=None, at="t",
                           session_id=None, detail={
                               "k": 2, "samples": samples, "flagged": flagged, "cost_usd": 0.5,
                               "tally": [{"answer": "pass pass", "votes": won},
                                         {"answer": "pass fail", "votes": 1}],
                               "matrix": {"columns": [], "rows": {}}}))
    result = asyncio.run(calibrate(store, parts(ScriptedModel([])), 1, 5, target=0.95))
    assert (result.samples, len(result.flagged), result.voted) == (10, 1, 9)
    assert result.agreement == pytest.approx(6 / 9)
    assert result.k == k_min(1, 6 / 9, 0.95) and result.cost_usd == pytest.approx(1.0)
    assert "from 2 vote(s) on the step's code in the ledger" in result.notes[0]
