"""The guard around a step run in its own worktree:

1. ``plans/`` inside the worktree (the project's tracked plan folder, or a new one) is
   not the step's to write: such files would land in the real plan.
2. git that moves the person's branches or shared state from the worktree (it shares
   refs, objects and config with the main checkout: ``git update-ref``, ``tag -f``,
   ``gc --prune=now``, ``remote add``…) is refused, as is git that runs commands maker
   never read (``-c alias.x='!…'``, ``submodule foreach``).
3. An option with its value glued on (``sort -o/abs/x``, ``cp -t/abs/d``) has its path
   checked, as the option with its value apart does.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maker.tools.guards.git_rules import git_refusal
from maker.tools.guards.guard import bash_refusal, executor_refusal

PLANS = "maker's own record of the plan"
WORKTREE = "in its own worktree"
PERSONS = "are the person's, not this step's"
BESIDE = "shares its branches, tags, remotes"
UNCLEAR = "maker cannot check this command"
SETTING = "may name a program git runs"
ANY = "maker"


class Wave(NamedTuple):
    project: Path
    plans: Path
    tree: Path  # a worktree of a commit that tracks plans/PLAN.md
    bare: Path  # a worktree of a commit without plans/


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", *args],
                          cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _build(root: Path) -> Wave:
    """A project on `main` with worktrees where maker puts them (under plans/.maker)."""
    project = root / "project"
    for folder in ("a", "b", "plans/.maker/worktrees"):
        (project / folder).mkdir(parents=True)
    (project / "a" / "x.txt").write_text("a\n")
    (project / ".gitignore").write_text("plans/.maker/\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    (project / "plans" / "PLAN.md").write_text("# plan\n")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "the plan, tracked")
    tree = project / "plans/.maker/worktrees/step-1-abc"
    bare = project / "plans/.maker/worktrees/step-2-def"
    _git(project, "worktree", "add", "-q", "--detach", str(tree), "HEAD")
    _git(project, "worktree", "add", "-q", "--detach", str(bare), "HEAD~1")
    return Wave(project, project / "plans", tree, bare)


@pytest.fixture(scope="module")
def wave(tmp_path_factory: pytest.TempPathFactory) -> Wave:
    return _build(tmp_path_factory.mktemp("wave"))


def _bash(wave: Wave, command: str, *, serial: bool = False,
          tree: Path | None = None) -> str | None:
    """Why the guard refuses ``command`` run in ``tree`` (the worktree) by its step's
    executor, or (``serial``) run at the project's root by a step on its own."""
    tree = tree or wave.tree
    command = command.replace("{P}", str(wave.project)).replace("{W}", str(tree))
    return bash_refusal(command, cwd=wave.project if serial else tree,
                        plans_root=wave.plans, workspace=None if serial else tree,
                        data_dirs=(), home=wave.project.parent)


def _refused(why: str | None, reason: str, command: str) -> None:
    assert why is not None and reason in why, (command, why)
    assert "Traceback" not in why


# -- 1. plans/ inside the worktree -------------------------------------------------------


@pytest.mark.parametrize(("command", "reason"), [
    ("mkdir -p plans/steps", PLANS),
    ("echo x > plans/NOTES.md", PLANS),
    ("printf 'step: 9' > ./plans/steps/09-x.md", PLANS),
    ("cp a/x.txt plans/", PLANS),
    ("cd a && echo x > ../plans/NOTES.md", PLANS),
    ("cd plans", PLANS),
    ("sed -i s/plan/gone/ plans/PLAN.md", PLANS),
    ("ln -s a plans", PLANS),
    ("echo x > {W}/plans/NOTES.md", PLANS),
    ("rm -rf plans", PLANS),
    ("rm -rf pl*", UNCLEAR),  # (the tracked copy is there to match)
    ("echo x > pl?ns/NOTES.md", UNCLEAR),
    # The worktree itself holds its .git file, which ties it to its repository: without
    # it, git run in the worktree finds the main checkout's repository.
    ("rm -rf .", ANY),
    ("find . -delete", ANY),
    ("cp -r a/ .", ANY),
    ("rm -rf .g*", UNCLEAR),
])
def test_the_worktrees_plans_folder_is_not_the_steps(wave: Wave, command: str,
                                                     reason: str) -> None:
    _refused(_bash(wave, command), reason, command)


def test_a_new_plans_folder_in_a_worktree_without_one_is_refused_too(wave: Wave) -> None:
    for command in ("mkdir -p plans/steps", "echo x > plans/NOTES.md", "cd plans"):
        _refused(_bash(wave, command, tree=wave.bare), PLANS, command)
    # ...while a glob there cannot match a plans/ that is not there.
    assert _bash(wave, "ls *", tree=wave.bare) is None


