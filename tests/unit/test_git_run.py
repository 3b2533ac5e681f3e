"""Every git maker runs goes through one runner (maker.tools.git.git_run): a repository whose
config defines a filter that ``-c`` cannot switch off (its name holds ``=``), named by
``.gitattributes`` for every file, gets its programs run by no caller, and each caller
says its own outcome: the measure "not measured", a worktree an error naming the filter
and the fix, a landing the same, kept work the folder kept, a reader ``Refused``."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.crash_wave_states import wave_ready, wave_working
from harness.step_plans import tool_step, write
from maker.errors import GitRefusedError, WorktreeError
from maker.executor.parallel.land import land
from maker.executor.parallel.worktree_step import start_in_worktree
from maker.executor.state.kept_work import kept
from maker.executor.state.lifecycle import start_step
from maker.handoff.measured import MEASURE_KEY, measure_start, measured_changes
from maker.store.workspace import worktree_of
from maker.tools.command.shell import Refused
from maker.tools.git import worktrees
from maker.tools.git.git_programs import program_free
from maker.tools.git.git_run import Git, filter_names
from maker.tools.git.git_tree import changed_paths, snapshot_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SRC = Path(__file__).resolve().parents[2] / "src" / "maker"
NAME = "a=b"
PROGRAM = "#!/bin/sh\necho \"$0 $*\" >> \"{ran}\"\ncat\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def _trap(repo: Path, *also: Path) -> Path:
    """``repo``'s config defines filter ``a=b`` (clean, smudge, process: a program that
    notes it ran), which ``.gitattributes`` names for every file in ``repo`` and
    ``also`` (a worktree); returns the file the program writes."""
    base = Path(_git(repo, "rev-parse", "--git-common-dir").strip())
    base = base if base.is_absolute() else repo / base
    ran = base / "ran.txt"
    trap = base / "trap.sh"
    trap.write_text(PROGRAM.format(ran=ran))
    trap.chmod(0o755)
    for key in ("clean", "smudge", "process"):
        _git(repo, "config", f"filter.{NAME}.{key}", str(trap))
    for where in (repo, *also):
        (where / ".gitattributes").write_text(f"* filter={NAME}\n")
    return ran


def _project(project: Path) -> Path:
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "a@b")
    _git(project, "config", "user.name", "a")
    (project / "a.txt").write_text("a\n")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    return project


def test_the_trap_is_live_git_as_typed_runs_the_filter(project: Path) -> None:
    ran = _trap(_project(project))
    (project / "a.txt").write_text("changed\n")
    _git(project, "add", "-A")
    assert ran.exists()


def test_the_runner_refuses_naming_the_filter_and_runs_nothing(project: Path) -> None:
    ran = _trap(_project(project))
    assert NAME in filter_names(shutil.which("git") or "git", project)
    with pytest.raises(GitRefusedError) as refused:
        Git(project)
    assert refused.value.name == NAME and refused.value.repository == project
    assert NAME in str(refused.value)
    assert not ran.exists()


def test_the_measure_says_not_measured(project: Path) -> None:
    store = write(_project(project), [tool_step(0, ["Read", "Edit"])])
    ran = _trap(project)
    with pytest.raises(GitRefusedError):
        snapshot_tree(project)
    head = _git(project, "rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(GitRefusedError):
        changed_paths(project, head, head)
    assert measure_start(store, 0) is None
    start_step(store, 0, session_id="s")
    record = store.load_step(0)
    # the step runs, its files not measured
    assert record.status == "in-progress" and not record.meta.get(MEASURE_KEY)
    record.meta[MEASURE_KEY] = head  # (measured at its start, before the filter came)
    (project / "a.txt").write_text("changed\n")
    assert measured_changes(store, record) is None
    assert not ran.exists()


def test_a_worktree_is_a_clear_error_naming_the_filter_and_the_fix(project: Path) -> None:
    store = wave_ready(project)
    ran = _trap(project)
    with pytest.raises(WorktreeError, match=r"'a=b'.*Rename that filter"):
        start_in_worktree(store, 1, "s")
    assert store.load_step(1).status == "pending"
    assert not (store.root / worktrees.WORKTREES).exists() or not any(
        p.is_dir() for p in (store.root / worktrees.WORKTREES).iterdir())
    blob_id = _git(project, "rev-parse", "HEAD:a/x.txt").strip()
    with pytest.raises(WorktreeError, match="'a=b'"):
        worktrees.blob(project, blob_id, "a/x.txt")  # (a checkout's bytes: smudge)
    assert not ran.exists()


def test_a_landing_is_a_clear_error_and_writes_nothing(project: Path) -> None:
    store = wave_working(project)
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    ran = _trap(project, tree)
    with pytest.raises(WorktreeError, match=r"'a=b'.*Rename that filter"):
        land(store, 1)
    assert (project / "a" / "x.txt").read_text() == "a\n"
    assert not ran.exists()


def test_kept_work_keeps_the_folder(project: Path) -> None:
    store = wave_working(project)
    record = store.load_step(1)
    tree = worktree_of(store, record)
    assert tree is not None
    ran = _trap(project, tree)
    assert kept(store, record, tree) is None  # (the caller keeps the folder)
    assert (tree / "a" / "x.txt").read_text() == "one\n"
    assert not ran.exists()


def test_a_readers_git_is_refused_naming_the_filter(project: Path) -> None:
    ran = _trap(_project(project))
    for command in ("git diff", "git -C . status", "git log -p | head -3"):
        with pytest.raises(Refused, match="'a=b'"):
            program_free(command, project)
    assert not ran.exists()


def test_git_runs_in_the_folders_repository_whatever_maker_inherits(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``GIT_DIR`` or ``GIT_INDEX_FILE`` in maker's own environment names no other
    repository or index for maker's git: the folder it runs in does."""
    _project(project)
    tree = _git(project, "rev-parse", "HEAD^{tree}").strip()
    other = tmp_path / "other"
    other.mkdir()
    _git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    done = Git(project).run(["rev-parse", "--absolute-git-dir"], timeout=10)
    assert done.stdout.decode().strip() == str((project / ".git").resolve())
    assert snapshot_tree(project) == tree


