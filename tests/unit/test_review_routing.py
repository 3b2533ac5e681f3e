"""Review routing, in both front ends: the files a step changed are
measured by maker; declared boundaries route to review; ``STEP_SKIP_REVIEW=1`` never
spawns the reviewer and never grants approval; RED findings go back to implementation,
bounded by ``max_review_attempts``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.engine_fakes import FakeReviewer, ScriptedModel, parts, run
from harness.hooks import executor_returns, fire, subagent_input
from harness.repos import edit, git_init
from harness.step_plans import WRITER, handoff, make_step, tool_step, write
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_APPROVAL, EXIT_COMPLETE
from maker.errors import HandoffRejectedError, ReviewMissingError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import approve_step
from maker.executor.acceptance.review import latest_review
from maker.executor.protocol.orient import record_orient
from maker.executor.rules.step_rules import (
    approval_route,
    crossed_boundaries,
    review_reasons,
    review_required,
)
from maker.executor.state.lifecycle import reset_step, start_step
from maker.executor.verdicts.outcome import outcome
from maker.handoff.measured import MEASURE_KEY
from maker.store.plan_store import PlanStore

REVIEWER = "maker:reviewer"


def settings(store: PlanStore, text: str) -> None:
    (store.root / "settings.yaml").write_text(text)


# -- the rules, as plain functions -----------------------------------------------------------


def test_boundaries_are_globs_and_two_of_them_route_to_review() -> None:
    declared = ["src/api/**", "src/db", "lib/*.py"]
    assert crossed_boundaries(["src/api/v1/x.py", "./src/db/m.py", "README"], declared) == \
        ["src/api/**", "src/db"]
    assert crossed_boundaries(["lib/a.py", "lib/sub/b.py", "library/c.py"], declared) == \
        ["lib/*.py"]
    assert crossed_boundaries(["src/dbx/m.py"], declared) == []  # a folder, not a prefix
    assert not review_required(["src/api/a.py", "src/api/b.py"], declared)  # one boundary
    assert review_reasons(["src/api/a.py", "src/db/b.py"], declared) == [
        "the change crosses architectural boundaries: `src/api/**`, `src/db`"]
    assert review_reasons([f"f{i}" for i in range(5)]) == ["5 files changed"]


@pytest.mark.parametrize("policy", ["never", "auto", "reviewer"])
@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("skipped", [False, True])
def test_skipping_review_only_ever_takes_machine_approval_away(
        policy: str, large: bool, skipped: bool) -> None:
    files = ["f"] * (5 if large else 1)
    route = approval_route(policy, files, (), skipped)
    unskipped = approval_route(policy, files)
    if skipped:
        assert route != "reviewer"
        assert route == unskipped or route == "person"  # never a new machine approval
    expected = {("never", False): "person", ("never", True): "person",
                ("auto", False): "policy", ("auto", True): "reviewer",
                ("reviewer", False): "reviewer", ("reviewer", True): "reviewer"}[policy, large]
    assert route == ("person" if skipped and expected == "reviewer" else expected)


# -- measured files ------------------------------------------------------------------------


def test_a_handoff_that_under_reports_the_changed_files_is_refused(
        both: tuple[Path, Path]) -> None:
    plugin, _ = both
    git_init(plugin)
    edit(plugin, "old.py")
    store = write(plugin, [WRITER])
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    start = store.load_step(1).meta[MEASURE_KEY]
    edit(plugin, "old.py", "src/new.py", "src/more.py")
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(store, handoff(1, files_changed=["old.py"]))
    said = " ".join(str(p) for p in refused.value.problems)
    assert "files_changed: leaves out 2 file(s)" in said
    assert "src/more.py, src/new.py" in said
    # a resumed step keeps its start
    assert start_step(store, 1, session_id="sess-1").restarted
    assert store.load_step(1).meta[MEASURE_KEY] == start
    # listed (a folder covers what is under it; a note may follow a path): accepted,
    # and maker keeps what it measured, plans/ and the plugin's data left out.
    result = accept_handoff(store, handoff(1, files_changed=["./old.py (edited)", "src/"]))
    assert result.status in ("complete", "awaiting-approval")
    assert store.read_handoff(1)["files_measured"] == ["old.py", "src/more.py", "src/new.py"]


def test_the_measure_never_writes_the_users_index_nor_runs_planted_programs(
        tmp_path: Path) -> None:
    from maker.tools.git.git_tree import changed_paths, snapshot_tree

    git_init(tmp_path)
    edit(tmp_path, "a.txt")
    subprocess.run(["git", "add", "a.txt"], cwd=tmp_path, check=True)
    index = (tmp_path / ".git/index").read_bytes()
    planted = tmp_path / "planted"
    for key, value in (("filter.evil.clean", f"touch {planted}-clean; cat"),
                       ("core.fsmonitor", f"touch {planted}-fsmonitor; false"),
                       ("diff.external", f"touch {planted}-diff"),
                       ("diff.evil.textconv", f"touch {planted}-textconv; cat")):
        subprocess.run(["git", "config", key, value], cwd=tmp_path, check=True)
    (tmp_path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (tmp_path / ".git/hooks/post-index-change").write_text(f"#!/bin/sh\ntouch {planted}-hook\n")
    (tmp_path / ".git/hooks/post-index-change").chmod(0o755)
    start = snapshot_tree(tmp_path)
    edit(tmp_path, "a.txt", "b.txt")
    end = snapshot_tree(tmp_path)
    assert start and end
    assert changed_paths(tmp_path, start, end) == ["a.txt", "b.txt"]
    assert not list(tmp_path.glob("planted*"))
    assert (tmp_path / ".git/index").read_bytes() == index


def test_without_git_the_count_is_the_executors_claim(both: tuple[Path, Path]) -> None:
    plugin, _ = both
    store = write(plugin, [make_step(1, -1)], policy="never")
    start_step(store, 1, session_id="sess-1")
    assert MEASURE_KEY not in store.load_step(1).meta
    accept_handoff(store, handoff(1, files_changed=["a.py"]))
    now = outcome(store, 1)
    assert now["files_changed"] == ["a.py"] and now["files_measured"] is False


def test_a_read_only_step_measures_nothing_whatever_else_changed(
        both: tuple[Path, Path]) -> None:
    plugin, _ = both
    git_init(plugin)
    store = write(plugin, [tool_step(1, ["Read", "Grep"])])
    start_step(store, 1, session_id="sess-1")
    edit(plugin, "a person's edit.txt")
    accept_handoff(store, handoff(1, output={}))
    assert store.read_handoff(1)["files_measured"] == []


def test_a_step_sent_back_keeps_its_start_and_a_reset_starts_afresh(
        both: tuple[Path, Path]) -> None:
    from maker.executor.acceptance.approval import reject_step

    plugin, _ = both
    git_init(plugin)
    store = write(plugin, [WRITER], policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    start = store.load_step(1).meta[MEASURE_KEY]
    accept_handoff(store, handoff(1, files_changed=edit(plugin, "a.py")))
    reject_step(store, 1, "more")
    start_step(store, 1, session_id="sess-1")
    assert store.load_step(1).meta[MEASURE_KEY] == start
    with pytest.raises(HandoffRejectedError, match="leaves out 1 file"):  # a.py is still its
        accept_handoff(store, handoff(1, files_changed=edit(plugin, "b.py")))
    reset_step(store, 1)
    assert MEASURE_KEY not in store.load_step(1).meta


# -- a large step by what maker measured, and by boundaries, in both front ends ------------------


@pytest.mark.parametrize("why", ["measured", "boundaries"])
def test_review_routing_uses_the_measure_and_the_boundaries_in_both_front_ends(
        both: tuple[Path, Path], why: str) -> None:
    """The executor claims one file; maker measured five (or two boundaries): under
    `auto` the reviewer decides, told why, in the plugin and in maker run alike."""
    names = [f"src/f{i}.py" for i in range(5)] if why == "measured" else \
        ["src/api/a.py", "src/db/b.py"]
    said = "5 files changed" if why == "measured" else "`src/api`, `src/db`"
    ends = []
    for project in both:
        git_init(project)
        store = write(project, [WRITER], policy="auto")
        settings(store, "boundaries: [src/api, src/db]\n")
        ends.append(store)
    plugin_store, engine_store = ends

    start_step(plugin_store, 1, session_id="sess-1")
    record_orient(plugin_store, 1, "none")
    edit(both[0], *names)
    claimed = names if why == "boundaries" else ["src/"]
    executor_returns(both[0], handoff(1, files_changed=claimed))
    now = outcome(plugin_store, 1)
    assert now["status"] == "awaiting-approval" and now["review_required"]
    assert said in now["next"]  # the reviewer's prompt says why
    fire("subagent-stop", subagent_input(both[0], REVIEWER, "GREEN: ok\nVERDICT: approve"))
    assert plugin_store.load_step(1).status == "complete"

    class Editing(ScriptedModel):  # the executor's session edits the files
        def factory(self, **kw: Any) -> Any:
            record_orient(engine_store, 1, "none")
            edit(both[1], *names)
            return super().factory(**kw)

    reviewer = FakeReviewer("approve")
    result = run(Orchestrator(engine_store, parts(Editing([handoff(1, files_changed=claimed)]),
                                                  reviewer=reviewer)))
    assert result.exit_code == EXIT_COMPLETE, result.message
    assert said in reviewer.prompts[0] and "measured by maker" in reviewer.prompts[0]
    assert engine_store.load_step(1).meta["approved_by"] == "policy:auto (reviewer approved)"


# -- STEP_SKIP_REVIEW=1 ------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["never", "auto", "reviewer"])
@pytest.mark.parametrize("count", [1, 5])
@pytest.mark.parametrize("skip", [False, True])
def test_every_policy_and_size_with_and_without_skip_ends_the_same_and_never_dead_ends(
        both: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, policy: str, count: int,
        skip: bool) -> None:
    plugin, engine = both
    if skip:
        monkeypatch.setenv("STEP_SKIP_REVIEW", "1")
    files = [f"src/f{i}.py" for i in range(count)]
    route = approval_route(policy, files, (), skip)
    reviewed = not skip and (review_required(files) or route == "reviewer")

    store = write(plugin, [make_step(1, -1)], policy=policy)
    start_step(store, 1, session_id="sess-1")
    executor_returns(plugin, handoff(1, files_changed=files))
    now = outcome(store, 1)
    if reviewed:
        assert "launch maker:reviewer" in now["next"]
        fire("subagent-stop", subagent_input(plugin, REVIEWER, "GREEN: ok\nVERDICT: approve"))
    else:
        assert "maker:reviewer" not in str(now.get("next"))
        launch = fire("agent-launch", {
            "session_id": "sess-1", "cwd": str(plugin), "hook_event_name": "PreToolUse",
            "tool_name": "Agent", "tool_use_id": "t9",
            "tool_input": {"subagent_type": REVIEWER, "prompt": "Review step 1"}})
        if skip:  # the main agent cannot spawn it either
            assert launch is not None
            assert launch["hookSpecificOutput"]["permissionDecision"] == "deny"
            assert "STEP_SKIP_REVIEW=1" in launch["hookSpecificOutput"][
                "permissionDecisionReason"]

    reviewer = FakeReviewer("approve")
    engine_store = write(engine, [make_step(1, -1)], policy=policy)
    result = run(Orchestrator(engine_store, parts(ScriptedModel([handoff(
        1, files_changed=files)]), reviewer=reviewer)))
    assert len(reviewer.prompts) == (1 if reviewed else 0)
    for kept in (store, engine_store):
        step = kept.load_step(1)
        assert (latest_review(kept, step) is not None) == reviewed
        if route == "person":
            assert step.status == "awaiting-approval"
            monkeypatch.delenv("STEP_SKIP_REVIEW", raising=False)  # a later terminal
            assert approve_step(kept, 1, "user").status == "complete"  # no dead end
            if skip:
                monkeypatch.setenv("STEP_SKIP_REVIEW", "1")
        else:
            assert step.status == "complete"
            assert "policy:" in str(step.meta["approved_by"])
    assert result.exit_code == (EXIT_APPROVAL if route == "person" else EXIT_COMPLETE)
    if route == "person" and skip and review_required(files):
        assert "STEP_SKIP_REVIEW=1" in result.message


def test_a_person_is_refused_a_large_step_without_review_unless_they_skip_it(
        both: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    plugin, _ = both
    store = write(plugin, [make_step(1, -1)], policy="never")
    start_step(store, 1, session_id="sess-1")
    accept_handoff(store, handoff(1, files_changed=[f"f{i}" for i in range(5)]))
    with pytest.raises(ReviewMissingError, match=r"\(5 files changed\).*STEP_SKIP_REVIEW=1"):
        approve_step(store, 1, "user")
    monkeypatch.setenv("STEP_SKIP_REVIEW", "1")
    assert approve_step(store, 1, "user").status == "complete"


# -- RED findings go back to implementation, bounded ------------------------------------------


def _red(project: Path) -> dict[str, Any] | None:
    return fire("subagent-stop", subagent_input(
        project, REVIEWER, "- RED: f4.py drops the error.\nVERDICT: changes-needed"))


@pytest.mark.parametrize("bound", [None, 0, 2])
def test_red_findings_loop_back_to_implementation_bounded_in_both_front_ends(
        both: tuple[Path, Path], bound: int | None) -> None:
    plugin, engine = both
    rounds = 1 if bound is None else bound
    files = [f"f{i}.py" for i in range(5)]
    stores = [write(p, [make_step(1, -1)], policy="auto") for p in both]
    if bound is not None:
        for kept in stores:
            settings(kept, f"max_review_attempts: {bound}\n")
    store, engine_store = stores

    start_step(store, 1, session_id="sess-1")
    for i in range(rounds + 1):
        executor_returns(plugin, handoff(1, files_changed=files))
        assert store.load_step(1).status == "awaiting-approval"
        out = _red(plugin)
        assert out is not None
        if i < rounds:  # back to implementation, with the findings in the next brief
            assert f"review round {i + 1} of {rounds}" in out["systemMessage"]
            assert store.load_step(1).status == "in-progress"
            from maker.executor.launch.brief import build_brief

            assert "RED: f4.py drops the error." in build_brief(store, None, 1)
    assert store.load_step(1).status == "awaiting-approval"  # past the bound: a person
    assert "awaits a person's decision" in out["systemMessage"]
    assert "ask" in outcome(store, 1)

    reviewer = FakeReviewer(*["changes-needed"] * (rounds + 1))
    model = ScriptedModel([handoff(1, files_changed=files)] * (rounds + 1))
    result = run(Orchestrator(engine_store, parts(model, reviewer=reviewer)))
    assert result.exit_code == EXIT_APPROVAL, result.message
    assert "awaits a person's decision" in result.message
    assert len(model.prompts) == len(reviewer.prompts) == rounds + 1
    if rounds:
        assert "The independent reviewer's findings" in model.prompts[-1][1]
    for kept in stores:
        step = kept.load_step(1)
        assert step.status == "awaiting-approval" and step.meta.get("review_rounds", 0) == rounds
        assert approve_step(kept, 1, "user").status == "complete"


def test_the_reviewers_verdict_tells_the_main_agent_to_launch_the_executor_again(
        project: Path) -> None:
    from maker.executor.verdicts.verdict import reviewer_verdict
    from maker.hooks.records import read_record

    store = write(project, [make_step(1, -1)], policy="never")
    start_step(store, 1, session_id="sess-1")
    executor_returns(project, handoff(1, files_changed=[f"f{i}" for i in range(5)]))
    data = subagent_input(project, REVIEWER, "RED: wrong\nVERDICT: changes-needed")
    fire("subagent-stop", data)
    said = reviewer_verdict(store, read_record(data["agent_id"]))
    assert "RED findings: step 1 was sent back to implementation" in said
    assert "launch the maker:step-executor subagent" in said


def test_a_late_reviewer_notification_does_not_launch_a_second_executor(
        project: Path) -> None:
    """The Stop hook may ask for the next executor before the reviewer's notification
    arrives: its verdict then says one runs already, or what became of it."""
    from maker.executor.verdicts.verdict import reviewer_verdict
    from maker.executor.votes.runs import launched_in_background, start_launch
    from maker.hooks.records import read_record

    store = write(project, [make_step(1, -1)], policy="never")
    start_step(store, 1, session_id="sess-1")
    files = [f"f{i}" for i in range(5)]
    executor_returns(project, handoff(1, files_changed=files))
    data = subagent_input(project, REVIEWER, "RED: wrong\nVERDICT: changes-needed")
    fire("subagent-stop", data)
    facts = read_record(data["agent_id"])
    assert "Next: launch the maker:step-executor" in reviewer_verdict(store, facts)

    assert start_launch(store, "toolu-2", "sess-1", "prompt-2") is None
    launched_in_background(store, "toolu-2", "agent-2")
    said = reviewer_verdict(store, facts)
    assert "was launched already and runs in the background: do not launch another" in said

    executor_returns(project, handoff(1, files_changed=files), agent_id="agent-2")
    said = reviewer_verdict(store, facts)
    assert "Its next attempt has returned since: awaiting-approval" in said
    assert "launch maker:reviewer" in said