@pytest.mark.parametrize(("tool", "path", "reason"), [
    ("Write", "{W}/plans/NOTES.md", PLANS),
    ("Write", "{W}/plans/steps/09-x.md", PLANS),
    ("Edit", "{W}/plans/PLAN.md", PLANS),
    ("MultiEdit", "plans/PLAN.md", PLANS),
    ("NotebookEdit", "{W}/plans/x.ipynb", PLANS),
    ("Write", "{W}/a/x.txt", None),
    ("Write", "{W}/plans.md", None),
    ("Write", "{W}/a/plans/x.md", None),  # (a plans/ of the step's own, deeper down)
    ("Read", "{W}/plans/PLAN.md", None),  # (reading by Read is the step's tool)
])
def test_file_tools_in_the_worktrees_plans_folder(wave: Wave, tool: str, path: str,
                                                  reason: str | None) -> None:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    why = executor_refusal(tool, {key: path.replace("{W}", str(wave.tree))}, cwd=wave.tree,
                           plans_root=wave.plans, workspace=wave.tree, data_dirs=(),
                           home=wave.project.parent)
    assert (why is None) if reason is None else (why is not None and reason in why), why


# -- 2. git beyond the step's files ------------------------------------------------------


_PERSONS_GIT = [
    "git update-ref refs/heads/main HEAD", "git -C . update-ref -d refs/heads/main",
    "git replace HEAD HEAD~1", "git tag -f v1", "git tag -d v1", "git tag -fa v1 -m x",
    "git gc --prune=now", "git gc", "git prune", "git repack -a -d", "git pack-refs --all",
    "git maintenance run", "git remote add x /tmp/x", "git remote set-url origin /x",
    "git remote remove origin", "git branch -f main HEAD", "git branch -D main",
    "git branch -m main old", "git branch -Dq main", "git branch --delete main",
    "git branch -u origin/main", "git branch --set-upstream-to=origin/main",
    "git symbolic-ref HEAD refs/heads/main", "git symbolic-ref -d HEAD",
    "git notes add -m x", "git notes remove HEAD", "git reflog expire --all",
    "git reflog delete HEAD@{0}", "git filter-branch --msg-filter cat HEAD",
    "git fetch . HEAD:main", "git fetch origin +main:main",
]
_RUNS_COMMANDS = [
    ("git -c 'alias.x=!maker step approve 0' x", SETTING),
    ("git -c core.pager='maker step approve 0' log", SETTING),
    ("git --config-env=core.editor=EDITOR commit", SETTING),
    ("git -c include.path=/tmp/evil status", SETTING),
    ("git submodule foreach 'maker step approve 0'", UNCLEAR),
    ("git bisect run maker step approve 0", UNCLEAR),
    ("git difftool -x 'maker step approve 0'", UNCLEAR),
    ("git grep -O'maker step approve 0' x", UNCLEAR),
    ("git fetch --upload-pack='maker step approve 0' origin", UNCLEAR),
]


@pytest.mark.parametrize("command", _PERSONS_GIT)
@pytest.mark.parametrize("serial", [False, True])
def test_git_that_changes_the_persons_refs_is_refused(wave: Wave, command: str,
                                                      serial: bool) -> None:
    _refused(_bash(wave, command, serial=serial), PERSONS, command)


@pytest.mark.parametrize(("command", "reason"), _RUNS_COMMANDS)
@pytest.mark.parametrize("serial", [False, True])
def test_git_that_runs_a_command_unread_is_refused(wave: Wave, command: str, reason: str,
                                                   serial: bool) -> None:
    _refused(_bash(wave, command, serial=serial), reason, command)


@pytest.mark.parametrize("command", [
    "git push", "git push origin HEAD:main", "git fetch", "git fetch origin",
    "git tag v1", "git tag -a v1 -m x", "git branch topic", "git branch -v topic",
    "git remote update", "git submodule update --init", "git -C . push",
])
def test_beside_others_git_may_not_touch_what_the_worktree_shares(wave: Wave,
                                                                 command: str) -> None:
    _refused(_bash(wave, command), BESIDE, command)
    assert _bash(wave, command, serial=True) is None, command  # (a step on its own may)


