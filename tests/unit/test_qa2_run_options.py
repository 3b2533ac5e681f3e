"""QA pass 2 on `maker run` and `maker calibrate`: bad options and a planted ledger give a
clear error naming the problem, never a traceback, and never a write outside plans/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from maker.cli import run_cmd
from maker.cli.main import cli
from maker.engine.step_run import EngineParts
from maker.store.plan_store import PlanStore

from ._step_plans import handoff, isolated_project, linear  # noqa: F401 - `project`
from .test_orchestrator import ScriptedModel


def _real_ledger(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    """The engine with the real ledger and budget, and scripted sessions."""
    from maker.engine.budget import Budget
    from maker.engine.ledger import Call, Ledger

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
