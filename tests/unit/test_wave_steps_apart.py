"""Steps run side by side stay apart: a step's executor, in its worktree, cannot write
the main checkout through a symlink, remove or repoint another step's worktree, or land
another step; a folder replaced by a file (and the reverse) lands, and a garbled landing
record is set aside or named."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.repos import sh, side_by_side, write_in_worktree
from maker.errors import MakerError
from maker.executor.parallel.land import LANDING, land, recover
from maker.executor.parallel.worktree_step import start_in_worktree
from maker.store.workspace import worktree_of
from maker.tools.guards.guard import bash_refusal, executor_refusal


def _wave(project: Path) -> tuple[Path, Path, Path]:
    """Steps 1 and 2 running side by side; returns (plans root, worktree 1, worktree 2)."""
    store = side_by_side(project)
    t1 = worktree_of(store, start_in_worktree(store, 1, "s"))
    t2 = worktree_of(store, start_in_worktree(store, 2, "s"))
    assert t1 is not None and t2 is not None
    return store.root, t1, t2


def test_a_symlink_in_the_worktree_does_not_let_bash_write_the_main_checkout(
        project: Path) -> None:
    """A link made in one call (its target checked from the wrong directory), then a
    bare name in the next: the write lands in the main checkout's README."""
    plans, t1, _ = _wave(project)
    (project / "README.md").write_text("the person's\n")
    (t1 / "sub").mkdir()
    # From the worktree's root this target is outside the project, so it passes...
    assert bash_refusal("ln -s ../../../../../README.md sub/r", cwd=t1, plans_root=plans,
                        workspace=t1, data_dirs=(), home=project.parent) is not None
    # ...and once the link exists, a bare name writes through it.
    os.symlink("../../../../../README.md", t1 / "sub" / "r")
    assert (t1 / "sub" / "r").resolve() == (project / "README.md").resolve()
    assert bash_refusal("echo pwned > r", cwd=t1 / "sub", plans_root=plans, workspace=t1,
                        data_dirs=(), home=project.parent) is not None
    assert bash_refusal("cp ../a/x.txt r", cwd=t1 / "sub", plans_root=plans,
                        workspace=t1, data_dirs=(), home=project.parent) is not None


def test_an_executor_cannot_remove_the_other_steps_worktree(project: Path) -> None:
    """git names a worktree by the last part of its path: from step 1's worktree,
    `git worktree remove --force step-2-…` deletes step 2's work. The guard refuses
    `git worktree`, but read the subcommand as the first word not starting with `-`:
    `git -C . worktree …` (and `git -C . reset --hard`, `git -c a=b stash`) got by."""
    plans, t1, t2 = _wave(project)
    for command in (f"git worktree remove --force {t2.name}",
                    f"git -C . worktree remove --force {t2.name}",
                    f"git -c x.y=z worktree move {t2.name} gone",
                    "git -C . reset --hard", "git -c a.b=c stash"):
        assert bash_refusal(command, cwd=t1, plans_root=plans, workspace=t1, data_dirs=(),
                            home=project.parent) is not None, command


def test_an_executor_cannot_repoint_its_worktrees_git_file(project: Path) -> None:
    """The worktree's `.git` file names the git dir its commands change: pointed at the
    main repository, `git add`/`git commit` there rewrite the main checkout's index and
    branch."""
    plans, t1, _ = _wave(project)
    line = f"gitdir: {project / '.git'}"
    assert bash_refusal(f"printf '{line}' > .git", cwd=t1, plans_root=plans, workspace=t1,
                        data_dirs=(), home=project.parent) is not None
    assert executor_refusal("Write", {"file_path": str(t1 / ".git"), "content": line},
                            cwd=t1, plans_root=plans, workspace=t1, data_dirs=(),
                            home=project.parent) is not None


def test_an_executor_cannot_land_the_other_step(project: Path) -> None:
    """`maker land 2` from step 1's executor lands step 2's half-done work and removes
    the worktree step 2's executor is still working in (after which step 2 has no
    worktree, and its guard no longer keeps it out of the main checkout)."""
    from types import SimpleNamespace

    from maker.tools.guards.executor_rules import executor_decision

    plans, t1, _ = _wave(project)
    tools = SimpleNamespace(step=1, tools=["Bash"], writes=None)
    assert executor_decision(tools, "Bash", {"command": "maker land 2"}, cwd=t1,
                             plans_root=plans, workspace=t1, data_dirs=(),
                             home=project.parent) is not None
    assert executor_decision(tools, "Bash", {"command": "maker land 1"}, cwd=t1,
                             plans_root=plans, workspace=t1, data_dirs=(),
                             home=project.parent) is None


def test_a_folder_replaced_by_a_file_lands(project: Path) -> None:
    """The step turns folder `a/` into a file `a` (nothing else touched `a/`)."""
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    sh(tree, "rm -r a && printf 'now a file\\n' > a")
    landing = land(store, 1)
    assert landing.kind == "landed", landing.reason
    assert (project / "a").read_text() == "now a file\n"


def test_a_file_replaced_by_a_folder_lands_and_a_failed_check_puts_the_folder_back(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    sh(tree, "rm -r a && printf 'now a file\\n' > a")
    monkeypatch.setenv("TEST_CMD", "false")  # the merged tree's check fails: undone
    assert land(store, 1).kind == "failed"
    assert (project / "a" / "x.txt").read_text() == "a\n"
    start_in_worktree(store, 2, "s")
    other = worktree_of(store, store.load_step(2))
    assert other is not None
    sh(other, "rm b/y.txt && mkdir -p b/y.txt && printf 'inside\\n' > b/y.txt/z")
    monkeypatch.setenv("TEST_CMD", "true")
    assert land(store, 2).kind == "landed"
    assert (project / "b" / "y.txt" / "z").read_text() == "inside\n"


def test_a_garbled_landing_record_is_set_aside_or_named(project: Path) -> None:
    """A landing.json whose step is not a number raised ValueError (a traceback from
    `maker land`, and every later landing stuck on it); one naming no step or trees git
    does not know raised a bare error that said nothing of the file to look at."""
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    write_in_worktree(store, 1, "a/x.txt", "one\n")
    for garbage in ({"step": "x", "base": "", "end": "", "files": []},
                    {"step": 1, "base": "", "end": "", "files": "a/x.txt"}):
        (store.root / LANDING).write_text(json.dumps(garbage))
        recover(store)  # (unreadable: nothing to put back from it)
        assert not (store.root / LANDING).exists()
    for garbage in ({"step": 99, "base": "", "end": "", "files": []},
                    {"step": 1, "base": "nope", "end": "nope", "files": ["a/x.txt"]}):
        (store.root / LANDING).write_text(json.dumps(garbage))
        with pytest.raises(MakerError, match="landing.json"):
            land(store, 1)
        (store.root / LANDING).unlink()
    assert land(store, 1).kind == "landed"


def test_git_names_a_worktree_by_its_last_part(project: Path) -> None:
    """(The premise of the worktree-removal test, checked against the real git.)"""
    _, t1, t2 = _wave(project)
    subprocess.run(["git", "worktree", "remove", "--force", t2.name], cwd=t1, check=True)
    assert not t2.exists()
