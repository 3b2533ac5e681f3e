"""The git worktrees maker owns for steps that run side by side.

A step's worktree is cut from a commit maker makes of the main checkout as it is (HEAD
plus every change in the working tree, the work already accepted and the person's own,
without the plans folder): never from a remote branch, so the step sees what a serial
run would have shown it. It is a detached checkout (no branch to leave behind) under
``plans/.maker/worktrees/``, a folder git is told to ignore, so the main checkout's
``git status`` and maker's own measures never see it.

Every git call goes through ``maker.tools.git.git_run`` (git by its absolute path, the
repository's programs switched off: no hook, no fsmonitor, no signature, every filter
emptied), as the measures do, and is bounded in time; a repository whose config
defines a filter maker cannot switch off gets no worktree, and a WorktreeError that
names the filter and how to fix it (:func:`refusal`). Callers serialise the calls that change the
repository's worktree list (the plan lock), so no two ``git worktree add`` race on
git's own lock files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from maker.errors import GitError, GitRefusedError, WorktreeError
from maker.tools.git.git_run import Git, find_git, said
from maker.tools.git.git_tree import changed_paths, snapshot_tree

__all__ = ["WORKTREES", "add_worktree", "base_commit", "blob", "changes",
           "is_worktree", "prune", "read_entries", "refusal", "remove_worktree", "snapshot"]

WORKTREES = os.path.join(".maker", "worktrees")  # under the plans folder
TIMEOUT_S = 60.0
_IDENTITY = {"GIT_AUTHOR_NAME": "maker", "GIT_AUTHOR_EMAIL": "maker@localhost",
             "GIT_COMMITTER_NAME": "maker", "GIT_COMMITTER_EMAIL": "maker@localhost"}
_MODES = ("100644", "100755", "120000")  # a regular file, an executable, a symlink


def refusal(refused: GitRefusedError) -> WorktreeError:
    """What a step run beside others is told when maker runs no git in its repository."""
    return WorktreeError(
        f"steps run side by side only where maker can switch off git's programs, and "
        f"git's config for {refused.repository} defines a filter named {refused.name!r} "
        "(`-c` cannot name a filter with `=` or a line break in its name), whose programs "
        "would run. Rename that filter where it is defined (`git config --show-origin "
        "--get-regexp '^filter[.]'` shows where), or run the steps one at a time "
        "(`parallel: 1` in plans/settings.yaml; `maker run` without --parallel)")


def _run(args: list[str], cwd: Path, *, data: bytes | None = None) -> bytes:
    try:
        find_git()
    except GitError:
        raise WorktreeError("steps run side by side only in a git repository, and maker "
                            "finds no git: install git, or run with --parallel 1") from None
    try:
        done = Git(cwd, timeout=TIMEOUT_S).run(args, timeout=TIMEOUT_S, env=_IDENTITY,
                                               data=data)
    except GitRefusedError as refused:
        raise refusal(refused) from None
    except GitError as exc:
        raise WorktreeError(f"git {args[0]} failed in {cwd}: {exc}") from None
    if done.returncode != 0:
        raise WorktreeError(f"git {args[0]} failed in {cwd}: {said(done)}")
    return done.stdout


def snapshot(path: Path, exclude: str | None = None) -> str | None:
    """A tree of the working tree at ``path`` (``maker.tools.git.git_tree``, within this
    module's time), ``exclude`` left out; None when git cannot read it. Raises
    WorktreeError (:func:`refusal`) where maker runs no git."""
    try:
        return snapshot_tree(path, timeout=TIMEOUT_S, exclude=exclude or None)
    except GitRefusedError as refused:
        raise refusal(refused) from None


def changes(path: Path, start: str, end: str) -> list[str] | None:
    """The files that differ between trees ``start`` and ``end`` (``maker.tools.git.git_tree``,
    within this module's time); None when git cannot tell. Raises WorktreeError
    (:func:`refusal`) where maker runs no git."""
    try:
        return changed_paths(path, start, end, timeout=TIMEOUT_S)
    except GitRefusedError as refused:
        raise refusal(refused) from None


def ignore_folder(folder: Path) -> None:
    """Make ``folder`` (maker's worktrees) one git never lists: a ``.gitignore`` of ``*``."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".gitignore"
    try:
        if "*" in marker.read_text(encoding="utf-8").splitlines():
            return
    except (OSError, UnicodeDecodeError):
        pass  # (none yet; or cut short by a kill, empty: written again)
    for stale in folder.glob(".gitignore.maker-*"):  # (a kill's, before the rename)
        stale.unlink(missing_ok=True)
    scratch = folder / f".gitignore.maker-{os.getpid()}"
    scratch.write_text("# maker's worktrees: not the project's files\n*\n")
    os.replace(scratch, marker)  # (whole, or not there)


def base_commit(project: Path, exclude: str) -> tuple[str, str]:
    """``(commit, tree)``: a commit of the main checkout as it is now (its working tree,
    ``exclude`` left out), whose parent is HEAD when there is one."""
    tree = snapshot(project, exclude)
    if tree is None:
        raise WorktreeError(f"maker cannot read the working tree of {project} with git "
                            "(not a git repository, or git took too long)")
    try:
        head = _run(["rev-parse", "--verify", "-q", "HEAD^{commit}"], project).decode().strip()
    except WorktreeError:
        head = ""  # a repository without a commit yet
    parents = ["-p", head] if head else []
    commit = _run(["commit-tree", tree, *parents, "-m", "maker: the base of a step's worktree"],
                  project).decode().strip()
    return commit, tree


def add_worktree(project: Path, path: Path, commit: str) -> None:
    """A detached worktree of ``commit`` at ``path`` (which must not exist yet)."""
    ignore_folder(path.parent)
    _run(["worktree", "add", "--detach", "--quiet", str(path), commit], project)


def is_worktree(path: Path) -> bool:
    return (path / ".git").is_file()


def remove_worktree(project: Path, path: Path) -> None:
    """``path``'s worktree gone, files and git's record of it alike (no error when it
    already is)."""
    if path.exists():
        try:
            _run(["worktree", "remove", "--force", "--force", str(path)], project)
            return  # (git forgot it as it removed it)
        except WorktreeError:
            shutil.rmtree(path, ignore_errors=True)
    prune(project)


def prune(project: Path) -> None:
    """git forgets worktrees whose folders are gone, half-made ones of maker's too."""
    _drop_half_made(project)
    try:
        _run(["worktree", "prune"], project)
    except WorktreeError:
        pass


def _drop_half_made(project: Path) -> None:
    """git's records of a ``worktree add`` a kill cut short. git locks the record while
    it adds ("initializing"), so ``worktree prune`` keeps it, and a new worktree at its
    path is refused ("a missing but locked worktree"). Such a record that names no
    folder, or one of maker's folders without its ``.git`` file, goes (a person's own
    locked worktree names a folder elsewhere: never touched)."""
    try:
        common = Path(project, _run(["rev-parse", "--git-common-dir"], project)
                      .decode("utf-8", "surrogateescape").strip())
    except WorktreeError:
        return
    for record in sorted((common / "worktrees").glob("*/locked")):
        admin = record.parent
        try:
            folder: Path | None = Path((admin / "gitdir").read_text().strip()).parent
        except FileNotFoundError:
            folder = None
        except (OSError, UnicodeDecodeError):
            continue
        if folder is None or (f"/{Path(WORKTREES).as_posix()}/" in folder.as_posix()
                              and not (folder / ".git").is_file()):
            shutil.rmtree(admin, ignore_errors=True)


def read_entries(project: Path, tree: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """``{path: (mode, blob id)}`` of ``paths`` in ``tree`` (a path not in it: absent).
    Raises WorktreeError for an entry that is not a file or a symlink (a submodule)."""
    if not paths:
        return {}
    out: dict[str, tuple[str, str]] = {}
    listed = _run(["ls-tree", "-z", "-r", "--full-tree", tree, "--", *paths], project)
    wanted = set(paths)
    for entry in listed.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        info, _, name = entry.partition("\t")
        mode, kind, oid = info.split()
        if name not in wanted:
            continue
        if kind != "blob" or mode not in _MODES:
            raise WorktreeError(f"{name} is a {kind} ({mode}): maker merges files and "
                                "symlinks only")
        out[name] = (mode, oid)
    return out


def blob(project: Path, oid: str, path: str | None = None) -> bytes:
    """The bytes of blob ``oid``; given its ``path``, as a checkout in ``project`` writes
    them (its attributes' line endings; every filter program is off)."""
    if path is None:
        return _run(["cat-file", "blob", oid], project)
    return _run(["cat-file", "--filters", f"--path={path}", oid], project)
