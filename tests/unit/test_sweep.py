"""The edge-case sweep (seed 004: edge_case_sweep; docs/architecture.md#the-seeds): what a
complete handoff found for later
steps is written by maker's code into their "Edge cases" section and nowhere else; a change
of scope is only proposed, and a person accepts or drops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.hooks import fire
from harness.step_plans import handoff, linear
from maker.cli.main import cli
from maker.errors import HandoffRejectedError, StepError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.brief import build_brief
from maker.executor.protocol.sweep import decide_proposal, open_proposals
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore


@pytest.fixture()
def project(plugin_project: Path) -> Path:
    return plugin_project


def _swept(**fields: object) -> str:
    data = yaml.safe_load(handoff(1))
    data.update(fields)
    return yaml.safe_dump(data, sort_keys=False)


def test_edge_cases_go_into_the_later_steps_section_only(project: Path) -> None:
    store = linear(project, 3)
    path = store.step_path(3)
    # A person's hand edit of step 3's task, before: it must survive untouched.
    path.write_text(path.read_text().replace("## Task\n\n", "## Task\n\nMind the cache. "))
    start_step(store, 1)
    accept_handoff(store, _swept(edge_cases=[{"step": 3, "note": "an empty list must "
                                              "not crash the export"}]))
    text = path.read_text()
    assert "## Edge cases\n\n- (from step 1) an empty list must not crash the export" in text
    assert "Mind the cache." in text
    record = store.load_step(3)
    assert record.spec.task_description.startswith("Mind the cache.")  # the task is intact
    assert "an empty list must not crash the export" in build_brief(store, None, 3)
    assert "step 3: an empty list must not crash the export" in \
        store.handoff_path(1).read_text()


def test_the_same_edge_case_is_written_once(project: Path) -> None:
    store = linear(project, 3)
    start_step(store, 1)
    case = [{"step": 3, "note": "x"}, {"step": 3, "note": "x"}]
    accept_handoff(store, _swept(edge_cases=case))
    assert store.load_step(3).edge_cases.count("(from step 1) x") == 1


@pytest.mark.parametrize(("cases", "words"), [
    ([{"step": 1, "note": "x"}], "is this step"),
    ([{"step": 9, "note": "x"}], "is not in the plan"),
    ([{"step": 3}], "must be a mapping with `step`"),
    ("step 3: x", "must be a list"),
])
def test_an_edge_case_for_no_later_step_is_refused(project: Path, cases: object,
                                                   words: str) -> None:
    store = linear(project, 3)
    start_step(store, 1)
    with pytest.raises(HandoffRejectedError, match=words):
        accept_handoff(store, _swept(edge_cases=cases))
    assert store.load_step(3).edge_cases == ""


def test_a_proposal_changes_nothing_until_a_person_accepts_it(project: Path) -> None:
    store = linear(project, 3)
    start_step(store, 1)
    before = store.step_path(3).read_text()
    accept_handoff(store, _swept(proposals=["Paginate /users: step 3 assumes one page"]))
    assert store.step_path(3).read_text() == before
    (proposal,) = open_proposals(store)
    assert proposal["id"] == 1 and proposal["from_step"] == 1
    status = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)]).output
    assert "Proposal 1 (from step 1), yours to decide: Paginate /users" in status

    out = fire("user-prompt-submit", {
        "session_id": "sess-1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
        "prompt": "/maker:proposal accept 1", "prompt_id": "p-1"})
    assert "the user accepted proposal 1" in json.dumps(out)
    assert open_proposals(store) == []
    assert "Scope change accepted by user (typed /maker:proposal)" in \
        store.notes_path.read_text()
    assert "Paginate /users" in build_brief(store, None, 3)  # (NOTES reach later briefs)
    with pytest.raises(StepError, match="already accepted"):
        decide_proposal(store, 1, False, "someone")


def test_a_dropped_proposal_leaves_no_trace_in_the_notes(project: Path) -> None:
    store = linear(project, 3)
    start_step(store, 1)
    accept_handoff(store, _swept(proposals=["Rewrite it in Rust"]))
    assert decide_proposal(store, 1, False, "person (terminal)")["status"] == "dropped"
    assert "Rust" not in (store.notes_path.read_text() if store.notes_path.exists() else "")


def test_the_executor_cannot_decide_a_proposal(project: Path) -> None:
    store: PlanStore = linear(project, 3)
    start_step(store, 1, session_id="sess-1")
    out = fire("pre-tool-use", {
        "session_id": "sess-1", "cwd": str(project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "maker proposal accept 1"},
        "tool_use_id": "t1", "agent_id": "a1", "agent_type": "maker:step-executor"})
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_unreadable_proposals_file_is_set_aside_not_lost(project: Path) -> None:
    """QA: a cut or hand-broken proposals.json was silently overwritten."""
    store = linear(project, 3)
    path = store.state_dir / "proposals.json"
    path.write_text('[{"id": 1, "text": "keep me", "status": "open"')
    start_step(store, 1)
    accept_handoff(store, _swept(proposals=["new"]))
    assert (store.state_dir / "proposals.json.unreadable").read_text().startswith(
        '[{"id": 1, "text": "keep me"')
    assert [p["text"] for p in open_proposals(store)] == ["new"]


def test_odd_ids_in_a_hand_edited_file_give_no_traceback(project: Path) -> None:
    store = linear(project, 3)
    (store.state_dir / "proposals.json").write_text('[{"id": "x", "status": "open"}]')
    start_step(store, 1)
    accept_handoff(store, _swept(proposals=["new"]))
    status = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert status.exit_code == 0, status.output
    assert "Proposal 1 (from step 1), yours to decide: new" in status.output


def test_open_proposals_are_bounded(project: Path) -> None:
    """QA: proposals.json grew without bound until every handoff failed."""
    from maker.core.models import Handoff
    from maker.executor.protocol.sweep import apply_sweep

    store = linear(project, 3)
    plan = store.load()
    for k in range(6):
        texts = [f"p{k}-{i} " + "x" * 900 for i in range(50)]
        apply_sweep(store, plan, 1, Handoff(step=1, status="complete", output={},
                                            proposals=texts))
    assert len(open_proposals(store)) == 200
    assert (store.state_dir / "proposals.json").stat().st_size < 2**20