@pytest.mark.parametrize("command", [
    "git status", "git diff", "git diff --cached", "git add -A", "git add a/x.txt",
    'git commit -qm "the step"', "git commit -m clean", "git log --oneline -5",
    "git show HEAD", "git rev-parse HEAD", "git branch", "git branch -a",
    "git branch --list 'ma*'", "git branch --contains HEAD", "git branch -vv",
    "git tag", "git tag -l 'v*'", "git tag -n5", "git tag --contains HEAD",
    "git remote", "git remote -v", "git remote get-url origin", "git reflog",
    "git reflog show HEAD", "git notes list", "git notes show HEAD", "git replace -l",
    "git symbolic-ref -q HEAD", "git blame a/x.txt", "git cherry-pick HEAD~1",
    "git revert --no-edit HEAD", "git ls-files", "git grep -n x",
    "git -c user.name=me -c user.email=me@x commit -m x", "git -c color.ui=never diff",
    "git submodule status", "git bisect start HEAD HEAD~1",
])
def test_ordinary_git_work_still_runs(wave: Wave, command: str) -> None:
    assert _bash(wave, command) is None, command
    assert _bash(wave, command, serial=True) is None, command


def test_the_premises_against_the_real_git(tmp_path: Path) -> None:
    """From a worktree, plumbing moves the person's branch; a commit moves only the
    worktree's own HEAD."""
    wave = _build(tmp_path)
    main = _git(wave.project, "rev-parse", "main")
    _git(wave.bare, "update-ref", "refs/heads/main", "HEAD")
    assert _git(wave.project, "rev-parse", "main") != main
    _git(wave.project, "update-ref", "refs/heads/main", main)
    (wave.tree / "a" / "x.txt").write_text("the step's\n")
    _git(wave.tree, "commit", "-qam", "the step")
    assert _git(wave.project, "rev-parse", "main") == main
    assert _git(wave.tree, "rev-parse", "HEAD") != main


# -- 3. an option's value glued on --------------------------------------------------------


@pytest.mark.parametrize(("command", "reason", "serial"), [
    ("sort -o/{P}/a/x.txt a/x.txt", WORKTREE, False),
    ("sort -o {P}/a/x.txt a/x.txt", WORKTREE, False),
    ("sort --output={P}/a/x.txt a/x.txt", WORKTREE, False),
    ("cp -t/{P}/a a/x.txt", WORKTREE, False),
    ("cp -at{P}/a a/x.txt", WORKTREE, False),
    ("curl -o/{P}/a/x.txt http://x", WORKTREE, False),
    ("tar -xzf{P}/a/t.tgz", WORKTREE, False),
    ("sort -o/{P}/plans/.maker/policy.json /etc/hostname", PLANS, True),
    ("sort -oplans/.maker/policy.json /etc/hostname", PLANS, True),
    ("sort --output=x=/{P}/plans/y --output={P}/plans/PLAN.md a", PLANS, True),
    ("python -c \"import subprocess; subprocess.run(['sort', '-o{P}/plans/x'])\"", PLANS,
     True),
    # (each tail is a path to resolve: a word that would take too long is refused)
    ("sort -" + "b" * 33 + "oplans/x a", UNCLEAR, True),
    ("sort -o" + "/x" * 5000 + " a", UNCLEAR, False),
])
def test_a_glued_option_value_is_checked_as_a_path(wave: Wave, command: str, reason: str,
                                                   serial: bool) -> None:
    _refused(_bash(wave, command, serial=serial), reason, command)


@pytest.mark.parametrize("command", [
    "sort -o a/out.txt a/x.txt", "sort -oa/out.txt a/x.txt", "gcc -Wall -O2 -Ia -c a/x.c",
    "tar -xzf a/t.tgz -C a", "grep -rn x a", "cut -d, -f1 a/x.txt", "ls -la",
    "pytest -q -k 'not slow' --maxfail=1", "sort -" + "b" * 31 + "o a/out.txt a/x.txt",
    "curl -d'{\"text\": \"" + "y" * 20000 + "\"}' http://localhost/x",
])
def test_glued_options_that_stay_in_the_worktree_still_run(wave: Wave, command: str) -> None:
    assert _bash(wave, command) is None, command


# -- the worktree is the step's own, though it lies under plans/ ---------------------------


@pytest.mark.parametrize("command", [
    "cp a/x.txt a/y.txt", "mv a/x.txt a/z.txt", "cp -r a c", "cp -t a b/y.txt",
    "ln -s x.txt a/link", "tar xf t.tar -C a", "unzip -d a t.zip",
    "find a -name '*.pyc' -delete", "find a -type f -exec wc -l {} +", "rm -rf a",
])
def test_copies_and_moves_inside_the_worktree_run(wave: Wave, command: str) -> None:
    """(They were refused as writing "into a folder that holds plans/": the worktree is
    under plans/.maker/worktrees.)"""
    assert _bash(wave, command) is None, command


