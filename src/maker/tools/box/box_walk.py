"""What lies below the top of a step's folder that makes code run later, found by walking
the folder: once before a boxed command runs (each is then bound read-only over itself:
the command can neither change it nor remove it) and once after it ends (any other is
new, or no longer the same file: the command made it, changed it or moved it there). The
top itself is held by the spec's own lists (``later``).

The names (``deeper``, lower case): ``name/`` is a folder's, ``name`` a file's; one ``*``
stands for any run of characters (``lefthook*.yml``); a link matches either. The walk
lists names only (a ``stat`` for a name that matches and for a link to a folder). It does
not enter the top's ``.git`` and what it is told to skip (``laterskip``: the plans'
root), ``node_modules``, and a virtual environment (``pyvenv.cfg``: its start-up files
are ``box_after``'s, so the walk names it) or a cache folder (``CACHEDIR.TAG``) that was
there before the plan's first boxed call (``since``): each of these and its marker
older, so that no command makes a folder the walk passes by. A link to a folder inside the
top is followed (each folder is walked once, however many links lead there: one passed by
is then looked in); one to a folder outside it where a command may write (``rw``,
``temp``) is not looked in, and one a command made is moved aside. At most ``_MOST``
entries are listed; past that, or where a folder cannot be read, the walk says it did not
finish.

Standard library only: ``box_setup.py`` reads it from beside it, for every boxed call.
"""

from __future__ import annotations

import errno
import os
import stat

UNFINISHED = ("maker cannot look below the top of {} for what runs code later: {}. What "
              "a command makes there could not be undone, so none runs until it can: remove "
              "what stops it (a person may set boundary: off, or main_boundary: off, in "
              "plans/settings.yaml)")
_MOST = 400_000  # (about half a second of listing; a source tree holds far fewer)
Ident = tuple[int, int, int]  # (device, inode, ctime in ns: what no command can set back)


class Walk:
    """One walk: ``found`` (path → :func:`ident`), ``venvs``, ``passed`` (the folders it
    passed by: :func:`folder_id` and path), ``links`` (a link to a folder outside the top where
    a command may write → that folder: not followed), ``finished``."""

    def __init__(self) -> None:
        self.found: dict[str, Ident] = {}
        self.venvs: list[str] = []
        self.passed: list[str] = []
        self.links: dict[str, str] = {}
        self.finished = True
        self.why = ""


def below(top: str, lists: dict[str, list[str]]) -> Walk:
    """What lies below ``top`` (see the module's docstring). A folder the walk before the
    command passed by (``passed``) it passes by after it too, where it still lies."""
    files = {n for n in lists["deeper"] if "*" not in n and not n.endswith("/")}
    dirs = {n[:-1] for n in lists["deeper"] if "*" not in n and n.endswith("/")}
    patterns = [n for n in lists["deeper"] if "*" in n]
    starts = tuple(p.partition("*")[0] for p in patterns if not p.startswith("*"))
    ends = tuple(p.rstrip("/").partition("*")[2] for p in patterns if p.startswith("*"))
    roots, skip = lists["rw"] + lists["temp"], lists["laterskip"]
    since, passed = int((lists.get("since") or ["0"])[0]), set(lists.get("passed", []))
    walk, stack, seen, listed = Walk(), [top], {folder_id(top)}, 0
    device = folder_id(top).partition(":")[0]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR) and not _others(folder, exc):
                walk.finished, walk.why = False, f"{folder} cannot be read ({exc.strerror})"
            continue
        listed += len(entries)
        if listed > _MOST:
            walk.finished, walk.why = False, (
                f"more than {_MOST:,} files and folders below it (node_modules, and venvs "
                "and caches older than the plan, not counted)")
            return walk
        marked = [e for e in entries if e.name in ("pyvenv.cfg", "CACHEDIR.TAG")]
        walk.venvs += [folder] if any(e.name == "pyvenv.cfg" for e in marked) else []
        if folder != top and marked and (f"{folder_id(folder)} {folder}" in passed or _older(
                folder, marked[0], since)):
            walk.passed.append(f"{folder_id(folder)} {folder}")
            continue
        links = []
        for entry in entries:
            low = entry.name.lower()
            folder_like = entry.is_dir(follow_symlinks=False)
            link = entry.is_symlink()
            if (link or not folder_like) and low in files or (link or folder_like) and \
                    low in dirs or (low.startswith(starts) or low.endswith(ends)) and any(
                        matches(low, p) for p in patterns
                        if link or p.endswith("/") == folder_like):
                if folder != top:  # (the top's are the spec's)
                    walk.found[entry.path] = ident(entry.path)
            elif low == "node_modules" or entry.path in skip:
                continue
            elif folder_like:
                seen.add(f"{device}:{entry.inode()}")  # (no stat: each folder's, once)
                stack.append(entry.path)
            elif link:
                links.append(entry.path)
        for path in links:  # (after the folders beside them: each folder walked once)
            there = folder_id(path)
            if there == "" or there in seen:
                continue  # (not a folder, or one walked already)
            real = os.path.realpath(path)
            if inside(real, [top]) and not inside(real, skip):
                seen.add(there)
                stack.append(real)
            elif inside(real, roots):
                walk.links[path] = real  # (a command may write there: not looked in)
    return walk


