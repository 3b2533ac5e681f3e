"""`maker run` (issue 8 part 6): the CLI over the orchestrator, with the model scripted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from maker.cli import run_cmd
from maker.cli.main import cli
from maker.store.plan_store import PlanStore

from ._step_plans import handoff, isolated_project, linear  # noqa: F401 - `project`
from .test_orchestrator import FakeLedger, ScriptedModel, parts


def _patch(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel,
           seen: dict[str, Any]) -> None:
    def fake_parts(store: PlanStore, max_budget_usd: float | None, model_name: str | None
                   ) -> Any:
        seen.update(budget=max_budget_usd, model=model_name)
        return parts(model, FakeLedger(), budget=max_budget_usd)

    monkeypatch.setattr(run_cmd, "build_parts", fake_parts)


def test_maker_run_continues_the_plan_with_json_events_and_a_table(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    linear(project, 2)
    seen: dict[str, Any] = {}
    _patch(monkeypatch, ScriptedModel([handoff(1), handoff(2)]), seen)
    result = CliRunner().invoke(cli, ["run", "--events", "-", "--max-budget-usd", "5",
                                      "--model", "m1", "--approve", "auto"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [x["event"] for x in lines] == ["StepStarted", "StepCompleted", "StepStarted",
                                           "StepCompleted", "TaskCompleted"]
    assert lines[0]["step"] == 1 and lines[0]["title"] == "Step number 1"
    assert seen == {"budget": 5.0, "model": "m1"}
    assert "step   1" in result.stderr and "complete" in result.stderr
    assert "total spent (ledger): $0.0200" in result.stderr


def test_maker_run_exit_codes_for_budget_and_approval(project: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    linear(project, 3, policy="never")
    _patch(monkeypatch, ScriptedModel([handoff(1)]), {})
    events = tmp_path / "events.jsonl"
    result = CliRunner().invoke(cli, ["run", "--events", str(events)])
    assert result.exit_code == 4, result.output
    assert "maker step approve 1" in result.output
    assert json.loads(events.read_text().splitlines()[0])["event"] == "StepStarted"

    _patch(monkeypatch, ScriptedModel([handoff(2)]), {})
    result = CliRunner().invoke(cli, ["run", "--max-budget-usd", "0.005", "--approve",
                                      "auto"])
    assert result.exit_code == 3, result.output
    assert "stopped by the budget" in result.output
    statuses = [r.status for r in PlanStore(project / "plans").load().steps]
    assert statuses == ["complete", "complete", "in-progress"]


@pytest.mark.parametrize("env", ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"])
def test_the_model_cannot_give_a_run_its_approval_policy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str) -> None:
    monkeypatch.setenv(env, "1")
    out = CliRunner().invoke(cli, ["run", "--approve", "auto", "--plans-dir",
                                   str(tmp_path / "plans")])
    assert out.exit_code == 2 and "does not run inside Claude Code" in out.output
    assert not (tmp_path / "plans").exists()


def test_vote_options_are_checked_and_the_law_picks_k(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.voting import k_min

    linear(project, 2)  # two read-only steps: both vote
    seen: dict[str, Any] = {}
    both = CliRunner().invoke(cli, ["run", "--vote", "3", "--target-success", "0.9",
                                    "--sample-success", "0.8"])
    assert both.exit_code == 2 and "not both" in both.output
    alone = CliRunner().invoke(cli, ["run", "--target-success", "0.9"])
    assert alone.exit_code == 2 and "go together" in alone.output
    k = k_min(2, 0.8, 0.999)
    model = ScriptedModel([handoff(1)] * k + [handoff(2)] * k)
    _patch(monkeypatch, model, seen)
    result = CliRunner().invoke(cli, ["run", "--target-success", "0.999",
                                      "--sample-success", "0.8", "--approve", "auto"])
    assert result.exit_code == 0, result.output
    assert f"voting: a lead of {k} per voting step (the law's k_min for 2 voting steps" \
        in result.output
    assert len(model.prompts) == 2 * k  # unanimous samples: exactly k per step


def test_a_law_that_asks_too_much_is_a_usage_error(project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    linear(project, 2)
    _patch(monkeypatch, ScriptedModel([]), {})
    result = CliRunner().invoke(cli, ["run", "--target-success", "0.999",
                                      "--sample-success", "0.51", "--approve", "auto"])
    assert result.exit_code == 2, result.output
    assert "over maker's limit of 20" in result.output and "maker calibrate" in result.output
