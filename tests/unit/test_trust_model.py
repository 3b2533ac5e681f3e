"""Promises of the trust model that once did not hold, each now kept:

1. a journal left in ``plans/.maker/txn/`` acts only inside ``plans/``;
2. a policy file written by hand does not open the approval gate;
3. neither the main agent nor the executor writes ``plans/`` (or decides a step) with a
   command that does not name it: a copy, an archive, a glob, ``find -exec``, git;
4. a verification run of another project, copied in, is not evidence for this one.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harness.step_plans import handoff, linear
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.acceptance.approval import read_policy
from maker.executor.state.lifecycle import start_step
from maker.store.journal import TXN_DIR
from maker.store.plan_store import PlanStore
from maker.tools.guards.decision_guard import decision_refusal
from maker.tools.guards.guard import bash_refusal
from maker.verify.runner import evidence_path, run_verification


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlanStore:
    for var in ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"):
        monkeypatch.setenv(var, "")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return linear(project, 2, policy="never")


# -- 1. crash consistency --------------------------------------------------------------

def test_a_journal_that_names_paths_outside_plans_is_not_followed(
        store: PlanStore, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    lone = tmp_path / "lone.txt"
    lone.write_text("precious\n")
    txn = store.root / TXN_DIR
    txn.mkdir(parents=True)
    (txn / "journal.json").write_text(json.dumps([
        {"kind": "mkdir", "path": "../../victim"},
        {"kind": "file", "path": str(lone), "backup": None}]))
    try:
        store.load()  # any reader settles first
    except Exception:  # refusing the journal is fine; deleting is not
        pass
    assert (victim / "keep.txt").exists() and lone.exists()


# -- 2. the approval policy ------------------------------------------------------------

def test_a_policy_file_written_by_hand_does_not_open_the_gate(store: PlanStore) -> None:
    store.policy_path.write_text(json.dumps({"name": "auto", "set_by": "user"}))
    assert read_policy(store).name == "never"


# -- 3. the guards: commands that write plans/ without naming it, each refused -----------

# Each command once got through; the comment says how it hides what it writes.
MAIN_AGENT_REFUSED = [
    "cp -r /tmp/stage/. .",                         # a staged plans/.maker/policy.json
    "cp /tmp/x/p.json pl*/.mak*/",                  # plans/ named only by a glob
    "sed -i -f /tmp/edit.sed */steps/00-*.md",      # edits step files through a glob
    "cd pl*ns && sed -i s/a/b/ steps/00-a.md",      # cd through a glob
    "tar -xf /tmp/p.tar",                           # an archive holding plans/...
    "a=appr; maker step ${a}ove 0",                 # the verb hidden in a variable
    "maker proposal accept 1",                      # a change of scope is the user's call
    "env -i maker proposal drop 1",
    # (QA) a command line in one word, its verb split by quotes the inner shell undoes
    "setsid -f env -i script -qfc \"maker step appr''ove 1 --plans-dir plans\" /tmp/ts",
    "bash -c 'maker step rej\"\"ect 1'",
]


@pytest.mark.parametrize("command", MAIN_AGENT_REFUSED)
def test_the_main_agent_cannot_write_plans_or_decide_without_naming_them(
        command: str, tmp_path: Path) -> None:
    (tmp_path / "plans/steps").mkdir(parents=True)
    assert decision_refusal(command, cwd=tmp_path, plans_root=tmp_path / "plans") is not None


EXECUTOR_REFUSED = [
    "cp -r /tmp/stage/. .",
    "cp -r /tmp/stage/plans .",
    "tar -xf /tmp/p.tar",
    "find . -name '*.md' -exec sed -i s/pending/complete/ {} +",
    "mkdir -p x && ln -s ../plans x/p && cp /tmp/policy.json x/p/.maker/",
    "git stash -u",
    "cd .. && cp -r /tmp/stage/. project",
]


@pytest.mark.parametrize("command", EXECUTOR_REFUSED)
def test_the_executor_cannot_write_plans_without_naming_them(command: str,
                                                              tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "plans/steps").mkdir(parents=True)
    assert bash_refusal(command, cwd=project, plans_root=project / "plans",
                        data_dirs=(tmp_path / "data",), home=tmp_path) is not None


# -- 4. a verification run replayed ------------------------------------------------------

def test_a_verification_run_of_another_project_is_not_evidence(
        store: PlanStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "true")
    start_step(store, 1)
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = linear(other, 2, policy="never")
    run_verification(elsewhere, step=1)  # passes there (on whatever tree that is)
    target = evidence_path(store, 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(evidence_path(elsewhere, 1), target)
    
    with pytest.raises(HandoffRejectedError):
        accept_handoff(store, handoff(1))


def test_without_the_copied_run_the_same_handoff_is_refused_for_want_of_a_run(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check on the test above: with no run at all the handoff is refused too, so
    what that test shows is that the copied run does not count."""
    monkeypatch.setenv("TEST_CMD", "true")
    start_step(store, 1)
    
    with pytest.raises(HandoffRejectedError, match="no verification run"):
        accept_handoff(store, handoff(1))
    assert not os.path.exists(evidence_path(store, 1))