def sites_of(tops: list[str], venvs: list[str]) -> list[str]:
    """The site-packages of each virtual environment: at the top of the step's folder,
    and those the walk found below it."""
    sites = []
    found = [os.path.join(top, n) for top in tops for n in _names(top)]
    for venv in dict.fromkeys([*found, *venvs]):
        lib = os.path.join(venv, "lib")
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            sites += [os.path.join(lib, v, "site-packages") for v in _names(lib)
                      if os.path.isdir(os.path.join(lib, v, "site-packages"))]
    return sites


def matches(name: str, pattern: str) -> bool:
    """Whether ``name`` is ``pattern``'s (a trailing ``/`` dropped; one ``*``: any run)."""
    pattern = pattern.rstrip("/")
    start, star, end = pattern.partition("*")
    if not star:
        return name == pattern
    return len(name) >= len(start) + len(end) and name.startswith(start) and \
        name.endswith(end)


def ident(path: str) -> Ident:
    """What a path is (device, inode, ctime: a link's own, not its target's); zeros if
    gone."""
    try:
        seen = os.lstat(path)
    except OSError:
        return 0, 0, 0
    return seen.st_dev, seen.st_ino, seen.st_ctime_ns


def aside(path: str) -> str:
    """Move ``path`` aside in its own folder, under a name no tool reads
    (``maker-aside.<name>``, numbered if taken, the name left out if too long); its new
    path."""
    folder, name = os.path.split(path)
    for n in range(100):
        moved = f"maker-aside.{n}.{name}" if n else f"maker-aside.{name}"
        moved = os.path.join(folder, moved if len(os.fsencode(moved)) <= 255
                             else f"maker-aside.{n}")
        if not os.path.lexists(moved):
            os.rename(path, moved)
            return moved
    raise OSError(f"no free name beside {path}")


def put_aside(path: str, why: str) -> str:
    """Move ``path`` aside (removed where it cannot be); what was done, in words."""
    try:
        return (f"moved {path} aside, to {aside(path)}: {why}, and it runs code later "
                "outside the box (the step's writes do not name it)")
    except Exception as exc:
        try:
            os.unlink(path)
            return f"removed {path}: {why}, and it runs code later outside the box"
        except Exception:
            return (f"could not move {path} aside ({exc}): it runs code later outside the "
                    "box; remove it before running tools in its folder")


def inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _older(folder: str, marker: os.DirEntry[str], since: int) -> bool:
    """Whether a venv or a cache folder is older than the plan's first boxed call, its
    marker too."""
    try:
        return max(os.lstat(folder).st_ctime_ns,
                   marker.stat(follow_symlinks=False).st_ctime_ns) < since
    except OSError:
        return False


def _others(folder: str, exc: OSError) -> bool:
    """Whether ``folder`` is unreadable as another user's (a container's volume): no
    command of the person's made it so, or put anything there."""
    try:
        return exc.errno in (errno.EACCES, errno.EPERM) and os.lstat(folder).st_uid != \
            os.getuid()
    except OSError:
        return False


def folder_id(path: str) -> str:
    """A folder's device and inode (a link's target's), as text; "" if it is none."""
    try:
        seen = os.stat(path)
    except OSError:
        return ""
    return f"{seen.st_dev}:{seen.st_ino}" if stat.S_ISDIR(seen.st_mode) else ""


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder) if os.path.isdir(folder) else []
    except OSError:
        return []
