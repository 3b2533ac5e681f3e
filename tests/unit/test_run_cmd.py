"""`maker run`: the CLI over the orchestrator, with the model scripted;
bad options and a planted ledger give a clear error naming the problem, never a traceback,
and never a write outside plans/ (for `maker calibrate` too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.engine_fakes import FakeLedger, ScriptedModel, parts
from harness.step_plans import handoff, linear
from maker.cli import run_cmd
from maker.cli.main import cli
from maker.engine.budget import Budget
from maker.engine.ledger import Call, Ledger
from maker.engine.parts import EngineParts
from maker.store.plan_store import PlanStore
from maker.voting import k_min


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


def _real_ledger(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    """The engine with the real ledger and budget, and scripted sessions."""
    def fake_parts(store: PlanStore, max_budget_usd: float | None, name: str | None) -> Any:
        ledger = Ledger(store)
        return EngineParts(runner_factory=model.factory, ledger=ledger, call_type=Call,
                           budget=Budget(max_budget_usd, ledger) if max_budget_usd else None,
                           reviewer=None, model=name)

    monkeypatch.setattr(run_cmd, "build_parts", fake_parts)


@pytest.mark.parametrize("where", ["a-folder", "missing/events.jsonl"])
def test_events_to_a_path_that_cannot_be_written_is_a_usage_error(
        project: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    linear(project, 1)
    (project / "a-folder").mkdir()
    model = ScriptedModel([handoff(1)])
    _real_ledger(monkeypatch, model)
    out = CliRunner().invoke(cli, ["run", "--events", where, "--approve", "auto"])
    assert out.exit_code == 2, (out.output, out.exception)
    assert "--events" in out.output and f"cannot write {where}" in out.output
    assert not model.prompts  # nothing ran


@pytest.mark.parametrize("command", [["run"], ["calibrate", "1"]])
@pytest.mark.parametrize("amount", ["nan", "inf"])
def test_a_budget_that_is_not_an_amount_is_a_usage_error(
        project: Path, monkeypatch: pytest.MonkeyPatch, command: list[str],
        amount: str) -> None:
    linear(project, 1)
    _real_ledger(monkeypatch, ScriptedModel([handoff(1)]))
    out = CliRunner().invoke(cli, [*command, "--max-budget-usd", amount])
    assert out.exit_code == 2, (out.output, out.exception)
    assert "--max-budget-usd" in out.output and "not an amount" in out.output


@pytest.mark.parametrize("command", [["run"], ["calibrate", "1"]])
@pytest.mark.parametrize("name", ["", "sonnet --dangerously-skip-permissions", "a\x00b",
                                  "-x", "m" * 200])
def test_a_model_that_is_not_a_model_name_is_a_usage_error(
        project: Path, monkeypatch: pytest.MonkeyPatch, command: list[str],
        name: str) -> None:
    linear(project, 1)
    model = ScriptedModel([handoff(1)])
    _real_ledger(monkeypatch, model)
    out = CliRunner().invoke(cli, [*command, "--model", name])
    assert out.exit_code == 2, (out.output, out.exception)
    assert "--model" in out.output and "is not a model name" in out.output
    assert not model.prompts


def test_a_model_name_is_still_accepted(project: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    linear(project, 1)
    model = ScriptedModel([handoff(1)])
    _real_ledger(monkeypatch, model)
    out = CliRunner().invoke(cli, ["run", "--model", "claude-sonnet-4-5[1m]",
                                   "--approve", "auto"])
    assert out.exit_code == 0, out.output
    assert model.options[0]["model"] == "claude-sonnet-4-5[1m]"


def test_a_ledger_that_is_a_symbolic_link_is_never_written_through(
        project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A link planted at plans/ledger.jsonl must not make maker append its JSON lines to
    the file it points to (found by appending two lines to /etc/passwd as root)."""
    linear(project, 1)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (project / "plans" / "ledger.jsonl").symlink_to(victim)
    _real_ledger(monkeypatch, ScriptedModel([handoff(1)]))
    out = CliRunner().invoke(cli, ["run", "--approve", "auto"])
    assert victim.read_text() == "precious\n"
    assert out.exit_code == 1, (out.output, out.exception)
    assert "ledger.jsonl is not a regular file" in out.output and "move it away" in out.output


def test_an_events_sink_that_fails_stops_the_run_with_a_message_and_it_continues(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--events` on a full disk (or a pipe whose reader has gone) used to end the run
    with an OSError traceback."""
    linear(project, 2)
    _real_ledger(monkeypatch, ScriptedModel([handoff(1), handoff(2)]))
    out = CliRunner().invoke(cli, ["run", "--events", "/dev/full", "--approve", "auto"])
    assert out.exit_code == 1, (out.output, out.exception)
    assert "the events could not be written to /dev/full (No space left on device)" \
        in out.output and "`maker run` continues the plan" in out.output
    store = PlanStore(project / "plans")
    assert [r.status for r in store.load().steps] == ["in-progress", "pending"]
    out = CliRunner().invoke(cli, ["run", "--approve", "auto"])
    assert out.exit_code == 0, out.output
    assert [r.status for r in store.load().steps] == ["complete", "complete"]
