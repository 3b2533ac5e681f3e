"""An undecided vote on a code step in `maker run`: it fails the step with the matrix, or,
where a person wrote `undecided_code_vote: ask` in plans/settings.yaml, it stops the step
for them with the matrix shown (exit 4, the step still in progress, held there until they
reset or fail it: neither `maker run` nor `/maker:run` votes on it again). The executor
sessions are scripted (each writes its sample into the worktree it works in); the
engine, git's worktrees, pytest and the vote are real. No model can set the choice: it
is no plan field, and no agent may write plans/."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.code_votes import OFF_BY_ONE, RIGHT, TEST_OFF, TEST_RIGHT, clamp_project
from harness.engine_fakes import FakeLedger, parts, run
from harness.session_hooks import decision, fire, said
from harness.step_plans import handoff, step_data, step_spec, write
from maker.core.events import StepFailed, TaskFailed
from maker.core.models import AgentResult, PlanStep, TaskConfig
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_APPROVAL, EXIT_FAILED
from maker.errors import PlanFileError
from maker.executor.loop.next_action import next_action
from maker.executor.state.lifecycle import reset_step
from maker.executor.state.run import ENGINE, begin_run
from maker.executor.state.stretch import began, ended
from maker.planner.linter import lint_text
from maker.store.plan_store import PlanStore
from maker.store.settings import load_settings
from maker.store.step_file import HELD_VOTE

ASKED = ("plans/settings.yaml says `undecided_code_vote: ask`, so the step stays in "
         "progress rather than failing")
UNDECIDED = "the vote on the step's code was undecided: no behaviour led by 2 after 8 samples"
Sample = dict[str, str]  # file -> text; {} for a sample that changes nothing
SPLIT = [{"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT},
         {"src/calc.py": OFF_BY_ONE, "tests/test_calc.py": TEST_OFF}]


class _Samples:
    """The executor sessions of a code vote: the session of sample ``sN`` (its worktree,
    the session's cwd, says which) writes ``samples[N-1]`` there (nothing past the
    list) and hands off complete."""

    def __init__(self, samples: list[Sample]) -> None:
        self.samples = samples
        self.drawn: list[str] = []

    def factory(self, **options: Any) -> _Session:
        folder = Path(options["cwd"])
        found = re.search(r"step-1-s(\d+)-", folder.name)
        assert found, f"expected a sample's worktree, got {folder}"
        self.drawn.append(f"s{found.group(1)}")
        i = int(found.group(1)) - 1
        return _Session(folder, self.samples[i] if i < len(self.samples) else {}, i)


@dataclass
class _Session:
    folder: Path
    sample: Sample
    i: int

    async def run(self, step: PlanStep, context: str, config: TaskConfig) -> AgentResult:
        for name, text in self.sample.items():
            (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(text)
        answer = handoff(1, output={"files": sorted(self.sample)},
                         files_changed=sorted(self.sample))
        return AgentResult(yaml.safe_load(answer), answer, cost_usd=0.01, duration_ms=5,
                           session_id=f"sample-{self.i + 1}")


def _code_step(project: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None
               ) -> PlanStore:
    """A git project whose clamp does not clamp, its tests pytest's; one code step with
    `votes: 2`; ``setting`` in plans/settings.yaml (None: no file)."""
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    clamp_project(project)
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                      writes=["src/calc.py", "tests/"], votes=2,
                                      output_schema="{files: list}")])
    if setting is not None:
        (store.root / "settings.yaml").write_text(setting)
    return store


def _run(store: PlanStore, samples: _Samples, parallel: int = 1) -> tuple[Any, FakeLedger]:
    ledger = FakeLedger()
    engine = parts(samples, ledger)  # type: ignore[arg-type]
    return run(Orchestrator(store, engine, parallel=parallel)), ledger


def test_under_ask_an_undecided_code_vote_stops_for_the_person_with_the_matrix(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six samples that change nothing, then two behaviours, one sample each (each fails
    the other's test): no lead of 2 within 8. The run stops for the person (exit 4),
    the matrix shown; the step stays in progress, nothing failed, the samples' worktrees
    removed; the vote is in the ledger, undecided."""
    store = _code_step(project, monkeypatch, "undecided_code_vote: ask\n")
    samples = _Samples([{}] * 6 + SPLIT)  # (the tests run once: for the last two)
    result, ledger = _run(store, samples)
    assert result.exit_code == EXIT_APPROVAL, result.message
    said_ = " ".join(result.message.split())
    assert said_.startswith(f"step 1 (Step number 1) waits for a person: {UNDECIDED}")
    assert ASKED in said_ and "reset it (`maker step reset 1` in a terminal, or " \
        "/maker:reset 1) and run it again (`maker run`, or /maker:run) for a fresh vote" \
        in said_ and "`maker step fail 1 --reason" in said_
    rows = re.search(r"rows: s7: ([^;]+); s8: ([^;]+);", said_)
    assert rows and rows.group(1) != rows.group(2)  # (two behaviours, side by side)
    assert "s3: it changed no file" in said_
    assert sorted(samples.drawn) == sorted(f"s{i}" for i in range(1, 9))
    assert store.load().get(1).status == "in-progress"
    assert not any(isinstance(e, (StepFailed, TaskFailed)) for e in result.events)
    assert not list((store.root / ".maker" / "worktrees").glob("step-1-s*"))
    (vote,) = [c for c in ledger.calls if c.kind == "vote" and c.detail]  # (the vote's own)
    assert vote.error == "undecided" and vote.detail is not None
    assert set(vote.detail["matrix"]["rows"]) == {"s7", "s8"}
    assert (project / "src" / "calc.py").read_text().endswith("return x\n")  # (untouched)

    # Held for the person: `maker run` again stops there at once, drawing no sample; and
    # so does `/maker:run` in the engine, rather than start a stretch that votes again.
    again, _ = _run(store, samples)
    assert (again.exit_code, again.message) == (EXIT_APPROVAL, result.message)
    assert len(samples.drawn) == 8
    with store.lock():
        begin_run(store, "session-1", None, ENGINE)
    began(store)
    ended(store, again.exit_code, again.message)
    action = next_action(store, "session-1", "prompt-1")
    assert action.kind == "stop" and "/maker:reset 1" in action.said, action.said
    # A reset lets it go: the step is pending, the mark gone (a run votes anew).
    reset_step(store, 1)
    record = store.load().get(1)
    assert record.status == "pending" and HELD_VOTE not in record.meta