def _starts_processes(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) and (
        any(alias.name == "subprocess" for alias in node.names)
        if isinstance(node, ast.Import) else node.module == "subprocess")
        for node in ast.walk(tree))


def _nested(project: Path) -> Path:
    """``project`` with a nested repository added as a gitlink, whose own config names a
    clean filter (a program that notes it ran) for its file, left stat-dirty so that a
    status must hash it; returns the file the program writes."""
    _project(project)
    inner = project / "inner"
    inner.mkdir()
    _project(inner)
    ran = project / "ran.txt"
    trap = project / "trap.sh"
    trap.write_text(PROGRAM.format(ran=ran))
    trap.chmod(0o755)
    (inner / ".gitattributes").write_text("a.txt filter=nested\n")
    _git(inner, "add", "-A")
    _git(inner, "commit", "-qm", "attributes")
    _git(inner, "config", "filter.nested.clean", str(trap))
    _git(project, "add", "inner")
    _git(project, "commit", "-qm", "the nested repository")
    ran.unlink(missing_ok=True)
    os.utime(inner / "a.txt", (1, 1))  # (stat-dirty: its content must be hashed)
    return ran


def test_a_nested_repositorys_filter_runs_under_a_plain_git_status(project: Path) -> None:
    ran = _nested(project)
    _git(project, "-c", "core.fsmonitor=false", "status", "--short")  # (maker's, before)
    assert ran.exists()


@pytest.mark.parametrize("how", ["runner", "reader"])
def test_maker_enters_no_nested_repository(project: Path, how: str) -> None:
    """A gitlinked repository's own config names programs the outer repository's filter
    list does not: maker's git (and the readers' git it vouches for) never enters it."""
    ran = _nested(project)
    if how == "runner":
        done = Git(project).run(["status", "--short"], timeout=30)
        assert done.returncode == 0
        Git(project).run(["diff", "--stat"], timeout=30)
    else:
        for typed in ("git status --short", "git diff --stat"):
            command = program_free(typed, project)
            assert command is not None
            subprocess.run(command, shell=True, cwd=project, capture_output=True,
                           check=True, timeout=30)
    assert not ran.exists()


def test_no_module_but_the_runner_runs_git() -> None:
    """The modules that start a process: git's runner, three that run no git (the
    OS boundary's probe, a verification command, a run's stretch started by maker's
    hook), and the box's undo, a script beside ``box_setup.py`` that can import nothing
    of maker's, which runs only git's index plumbing. A new one that runs git belongs in
    ``maker.tools.git.git_run``."""
    starting = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                      if _starts_processes(p))
    assert starting == ["hooks/wake.py", "tools/box/boundary.py", "tools/box/box_after.py",
                        "tools/git/git_run.py", "verify/check_run.py"]
    after = (SRC / "tools/box/box_after.py").read_text(encoding="utf-8")
    assert re.findall(r'\["(ls-files|update-index)"', after) == ["ls-files", "update-index"]
    for name in ("hooks/wake.py", "tools/box/boundary.py", "verify/check_run.py"):
        assert '"git"' not in (SRC / name).read_text(encoding="utf-8")
