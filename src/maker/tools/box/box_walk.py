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
are ``box_sites``', so the walk names it) or a cache folder (``CACHEDIR.TAG``) that was
there before the plan's first boxed call (``since``), its markers too: no command makes
a folder the walk passes by. A link into a folder the walk passes by is followed (each
folder once); one to a folder it walks anyway is not; one to a folder outside the top
where a command may write (``rw``, ``temp``) is not looked in.

No bound on what it lists, and memory that does not grow with it: a folder's names are
read a share at a time (``_SHARE``), the folders among them walked before the rest is
read. What it keeps grows with what it finds only: before a command, the person's own (a
command's is moved aside after it), within bounds it says it passed. After a command
(``act``) each find is handed on as it is found, and a folder that cannot be read is said
and does not stop the walk; before one, the walk stops there and says why.

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
_SHARE = 1_024  # (names of one folder held at once, before the folders among them are walked)
_OPEN_MOST = 256  # (folders read in shares at once, a descriptor each; past it, one is whole)
_FOUND_MOST = 500_000  # (held before a command: the person's own; a command's go after it)
_LINKS_MOST = 100_000  # (the person's links into a folder passed by, or out of the top)
_VENVS_MOST = 10_000  # (with their start-up files' stat; past it, those change-checked only)
_MARKS = ("pyvenv.cfg", "CACHEDIR.TAG")
Ident = tuple[int, int, int]  # (device, inode, ctime in ns: what no command can set back)


class Walk:
    """One walk: ``found`` (path → :func:`ident`), ``venvs``, ``passed`` (the folders it
    passed by: :func:`folder_id` and path), ``links`` (a link into a folder passed by, or to
    one outside the top where a command may write → that folder), ``listed``, ``finished``."""

    def __init__(self) -> None:
        self.found: dict[str, Ident] = {}
        self.links: dict[str, str] = {}
        self.venvs: list[str] = []
        self.passed: list[str] = []
        self.listed, self.finished, self.why = 0, True, ""


def below(top: str, lists: dict[str, list[str]], act: object = None) -> Walk:
    """What lies below ``top`` (the module's docstring); a folder passed by before the
    command (``passed``) is passed by after it, where it still lies. ``act``, after it: called
    as ``act(kind, path)`` for each find, not kept: ``found``, ``out`` (a link out of the top),
    ``into`` (a link into a folder passed by: followed where it says true), ``venv``."""
    return _Walker(top, lists, act).run()


class _Folder:
    __slots__ = ("path", "listing", "pending", "early", "marks", "decided", "followed")

    def __init__(self, path: str, listing: object, followed: bool) -> None:
        self.path, self.listing, self.followed = path, listing, followed  # (through a link)
        self.pending: list[tuple[str, bool]] = []  # (folders to walk, and followed)
        self.early: list[tuple[str, str]] = []  # (finds before it is known to be passed by)
        self.marks: list[str] = []  # (a venv's or a cache's, among its names)
        self.decided = False  # (whether it is passed by is known)