@pytest.mark.parametrize("parallel", [1, 2])
def test_by_default_an_undecided_code_vote_fails_the_step(
        project: Path, monkeypatch: pytest.MonkeyPatch, parallel: int) -> None:
    store = _code_step(project, monkeypatch, None)
    result, _ = _run(store, _Samples([]), parallel)  # (8 samples that change nothing)
    assert result.exit_code == EXIT_FAILED, result.message
    assert UNDECIDED in result.message and "waits for a person" not in result.message
    assert store.load().get(1).status == "failed"


def test_under_ask_a_run_of_steps_side_by_side_stops_for_the_person_too(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _code_step(project, monkeypatch, "undecided_code_vote: ask\n")
    result, _ = _run(store, _Samples([]), parallel=2)
    assert result.exit_code == EXIT_APPROVAL, result.message
    assert ASKED in " ".join(result.message.split())
    assert store.load().get(1).status == "in-progress"


def test_under_ask_a_vote_that_cannot_run_still_fails_the_step(
        project: Path) -> None:
    """`ask` is about an undecided vote: a vote that cannot run at all (a plan edited by
    hand to vote on code where the tests are not pytest's) fails the step with the fix,
    since voting again would fail the same way."""
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write"], votes=2)])
    (store.root / "settings.yaml").write_text("undecided_code_vote: ask\n")
    result, _ = _run(store, _Samples([]))
    assert result.exit_code == EXIT_FAILED, result.message
    assert "is not pytest's. Remove `votes` from the step" in result.message
    assert store.load().get(1).status == "failed"


# -- a person's word -----------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [("", "fail"), ("undecided_code_vote: ask\n",
                                                            "ask"),
                                             ("undecided_code_vote: fail\n", "fail")])
def test_the_setting_is_read_from_the_persons_file(tmp_path: Path, text: str,
                                                    value: str) -> None:
    (tmp_path / "settings.yaml").write_text(text)
    assert load_settings(tmp_path).undecided_code_vote == value


@pytest.mark.parametrize("value", ["yes", "true", "pick s1"])
def test_a_value_that_is_not_a_choice_names_the_choices_and_the_fix(
        tmp_path: Path, value: str) -> None:
    (tmp_path / "settings.yaml").write_text(f"undecided_code_vote: {value}\n")
    with pytest.raises(PlanFileError) as caught:
        load_settings(tmp_path)
    assert "undecided_code_vote: must be one of fail, ask" in str(caught.value)
    assert "fix: `undecided_code_vote: fail`" in str(caught.value)


def test_no_model_can_set_it(plugin_project: Path) -> None:
    """The planner cannot put it in a plan (the linter refuses the field, in the plan or a
    step), and no agent in Claude Code may write plans/settings.yaml, with its file
    tools or its Bash."""
    data = {"reasoning": "Because.", "undecided_code_vote": "ask",
            "plan": [step_data(1, -1, undecided_code_vote="ask")]}
    plan, problems = lint_text(yaml.safe_dump(data))
    assert plan is None and {p.field for p in problems} >= {"undecided_code_vote"}
    assert {p.step for p in problems if p.field == "undecided_code_vote"} == {None, 1}
    write(plugin_project, [step_spec(1, -1)])
    settings = plugin_project / "plans" / "settings.yaml"
    for tool, tool_input in [
            ("Write", {"file_path": str(settings), "content": "undecided_code_vote: ask\n"}),
            ("Edit", {"file_path": "plans/settings.yaml", "old_string": "",
                      "new_string": "undecided_code_vote: ask\n"}),
            ("Bash", {"command": "echo 'undecided_code_vote: ask' >> plans/settings.yaml"})]:
        out = fire("pre-tool-use", tool_name=tool, tool_input=tool_input)
        assert decision(out) == "deny", (tool, out)
        assert "plans" in said(out)
    assert not settings.exists()
