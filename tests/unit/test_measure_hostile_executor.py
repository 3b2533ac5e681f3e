"""The measured files against a hostile executor: what it may do
in the project must neither hide a change from maker's measure nor let a large step be
approved by the policy unreviewed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.hooks import fire, tool_input
from harness.repos import edit, git_init
from harness.step_plans import WRITER, handoff, write
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.protocol.orient import record_orient
from maker.executor.rules.step_rules import crossed_boundaries
from maker.executor.state.lifecycle import start_step
from maker.handoff.measured import MEASURE_KEY
from maker.store.plan_store import PlanStore

NAMES = [f"src/f{i}.py" for i in range(6)]


def _sh(project: Path, cmd: str) -> None:
    subprocess.run(cmd, shell=True, cwd=project, check=True, capture_output=True)


def _started(project: Path) -> PlanStore:
    """A git project of six committed files, a one-step plan under `auto`, started."""
    git_init(project)
    edit(project, *NAMES)
    _sh(project, "git add -A && git -c user.email=a@b -c user.name=a commit -qm base")
    store = write(project, [WRITER], policy="auto")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")  # (seed 004, docs/architecture.md#the-seeds: before any edit)
    assert store.load_step(1).meta.get(MEASURE_KEY)
    return store


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_index_bits_do_not_hide_edits(project: Path, flag: str) -> None:
    store = _started(project)
    _sh(project, f"git update-index {flag} " + " ".join(NAMES))
    edit(project, *NAMES)
    accept_handoff(store, handoff(1, files_changed=NAMES))
    assert sorted(store.read_handoff(1)["files_measured"]) == NAMES
    assert store.load_step(1).status == "awaiting-approval"  # 6 files: reviewed first


def test_a_user_wide_ignore_file_does_not_hide_new_files(
        project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config/git").mkdir(parents=True)
    (home / ".config/git/ignore").write_text("src/new/\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    store = _started(project)
    new = [f"src/new/n{i}.py" for i in range(6)]
    edit(project, *new)
    accept_handoff(store, handoff(1, files_changed=new))
    assert sorted(store.read_handoff(1)["files_measured"]) == new


def test_an_end_that_cannot_be_measured_refuses_complete_and_a_blocked_one_goes_to_a_person(
        project: Path) -> None:
    """A claim maker cannot check is not taken as done: breaking the measure (the
    repository made unreadable to git) must not let phantom files through."""
    store = _started(project)
    edit(project, *NAMES)
    # a nested repository git cannot read (its .git leads nowhere): not measured
    _sh(project, "mkdir vendor && echo 'gitdir: /nowhere' > vendor/.git")
    with pytest.raises(HandoffRejectedError, match="cannot measure its end"):
        accept_handoff(store, handoff(1, files_changed=["README.md"]))
    accept_handoff(store, handoff(1, status="blocked", blockers=["vendor/ broke git"],
                                  files_changed=["README.md"]))
    record = store.load_step(1)
    assert record.status == "blocked" and "approved_by" not in record.meta


def test_a_changed_ignore_rule_is_reviewed(project: Path) -> None:
    store = _started(project)
    edit(project, *[f"gen/n{i}.py" for i in range(6)])
    with open(project / ".gitignore", "a") as f:
        f.write("gen/\n")
    accept_handoff(store, handoff(1, files_changed=[".gitignore"]))
    assert store.load_step(1).status == "awaiting-approval"  # not approved by the policy


def test_the_executor_cannot_write_gits_own_files(project: Path) -> None:
    store = _started(project)
    from maker.executor.protocol.orient import record_orient

    record_orient(store, 1, "none")
    for call in (tool_input(project, "Write", file_path=str(project / ".git/HEAD"),
                            content="x"),
                 tool_input(project, "Bash", command="echo x > .git/HEAD")):
        out = fire("pre-tool-use", call)
        assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_repeated_double_stars_match_fast(project: Path) -> None:
    import time

    path = "/".join(["a"] * 40)
    began = time.monotonic()
    assert crossed_boundaries([path], ["**/" * 12 + "b"]) == []
    assert time.monotonic() - began < 1.0
    assert crossed_boundaries(["src/api/x/y.py"], ["**/**/api/**"]) == ["**/**/api/**"]


def test_two_verifications_at_once_lose_no_failure(project: Path) -> None:
    """QA: concurrent `maker verify --step N` runs lost fix-count increments."""
    import sys

    from maker.verify.runner import recorded_evidence

    store = _started(project)
    env = {**os.environ, "TEST_CMD": "sleep 0.5; exit 1"}
    runs = [subprocess.Popen([sys.executable, "-m", "maker", "verify", "--step", "1",
                              "--plans-dir", str(store.root)], cwd=project, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(3)]
    for run in runs:
        run.wait(timeout=60)
    record = recorded_evidence(store, 1)
    assert record is not None and record.failed_runs == 3
