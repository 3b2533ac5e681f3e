"""The working tree as git sees it, measured without the user's index.

:func:`snapshot_tree` writes a tree object of the whole working tree (tracked files and
untracked files that are not ignored) through a temporary index (``GIT_INDEX_FILE``:
a copy of the real one, so unchanged files are not hashed again; ``git add -A``;
``git write-tree``); :func:`changed_paths` lists the files that differ between two such
trees. Only the project's own subtree is
added (a project inside a larger repository, or a home folder kept in git, is not the
step's to measure). The user's real index is only read (copied), never written; what
git adds is loose objects, which its garbage collection prunes.

A step executor could have planted programs for git to run (a filter's ``clean`` runs on
``git add``, ``core.fsmonitor`` on every index refresh, a hook on an index write, an
external diff): every call goes through ``maker.tools.git.git_run`` (git by its absolute
path, those programs off), with the measure's own settings (:data:`_SAFE`: the index and
stat data read as git's defaults have them, no user-wide ignore file). Each call is
bounded (:data:`TIMEOUT_S`); a repository git cannot measure in time, or no git at all,
gives None: the caller says the count is not measured. A repository whose config defines
a filter that cannot be switched off raises ``GitRefusedError``: the caller says why.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from maker.errors import GitError, GitRefusedError
from maker.tools.git.git_run import Git

__all__ = ["DIFF_TIMEOUT_S", "MAX_PATHS", "TIMEOUT_S", "changed_paths", "export_tree",
           "file_diff", "gitlinks_added", "line_counts", "repositories_inside", "snapshot_tree"]

# A snapshot gives up after this long (a huge untracked tree), a diff after DIFF_TIMEOUT_S:
# the gate measures inside a hook that Claude Code gives 30 s (PreToolUse, for a
# SubagentHandback), so both together stay well under that.
TIMEOUT_S = 10.0
DIFF_TIMEOUT_S = 5.0
MAX_PATHS = 5000  # changed paths listed at most; beyond that the measure is "too many"
_SAFE = ("-c", "core.splitIndex=false", "-c", "core.untrackedCache=false",
         "-c", "index.threads=1",
         # (a file's stat data decides whether git reads it again: all of it, whatever the
         # repository says, or an edit of the same size and time is taken for unchanged)
         "-c", "core.trustctime=true", "-c", "core.checkStat=default",
         "-c", "core.ignoreStat=false",
         # (a user-wide ignore file is not the project's, and an executor could write one
         # to hide what it adds: the measure reads only the project's own ignore rules)
         "-c", "core.excludesFile=/dev/null")


def _git(project: Path, timeout: float) -> Git | None:
    """git in ``project`` with the measure's settings; None without git (or its config
    unreadable in time). Raises GitRefusedError (see the module's docstring)."""
    try:
        return Git(project, config=_SAFE, timeout=timeout)
    except GitRefusedError:
        raise
    except GitError:
        return None


def _run(git: Git, args: list[str], env: Mapping[str, str] | None = None,
         timeout: float = TIMEOUT_S) -> str | None:
    """git's stdout, or None when it fails or takes longer than ``timeout``."""
    try:
        done = git.run(args, timeout=timeout, env=env)
    except GitError:
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def snapshot_tree(project: Path, timeout: float = TIMEOUT_S,
                  exclude: str | None = None, *, seed: Path | None = None,
                  keep: Path | None = None) -> str | None:
    """The id of a git tree object holding the working tree of ``project``'s repository
    as it is now (without the folder ``exclude``, relative to ``project``, when given);
    None outside a git repository, without git, or past ``timeout``. Raises
    GitRefusedError where maker runs no git (a filter it cannot switch off).

    The temporary index starts as a copy of the real one, unless ``seed`` is given: then
    of that file (an index maker kept: a step can rewrite the real one, its entries'
    stat data too, to hide an edit), or empty when it is missing (every file hashed).
    ``keep``: where to save the index it ends with, as a later call's ``seed``."""
    project = Path(project)
    if not project.is_dir():
        return None
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(deadline - time.monotonic(), 0.1)

    git = _git(project, timeout)
    where = _run(git, ["rev-parse", "--show-toplevel", "--git-path", "index"],
                 timeout=left()) if git is not None else None
    lines = (where or "").splitlines()
    if git is None or len(lines) != 2:
        return None
    real_index = Path(project, lines[1])
    if (Path(lines[0]) / ".git" / "commondir").exists():
        return None  # (git would read another folder's config: a step's, maybe)
    with tempfile.TemporaryDirectory(prefix="maker-measure-") as tmp:
        index = Path(tmp) / "index"
        try:  # a copy of the real index: unchanged files keep their stat data. Its
            # time too: git hashes again a file changed in the index's own second (its
            # "racily clean" rule); a copy dated now would hide such an edit.
            source = real_index if seed is None else seed
            if source.is_file() and source.stat().st_size < 512 << 20:
                shutil.copy2(source, index)
        except OSError:
            pass
        env = {"GIT_INDEX_FILE": str(index)}
        if index.exists() and _hides_files(git, env, left()):
            index.unlink()  # (an entry marked assume-unchanged or skip-worktree would
            #                 keep its edits out of `git add`: start from an empty index)
        for _ in (1, 2):  # a copied index git cannot read: once more from an empty one
            # (only the project's own files: a project inside a larger repository, a
            # home folder under git, is not the step's to measure)
            nested = _nested(git, project, env, left())
            if nested is None:
                return None
            added = _run(git, ["add", "-A", "--", ".",
                               *(f":(exclude,literal){p}" for p in nested)], env, left())
            if added is not None and nested:
                added = _gitlinks(git, project, nested, env, left())
            if added is not None and exclude:
                added = _run(git, ["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--",
                                   exclude], env, left())
            tree = _run(git, ["write-tree"], env, left()) if added is not None else None
            if tree is not None and _is_id(tree.strip()):
                if keep is not None:
                    _keep(index, keep)
                return tree.strip()
            if time.monotonic() >= deadline or not index.exists():
                break
            index.unlink()
    return None


_NESTED_MAX = 200  # nested repositories a measure records; more: not measured


def repositories_inside(project: Path, timeout: float = TIMEOUT_S) -> list[str] | None:
    """The untracked folders of ``project``'s working tree that git finds are
    repositories of their own, at any depth (``ls-files -o`` names each ending in ``/``,
    entering none); None when git cannot tell. Raises GitRefusedError (see the module's
    docstring)."""
    git = _git(project, timeout)
    out = _run(git, ["ls-files", "-o", "--exclude-standard", "-z"], None, timeout) \
        if git is not None else None
    return None if out is None else [e.rstrip("/") for e in out.split("\0") if e.endswith("/")]


def _nested(git: Git, project: Path, env: Mapping[str, str], timeout: float
            ) -> list[str] | None:
    """The nested repositories in ``project`` (relative paths, each a folder with a
    ``.git``): gitlinks of the index and untracked folders git stops at. ``git add``
    would enter each (its status, with its own config's filters and fsmonitor), so the
    measure leaves them to :func:`_gitlinks`. None when git cannot tell, or too many."""
    staged = _run(git, ["ls-files", "-s", "-z", "--", "."], env, timeout)
    others = _run(git, ["ls-files", "-o", "--directory", "--exclude-standard", "-z", "--",
                        "."], env, timeout)
    if staged is None or others is None:
        return None
    paths = [e.split("\t", 1)[1] for e in staged.split("\0")
             if e.startswith("160000 ") and "\t" in e]
    paths += [e.rstrip("/") for e in others.split("\0") if e.endswith("/")]
    found = sorted({p for p in paths if os.path.lexists(project / p / ".git")})
    return found if len(found) <= _NESTED_MAX else None


def _gitlinks(git: Git, project: Path, nested: list[str], env: Mapping[str, str],
              timeout: float) -> str | None:
    """Each nested repository recorded in the index as git records one (a gitlink to its
    HEAD), its HEAD read by a git of its own that runs nothing (``rev-parse``, with
    maker's overrides). "" when done; None when git cannot tell, or a nested repository
    has no commit (``git add`` fails on one too: what it holds is not measured, so the
    measure says no)."""
    lines = []
    for path in nested:
        try:
            inner = Git(project / path, timeout=timeout)
        except (GitError, GitRefusedError):
            return None
        head = _run(inner, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], None, timeout)
        if head is None or not _is_id(head.strip()):
            return None  # (no commit, or unreadable: what it holds cannot be measured)
        lines.append(f"160000 {head.strip()}\t{path}")
    try:  # (NUL-ended records: a path with a line break in it is one path)
        done = git.run(["update-index", "--add", "-z", "--index-info"], timeout=timeout,
                       env=env, data="".join(f"{line}\0" for line in lines).encode(
                           "utf-8", "surrogateescape"))
    except GitError:
        return None
    return "" if done.returncode == 0 else None