class _Walker:
    def __init__(self, top: str, lists: dict[str, list[str]], act: object) -> None:
        deeper = lists["deeper"]
        self.files = {n for n in deeper if "*" not in n and not n.endswith("/")}
        self.dirs = {n[:-1] for n in deeper if "*" not in n and n.endswith("/")}
        self.patterns = [n for n in deeper if "*" in n]
        self.starts = tuple(p.partition("*")[0] for p in self.patterns if not p.startswith("*"))
        self.ends = tuple(p.rstrip("/").partition("*")[2] for p in self.patterns
                          if p.startswith("*"))
        self.roots, self.skip = lists["rw"] + lists["temp"], lists["laterskip"]
        self.ok, self.oknames = lists.get("laterok", []), set(lists.get("laterokname", []))
        self.since = int((lists.get("since") or ["0"])[0])
        self.passed = set(lists.get("passed", []))
        self.top, self.act, self.walk, self.open = top, act, Walk(), 0
        self.seen: set[str] = set()  # (folders reached through a link: each once)
        self.places: dict[str, bool] = {}  # (whether a folder is passed by, as a link finds)

    def run(self) -> Walk:
        stack = [f for f in [self._open(self.top, True)] if f]
        while stack and (self.walk.finished or self.act):
            folder = stack[-1]
            if folder.pending:
                child = self._open(*folder.pending.pop())
                stack += [child] if child else []
            elif folder.listing is not None:
                self._read(folder)
            else:
                stack.pop()
        for folder in stack:
            self._close(folder)
        return self.walk

    def _open(self, path: str, followed: bool) -> _Folder | None:
        try:
            listing = os.scandir(path)
        except OSError as exc:
            if not self._reopened(path, exc):
                return None
            listing = os.scandir(path)
        self.open += 1
        return _Folder(path, listing, followed)

    def _reopened(self, path: str, exc: OSError) -> bool:
        """Whether a folder that could not be read can be now: after a command, one of the
        person's it made unreadable is made readable again (before it, none was). Else why
        not is kept, unless it is gone, or another user's (a container's volume)."""
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) or _others(path, exc):
            return False
        if self.act and exc.errno == errno.EACCES:
            try:
                os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | 0o700)
                os.scandir(path).close()
                return True
            except OSError:
                pass
        if self.walk.finished:
            self.walk.finished, self.walk.why = False, f"{path} cannot be read ({exc.strerror})"
        return False

    def _read(self, folder: _Folder) -> None:
        """Read on in ``folder``'s names: to their end, or until a share is held. (The
        walk's hot loop: a plain file, most names, costs a set lookup and two prefix tests.)"""
        whole, files, starts, ends = self.open > _OPEN_MOST, self.files, self.starts, self.ends
        pending, early, listed = folder.pending, folder.early, 0
        try:
            for entry in folder.listing:  # type: ignore[attr-defined]
                listed, low = listed + 1, entry.name.lower()
                if entry.name in _MARKS:  # (in any form: a venv whose marker is a link too)
                    folder.marks.append(entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if self._named(low, True, False):
                        self._find(folder, "found", entry.path)
                    elif low != "node_modules" and entry.path not in self.skip:
                        pending.append((entry.path, False))
                elif entry.is_symlink():
                    if self._named(low, False, True):
                        self._find(folder, "found", entry.path)
                    elif low != "node_modules" and entry.path not in self.skip:
                        self._find(folder, "link", entry.path)
                elif low in files or (low.startswith(starts) or low.endswith(ends)) and \
                        self._named(low, False, False):
                    self._find(folder, "found", entry.path)
                if not whole and len(pending) + len(early) >= _SHARE:
                    if not folder.decided:
                        self._decide(folder, [m for m in _MARKS if os.path.lexists(
                            os.path.join(folder.path, m))])
                    self.walk.listed += listed
                    return
        except OSError as exc:  # (a folder's names that cannot all be read: said)
            if self.walk.finished and exc.errno != errno.ENOENT:
                self.walk.finished = False
                self.walk.why = f"{folder.path} cannot be read ({exc.strerror})"
        self.walk.listed += listed
        self._close(folder)
        if not folder.decided:
            self._decide(folder, folder.marks)

    def _close(self, folder: _Folder) -> None:
        if folder.listing is not None:
            folder.listing.close()  # type: ignore[attr-defined]
            folder.listing, self.open = None, self.open - 1

    def _named(self, low: str, folder_like: bool, link: bool) -> bool:
        return (link or not folder_like) and low in self.files or (
            link or folder_like) and low in self.dirs or (
            low.startswith(self.starts) or low.endswith(self.ends)) and any(
            matches(low, p) for p in self.patterns if link or p.endswith("/") == folder_like)

    def _find(self, folder: _Folder, kind: str, path: str) -> None:
        if kind == "found" and folder.path == self.top:
            return  # (the top's are the spec's)
        if not folder.decided:
            folder.early.append((kind, path))
        elif kind == "link":
            self._link(folder, path)
        elif inside(path, self.ok):
            return  # (the step's: neither held before nor undone after)
        elif self.act:  # (a name the step may make anywhere is held before: a repository)
            if os.path.basename(path).lower() not in self.oknames:
                self.act("found", path)  # type: ignore[operator]
        else:
            self.walk.found[path] = ident(path)
            self._bound(len(self.walk.found), _FOUND_MOST, "files that run code later")

    def _decide(self, folder: _Folder, marks: list[str]) -> None:
        """Whether ``folder`` is passed by (a venv or a cache older than the plan, or one
        passed by before the command), now its markers are known; its early finds then."""
        path, folder.decided = folder.path, True
        if "pyvenv.cfg" in marks:
            self._venv(path)
        key = f"{folder_id(path)} {path}" if marks else ""
        passed = bool(marks) and not folder.followed and path != self.top and (
            key in self.passed or _older(path, marks, self.since))
        if passed:
            self.walk.passed.append(key)
            folder.pending.clear()
            self._close(folder)
        for kind, found in [] if passed else folder.early:
            self._find(folder, kind, found)
        folder.early.clear()

    def _venv(self, path: str) -> None:
        if len(self.walk.venvs) < _VENVS_MOST:
            self.walk.venvs.append(path)
        elif self.act:
            self.act("venv", path)  # type: ignore[operator]

    def _link(self, folder: _Folder, path: str) -> None:
        """A link among the names: into a folder the walk passes by, followed; out of the
        top where a command may write, kept (not looked in); else the walk goes there anyway,
        or it leads where no command writes."""
        there = folder_id(path)
        if not there or inside(path, self.ok):
            return  # (not a folder; or in the step's own place)
        real = os.path.realpath(path)
        if inside(real, [self.top]):
            if inside(real, self.skip) or not self._passed_place(real) or (
                    self.act and not self.act("into", path)):  # type: ignore[operator]
                return
            if there not in self.seen:
                self.seen.add(there)
                folder.pending.append((real, True))
        elif not inside(real, self.roots):
            return
        elif self.act:
            self.act("out", path)  # type: ignore[operator]
            return
        if not self.act:
            self.walk.links[path] = real
            self._bound(len(self.walk.links), _LINKS_MOST, "links into folders passed by, or out")

    def _passed_place(self, real: str) -> bool:
        """Whether the walk passes by a folder inside the top, or one above it."""
        path = self.top
        for part in filter(None, real[len(self.top):].split("/")):
            path, low = os.path.join(path, part), part.lower()
            if low == "node_modules" or path in self.skip or self._named(low, True, False):
                return True
            if path not in self.places:
                if len(self.places) >= _LINKS_MOST:
                    self.places.clear()
                marks = [m for m in _MARKS if os.path.lexists(os.path.join(path, m))]
                self.places[path] = bool(marks) and (
                    f"{folder_id(path)} {path}" in self.passed or _older(path, marks, self.since))
            if self.places[path]:
                return True
        return False

    def _bound(self, kept: int, most: int, what: str) -> None:
        if kept > most and self.walk.finished:
            self.walk.finished, self.walk.why = False, f"more than {most:,} {what} below it"


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


def _older(folder: str, marks: list[str], since: int) -> bool:
    """Whether a venv or a cache folder is older than the plan's first boxed call, its
    markers too."""
    try:
        return max(os.lstat(os.path.join(folder, m)).st_ctime_ns for m in ["", *marks]) < since
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
