"""What lies below the top of a step's folder that makes code run later, found by walking
the folder: once before a boxed command runs (each is then bound read-only over itself:
the command can neither change it, nor rename or remove it) and once after it ends (any
other is new: the command made it, or moved it there). The top itself is held by the
spec's own lists (``later``).

The walk lists names only (no ``stat`` but for a link to a folder). It does not enter
what a person does not work in and what is large: the top's ``.git``, a virtual
environment (a folder holding ``pyvenv.cfg``: its start-up files are ``box_after``'s, so
the walk names it), ``node_modules``, ``__pycache__``, a cache folder (one holding a
``CACHEDIR.TAG``), and the places it is told to skip (the plans' root: read-only). A link
to a folder where the box may write (``roots``) is followed once: a person's ``cd``
through it finds what lies there. A file found there is held by its own path. At most
``_MOST`` entries are listed; past that the walk says it did not finish.

Standard library only: ``box_setup.py`` reads it from beside it, for every boxed call.
"""

from __future__ import annotations

import os

_SKIP = frozenset({"node_modules", "__pycache__"})
_MOST = 400_000  # (about half a second of listing; a source tree holds far fewer)
Walked = tuple[dict[str, tuple[int, int]], list[str], bool]  # (found, venvs, finished)


def below(top: str, lists: dict[str, list[str]]) -> Walked:
    """Below ``top``: each file or folder whose name is among the spec's ``deeper`` (lower
    case; ``*`` ends a name's start) with its identity (:func:`ident`); each virtual
    environment; whether the walk finished. ``rw``: where a link may lead it;
    ``laterskip``: what it does not enter."""
    names, roots, skip = lists["deeper"], lists["rw"], lists["laterskip"]
    exact = {n for n in names if not n.endswith("*")}
    starts = tuple(n[:-1] for n in names if n.endswith("*"))
    found: dict[str, tuple[int, int]] = {}
    venvs: list[str] = []
    stack, seen, listed = [top], {top}, 0
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue  # (gone, or not the box's to read: nothing the command made)
        listed += len(entries)
        if listed > _MOST:
            return found, venvs, False
        if folder != top and any(e.name in ("pyvenv.cfg", "CACHEDIR.TAG") for e in entries):
            venvs += [folder] if any(e.name == "pyvenv.cfg" for e in entries) else []
            continue
        for entry in entries:
            low = entry.name.lower()
            if low in exact or low.startswith(starts):
                if folder != top:  # (the top's are the spec's)
                    found[entry.path] = ident(entry.path)
            elif low in _SKIP or entry.path in skip:
                continue
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_symlink() and os.path.isdir(entry.path):
                real = os.path.realpath(entry.path)
                if real not in seen and inside(real, roots) and not inside(real, skip):
                    seen.add(real)
                    stack.append(real)
    return found, venvs, True


def ident(path: str) -> tuple[int, int]:
    """What a path is (device, inode: a link's own, not its target's); (0, 0) if gone."""
    try:
        seen = os.lstat(path)
    except OSError:
        return 0, 0
    return seen.st_dev, seen.st_ino


def aside(path: str) -> str:
    """Move ``path`` aside in its own folder, under a name no tool reads
    (``maker-aside.<name>``, numbered if taken); its new path."""
    folder, name = os.path.split(path)
    for n in range(1000):
        moved = os.path.join(folder, f"maker-aside{'.' + str(n) if n else ''}.{name}")
        if not os.path.lexists(moved):
            os.rename(path, moved)
            return moved
    raise OSError(f"no free name beside {path}")


def inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)