def _keep(index: Path, keep: Path) -> None:
    """``index`` saved as ``keep``, whole or not at all (a seed is only ever a speed-up)."""
    try:
        keep.parent.mkdir(parents=True, exist_ok=True)
        scratch = keep.with_name(f".{keep.name}.tmp")
        shutil.copy2(index, scratch)
        os.replace(scratch, keep)
    except OSError:
        pass


def _hides_files(git: Git, env: Mapping[str, str], timeout: float) -> bool:
    """Whether the copied index marks an entry assume-unchanged (a lowercase tag in
    ``ls-files -v``) or skip-worktree (``S``): ``git add`` would not see its edits.
    True when it cannot tell."""
    listed = _run(git, ["ls-files", "-v", "-z"], env, timeout)
    if listed is None:
        return True
    return any(entry[:1].islower() or entry[:1] == "S"
               for entry in listed.split("\0") if entry)


# Two trees' gitlinks compared by id (maker's git otherwise ignores nested repositories,
# diff.ignoreSubmodules=all): between trees git enters no repository to compare them.
_GITLINKS = "--ignore-submodules=none"


def changed_paths(project: Path, start: str, end: str,
                  timeout: float = DIFF_TIMEOUT_S) -> list[str] | None:
    """The files that differ between trees ``start`` and ``end``, relative to
    ``project`` and within it (sorted); None when git cannot tell. Two trees' names are
    compared by object id: no filter or textconv runs, and no external diff (switched
    off), nor the index or fsmonitor (not read). Raises GitRefusedError as
    :func:`snapshot_tree` does."""
    if not all(_is_id(t) for t in (start, end)):
        return None
    deadline = time.monotonic() + timeout
    git = _git(Path(project), timeout)
    out = _run(git, ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-only",
                     _GITLINKS, "-z", "--relative", start, end, "--"],
               timeout=max(deadline - time.monotonic(), 0.1)) if git is not None else None
    if out is None:
        return None
    return sorted({p for p in out.split("\0") if p})


