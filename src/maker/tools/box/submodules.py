"""Where a repository of its own lies in a project's working tree: its submodules (the
paths ``.gitmodules`` names, as git reads the file, and the gitlinks git's index holds),
which a box holds so that no step makes the person's git enter a repository of the step's;
and where a ``.git`` file leads."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from maker.tools.box.box_after import gitlinks, may_link

__all__ = ["gitdir_of", "submodule_places"]

_PLACES_MAX = 400  # submodules held, at most (each is a few mounts)


def submodule_places(top: Path, git: str | None, *, empty: bool = True
                     ) -> list[tuple[str, str]]:
    """Each submodule's ``.git`` in the working tree (the paths ``.gitmodules`` names, and
    the gitlinks git's index holds) read-only, and each folder from it up to the top a
    mount point of its own, so none can be renamed away to put another ``.git`` there:
    the person's ``git status`` enters a submodule and runs what the repository its
    ``.git`` names has in its config. ``empty``: an uninitialised one's folder, with no
    ``.git``, is read-only whole (made when missing, so that no step makes it), but where
    git alone runs (the main agent's ``git rm`` of it). ``git``: the system's, to read
    the index with."""
    dotfile = top / ".gitmodules"
    try:
        text = dotfile.read_text(errors="replace")[:1 << 20] if dotfile.is_file() else ""
    except OSError:
        text = ""
    entries: list[tuple[str, str]] = []
    for rel in dict.fromkeys([*_module_paths(text), *sorted(_index_links(top, git))]):
        dotgit = top / rel / ".git"
        if not rel or ".." in rel.split("/") or rel.startswith("/") or "\n" in rel:
            continue
        if not os.path.lexists(dotgit) and empty and not os.path.lexists(dotgit.parent) \
                and _under(os.path.realpath(dotgit.parent), os.path.realpath(top)):
            with contextlib.suppress(OSError):
                dotgit.parent.mkdir(parents=True)
        held = dotgit if os.path.lexists(dotgit) else dotgit.parent if empty else None
        if held is None or not os.path.lexists(held) or held.is_symlink() or \
                not _under(os.path.realpath(held), str(top)) or held == top:
            continue
        folder = held.parent
        while folder != top and _under(str(folder), str(top)):
            entries.append(("rw", str(folder)))
            folder = folder.parent
        entries.append(("ro", str(held)))
        if len(entries) > 4 * _PLACES_MAX:
            break
    return entries


def _module_paths(text: str) -> list[str]:
    """The ``path`` of each submodule in a ``.gitmodules`` text, as git reads one: the
    key in any case, a value quoted or not, a comment after it."""
    paths = []
    for line in text.splitlines():
        key, sep, raw = line.strip().partition("=")
        if not sep or key.strip().lower() != "path":
            continue
        value, quoted, i = [], False, 0
        while i < len(raw):
            if raw[i] == "\\" and i + 1 < len(raw):
                value.append({"n": "\n", "t": "\t"}.get(raw[i + 1], raw[i + 1]))
                i += 1
            elif raw[i] == '"':
                quoted = not quoted
            elif raw[i] in ";#" and not quoted:
                break
            else:
                value.append(raw[i])
            i += 1
        paths.append("".join(value).strip().rstrip("/"))
    return paths


def _index_links(top: Path, git: str | None) -> set[str]:
    """The gitlinks in the index of the repository at ``top`` (one committed with no
    ``.gitmodules`` entry too), where its bytes may hold one."""
    dotgit = top / ".git"
    gitdir = dotgit if dotgit.is_dir() else gitdir_of(dotgit, common=False) \
        if dotgit.is_file() else None
    if gitdir is None or git is None or not may_link(str(gitdir / "index")):
        return set()
    return gitlinks(git, str(gitdir / "index"))


def gitdir_of(dotgit: Path, *, common: bool = True) -> Path | None:
    """The common git dir a ``.git`` file leads to (``gitdir:``, then ``commondir``; not
    ``common``: the ``gitdir:`` alone)."""
    try:
        first = dotgit.read_text(errors="replace")[:4096].splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = (dotgit.parent / first.removeprefix("gitdir:").strip()).resolve()
    if not common:
        return gitdir
    try:
        shared = (gitdir / "commondir").read_text().strip()
    except OSError:
        return gitdir
    return (gitdir / shared).resolve()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
