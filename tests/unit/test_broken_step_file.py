"""A plan file maker cannot read is read around; a bug in maker is not.

Where maker reads its own step file only to say something better (a title in a line, a
vote's wording, the Stop hook's check), a file it cannot read (a hand edit, a half-saved
file: a ``MakerError``, an ``OSError``) gives the plainer answer. Any other error is a bug
in maker: it is raised, never taken for a broken file (a hook's entry then fails open or
closed, visibly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hooks import fire, stop_input
from harness.step_plans import linear
from maker.executor.loop.report import step_head
from maker.executor.state.lifecycle import start_step
from maker.executor.votes import ballots
from maker.executor.votes.ballots import launch_instruction
from maker.store.plan_store import PlanStore
from maker.store.settings import load_settings
from maker.store.step_peek import peek


def _break(store: PlanStore, n: int) -> None:
    store.step_path(n).write_text("---\nstep: [\n---\n## Task\nhalf-saved\n", encoding="utf-8")


def _bug(*_: object, **__: object) -> None:
    raise RuntimeError("a bug in maker")


def test_a_broken_step_file_gives_the_number_alone_and_a_bug_is_raised(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = linear(project, 2)
    assert step_head(store, 1) == f"step 1 ({store.load_step(1).title})"
    _break(store, 1)
    assert step_head(store, 1) == "step 1"
    monkeypatch.setattr(PlanStore, "load_step", _bug)
    with pytest.raises(RuntimeError, match="a bug in maker"):
        step_head(store, 2)


def test_a_vote_that_cannot_be_read_gets_the_one_executor_wording_and_a_bug_is_raised(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    _break(store, 1)
    assert "Execute maker step 1." in launch_instruction(store, 1)
    monkeypatch.setattr(ballots, "vote_state", _bug)
    with pytest.raises(RuntimeError, match="a bug in maker"):
        launch_instruction(store, 1)


def test_the_stop_hook_lets_a_turn_stop_past_a_broken_step_file(project: Path) -> None:
    store = linear(project, 2)
    start_step(store, 1, session_id="sess-1")
    _break(store, 1)
    said = fire("stop", stop_input(project))
    assert said is not None and "decision" not in said
    assert "step 1 is in progress but its file cannot be read" in said["systemMessage"]


def test_the_peek_reads_around_what_it_cannot_read(project: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert peek(project, 1) is None  # a directory
    odd = project / "01-odd.md"
    odd.write_bytes(b"---\nstep: 1\ntitle: \xff\n---\n")
    assert peek(odd, 1) is None  # not UTF-8
    assert peek(project / "missing.md", 1) is None
    monkeypatch.setattr("maker.store.step_peek.read_regular_file", _bug)
    with pytest.raises(RuntimeError, match="a bug in maker"):
        peek(odd, 1)


def test_settings_that_are_not_yaml_are_the_files_problem(project: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    plans = project / "plans"
    plans.mkdir()
    (plans / "settings.yaml").write_text("a: [\n", encoding="utf-8")
    with pytest.raises(Exception, match="is not valid YAML"):
        load_settings(plans)
    monkeypatch.setattr("maker.yaml_cleaner.load.load_yaml", _bug)
    with pytest.raises(RuntimeError, match="a bug in maker"):
        load_settings(plans)