@pytest.mark.parametrize("command", [
    "tar xf t.tar", "find . -exec rm {} +", "cp -r a/ {W}", "mv b/.git .git",
])
def test_what_would_overwrite_the_worktrees_git_file_is_refused(wave: Wave,
                                                                command: str) -> None:
    _refused(_bash(wave, command), ANY, command)


@pytest.mark.parametrize(("command", "serial"), [
    # inline code naming the worktree's .git file (no `/` in the word)
    ("python3 -c \"open('.git','w').write('gitdir: x')\"", False),
    ("python3 -c \"import os;open('.git','w').write('gitdir: '+os.path.join('..','.git'))\"",
     False),
    # scripts that write the file they name: sed's `w`, awk's `>`, vim's `-c 'w'`
    ("sed -n 'w {P}/plans/PLAN.md' a/x.txt", False),
    ("sed -n 'w .git' a/x.txt", False),
    ("awk '{print > \"{P}/plans/PLAN.md\"}' a/x.txt", False),
    ("vim -es -c 'w! {P}/a/x.txt' -c q a/x.txt", False),
    ("sed -n 'w plans/PLAN.md' a/x.txt", True),
    ("awk '{print > \"plans/PLAN.md\"}' a/x.txt", True),
])
def test_scripts_and_inline_code_may_not_write_maker_or_the_git_file(
        wave: Wave, command: str, serial: bool) -> None:
    _refused(_bash(wave, command, serial=serial), ANY, command)


@pytest.mark.parametrize("command", [
    "sed -i 's/a/b/' a/x.txt", "sed -n '1,2p' a/x.txt", "awk '{print $1}' a/x.txt",
    "sed 's#/usr/lib#/opt#' a/x.txt > a/y.txt", "awk -F/ '{print $2}' a/x.txt",
    "python3 -c 'print(1)'",
])
def test_ordinary_scripts_still_run(wave: Wave, command: str) -> None:
    assert _bash(wave, command) is None, command
    assert _bash(wave, command, serial=True) is None, command


@pytest.mark.parametrize("command", [
    "GIT_EDITOR='maker step fail 1 --reason x' git commit",
    "GIT_PAGER='maker handoff accept 1' git log",
    "export GIT_EDITOR='maker step reset 1'; git commit",
    "env GIT_SEQUENCE_EDITOR='maker plan write' git rebase -i HEAD~1",
    "EDITOR='sh -c \"maker step approve 1\"' git commit",
    "GIT_SSH_COMMAND='cp x {P}/plans/PLAN.md' git fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
    "export GIT_CONFIG_PARAMETERS=\"'alias.x=!maker step approve 1'\"",
])
@pytest.mark.parametrize("serial", [False, True])
def test_a_program_named_in_a_variable_is_read_as_a_command(wave: Wave, command: str,
                                                             serial: bool) -> None:
    _refused(_bash(wave, command, serial=serial), ANY, command)


@pytest.mark.parametrize("command", [
    "EDITOR=vim git commit", "GIT_PAGER=cat git log", "PAGER='less -R' git diff",
    "export FOO=bar", "LANG=C sort a/x.txt", "GIT_SSH_COMMAND='ssh -i key' git status",
])
def test_ordinary_variables_still_run(wave: Wave, command: str) -> None:
    assert _bash(wave, command) is None, command
    assert _bash(wave, command, serial=True) is None, command


# -- odd input ----------------------------------------------------------------------------

_WORDS = st.sampled_from(["git", "-c", "-C", ".", "branch", "tag", "-d", "-f", "-n", "-l",
                          "--config-env", "--config-env=", "=", "notes", "remote", "add",
                          "fetch", "a:b", "submodule", "foreach", "replace", "-", "--"])


@settings(max_examples=300, deadline=None)
@given(command=st.text(max_size=80) | st.lists(_WORDS | st.text(max_size=6),
                                                max_size=8).map(" ".join))
def test_the_guard_never_raises_in_a_worktree(wave: Wave, command: str) -> None:
    why = _bash(wave, command)
    assert why is None or why.startswith("maker")


@settings(max_examples=500, deadline=None)
@given(args=st.lists(_WORDS | st.text(max_size=6), max_size=8), beside=st.booleans())
def test_git_rules_never_raise(args: list[str], beside: bool) -> None:
    why = git_refusal(args, beside=beside)
    assert why is None or why.startswith("maker")
