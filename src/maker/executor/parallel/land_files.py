"""The files of a landing (``maker.executor.parallel.land``): a file's state in the main checkout
and in a git tree, compared as a checkout would write them, and written whole.

A state is ``(git mode, bytes)``, None for no file, or ``FOLDER`` for a folder where a
file could be. A tree's file is read as git would check it out in the main checkout
(``cat-file --filters``: its line endings and the rest of the project's attributes,
with every filter program off), so a project that checks out CRLF compares with what
is on disk, and a landed file is written as a checkout of it would be.

Nothing is written through a symlink: a path whose folder in the main checkout is a
symlink (or a file) is :func:`blocked`, and the landing calls that a conflict rather
than write wherever the link points.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from maker.store.atomic import atomic_write
from maker.tools.git import worktrees

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["FOLDER", "State", "blocked", "drop_scratch", "folder_as_base", "main_state",
           "put_back_evidence", "step_evidence",
           "new_folders", "tree_states", "write"]

State = tuple[str, bytes] | None  # (git mode, bytes) of a file; None: no such file
FOLDER: State = ("dir", b"")  # a folder where a file could be


def main_state(root: Path, rel: str) -> State:
    path = root / rel
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(info.st_mode):
        return "120000", os.fsencode(os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return FOLDER  # a folder where the file was: never equal to a file
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return mode, path.read_bytes()


def blocked(root: Path, rel: str, writes: dict[str, State]) -> str | None:
    """The folder of ``rel`` that the main checkout holds as a symlink or a file (one
    the landing does not delete first), which writing ``rel`` would go through or fail
    on; None when every folder above it is a real folder or not there yet."""
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        try:
            info = os.lstat(root / folder)
        except FileNotFoundError:
            return None  # (made by the landing, as a real folder, with what is under it)
        if stat.S_ISDIR(info.st_mode):
            continue
        if writes.get(folder, FOLDER) is None:
            return None  # (a file or link the landing deletes first: then a folder)
        return folder
    return None


def folder_as_base(project: Path, rel: str, before: dict[str, State]) -> bool:
    """Whether the main checkout's folder ``rel`` holds just the base's files there."""
    for folder, _, names in os.walk(project / rel):
        for name in names:
            inner = os.path.relpath(os.path.join(folder, name), project).replace(os.sep, "/")
            if inner not in before or main_state(project, inner) != before[inner]:
                return False
    return True


def tree_states(project: Path, tree: str, paths: list[str]) -> dict[str, State]:
    """Each of ``paths`` in ``tree``, as a checkout in ``project`` would write it."""
    entries = worktrees.read_entries(project, tree, paths)
    return {p: ((entries[p][0], worktrees.blob(
        project, entries[p][1], None if entries[p][0] == "120000" else p))
        if p in entries else None) for p in paths}


def _scratch(path: Path) -> Path:
    return path.with_name(f".{path.name}.maker-{os.getpid()}")


def drop_scratch(path: Path) -> None:
    """The scratch files a write of ``path`` cut short by a kill left beside it."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(f".{path.name}.maker-") and entry.name[
                    len(path.name) + 8:].isdigit() and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)


def new_folders(root: Path, writes: dict[str, State]) -> list[str]:
    """The folders writing ``writes`` makes (not real folders yet: absent, or a file
    the landing deletes first), deepest first."""
    made: set[str] = set()
    for rel, state in writes.items():
        parent = Path(rel).parent
        while state is not None and parent != Path(".") and not (root / parent).is_dir():
            made.add(parent.as_posix())
            parent = parent.parent
    return sorted(made, key=lambda d: (-d.count("/"), d))


def _clear(path: Path) -> None:
    """Remove the folder ``path`` where a file goes: the landing has deleted the base's
    files in it; empty folders left under it go too (anything else: OSError)."""
    for folder, _, _ in sorted(os.walk(path), key=lambda w: -len(w[0])):
        os.rmdir(folder)


def write(root: Path, rel: str, state: State) -> None:
    path = root / rel
    if state is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    mode, data = state
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    elif path.is_dir():
        _clear(path)  # (a folder the step replaced by a file: emptied by its deletions)
    if mode == "120000":
        os.symlink(os.fsdecode(data), path)
        return
    scratch = _scratch(path)
    with open(scratch, "wb") as handle:  # (whole, then renamed over: never half a file)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(scratch, 0o755 if mode == "100755" else 0o644)
    os.replace(scratch, path)


def step_evidence(store: PlanStore, n: int) -> str | None:
    """Step ``n``'s verification record as it is before the landing runs its own."""
    from maker.verify.runner import evidence_path

    try:
        return evidence_path(store, n).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def put_back_evidence(store: PlanStore, n: int, text: str | None) -> None:
    """Step ``n``'s verification record as it was before a landing a kill cut short
    (the landing's own run, on a merged tree now undone, is not the step's)."""
    from maker.verify.runner import evidence_path

    path = evidence_path(store, n)
    with store.lock():
        try:  # (a record of the step's own run since, in its worktree, is kept)
            ran_in = json.loads(path.read_text(encoding="utf-8")).get("project_dir")
        except (OSError, ValueError, AttributeError):
            ran_in = None
        if ran_in != str(store.project):
            return
        if text is not None:
            atomic_write(path, text)
        elif path.exists():
            path.unlink()
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # (when the landing's record was its only one)