def gitlinks_added(project: Path, start: str, end: str,
                   timeout: float = DIFF_TIMEOUT_S) -> list[str] | None:
    """The paths that are a nested repository (a gitlink, mode 160000) in tree ``end``
    and were not one in ``start``, relative to ``project`` (sorted); None when git
    cannot tell. Compared as :func:`changed_paths` compares."""
    if not all(_is_id(t) for t in (start, end)):
        return None
    git = _git(Path(project), timeout)
    out = _run(git, ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--raw", "-z",
                     _GITLINKS, "--relative", start, end, "--"], timeout=timeout) \
        if git is not None else None
    if out is None:
        return None
    fields = out.split("\0")
    found = {path for head, path in zip(fields[::2], fields[1::2], strict=False)
             if head.split(" ")[1:2] == ["160000"] and head.split(" ")[:1] != [":160000"]}
    return sorted(found)


def line_counts(project: Path, start: str, end: str, paths: list[str],
                timeout: float = DIFF_TIMEOUT_S) -> dict[str, tuple[int, int]] | None:
    """Per path (of ``paths``, relative to ``project``): the lines added and removed
    between trees ``start`` and ``end`` (a binary file: ``(-1, -1)``); None when git
    cannot tell. Compared as :func:`changed_paths` compares: no filter, textconv or
    external diff runs."""
    if not all(_is_id(t) for t in (start, end)) or not paths:
        return None
    git = _git(Path(project), timeout)
    out = _run(git, ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--numstat",
                     "-z", "--relative", start, end, "--", *paths[:200]],
               timeout=timeout) if git is not None else None
    if out is None:
        return None
    counts: dict[str, tuple[int, int]] = {}
    for entry in out.split("\0"):
        added, _, rest = entry.partition("\t")
        removed, _, path = rest.partition("\t")
        if path:
            counts[path] = (int(added), int(removed)) if added.isdigit() and \
                removed.isdigit() else (-1, -1)
    return counts


def file_diff(project: Path, start: str, end: str, path: str,
              timeout: float = DIFF_TIMEOUT_S) -> tuple[str, list[str], int] | None:
    """How ``path`` (relative to ``project``) changed between trees ``start`` and ``end``:
    ``("added" | "deleted" | "changed", its added lines, how many lines it lost)``; None
    when git cannot tell. Compared as :func:`changed_paths` compares (nothing runs); the
    caller bounds the size (:func:`line_counts` first)."""
    if not all(_is_id(t) for t in (start, end)):
        return None
    git = _git(Path(project), timeout)
    out = _run(git, ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color",
                     "-U0", "--relative", start, end, "--", path],
               timeout=timeout) if git is not None else None
    if out is None:
        return None
    lines = out.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    head = lines[:at]
    kind = ("added" if any(h.startswith("new file mode") for h in head) else
            "deleted" if any(h.startswith("deleted file mode") for h in head) else "changed")
    body = lines[at:]
    return (kind, [line[1:] for line in body if line.startswith("+")],
            sum(1 for line in body if line.startswith("-")))


def export_tree(project: Path, tree: str, into: Path, timeout: float = TIMEOUT_S) -> bool:
    """The files of tree ``tree`` (of ``project``'s repository: a measure's start) written
    under the folder ``into`` as a checkout writes them, running nothing (no filter, no
    hook); False when git cannot."""
    git = _git(Path(project), timeout) if _is_id(tree) else None
    if git is None:
        return False
    with tempfile.TemporaryDirectory(prefix="maker-base-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        return _run(git, ["read-tree", tree], env, timeout) is not None and _run(
            git, ["checkout-index", "-a", "-f", f"--prefix={into}/"], env, timeout) is not None


def _is_id(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
