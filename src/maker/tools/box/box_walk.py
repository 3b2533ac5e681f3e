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
are ``box_sites``', so the walk names it), a conda or pixi environment (``conda-meta``),
or a cache folder (``CACHEDIR.TAG``) that was there before the plan's first boxed call
(``since``), its markers too: no command makes a folder the walk passes by. A link into a
folder it passes by is followed (each folder once; one into a place it skips, or 256
levels below the top, is not); one to a folder it walks anyway is not; one to a folder
outside the top where a command may write (``rw``, ``temp``, ``/dev``'s shared memory)
is not looked in. After a command, such a link it did not find before is moved aside.

No bound on what it lists, and memory that does not grow with it: a folder's names are
read a share at a time, half as many a level deeper (``_NAMES``: twice that in all), the
folders among them walked before the rest is read, by name. What it keeps grows with
what it finds only: before a command, the person's own (a command's is moved aside after
it), within bounds it says it passed. After a command (``act``) each find is handed on as
it is found; a folder that cannot be read is said and does not stop the walk, and one
too deep for its path to be named is moved to the top and walked there.

Standard library only: ``box_setup.py`` reads it from beside it, for every boxed call.
"""

from __future__ import annotations

import errno
import os
import time

if "ident" not in globals():  # (in the box, box_setup reads box_sites' code in first)
    from maker.tools.box.box_sites import (
        Ident,
        folder_id,
        ident,
        inside,
        make_readable,
        matches,
        older,
        others,
        real_folder,
        too_long,
    )

UNFINISHED = ("maker cannot look below the top of {} for what runs code later: {}. What "
              "a command makes there could not be undone, so none runs until it can: remove "
              "what stops it (a person may set boundary: off, or main_boundary: off, in "
              "plans/settings.yaml)")
_NAMES = 65_536  # (a share of a folder's names: half as many a level deeper; in all, twice)
_SHARE_LEAST = 32  # (a share, however deep the walk)
_OPEN_MOST = 4_096  # (folders being read at once, a descriptor each; past it, one is whole)
_FOUND_MOST = 500_000  # (held before a command: the person's own; a command's go after it)
_NAMED_MOST = 2_000  # (of those the step may make anywhere, held: more would not be bound)
_LINKS_MOST = 100_000  # (the person's links into a folder passed by, or out of the top)
_VENVS_MOST = 10_000  # (with their start-up files' stat; past it, those change-checked only)
_DEEPEST = 256  # (a link's target this far below the top, or more: not followed)
_LONGEST = 3_800  # (a folder's path, in bytes: a name in it still fits what a path may be)
_SHORT = 1_024  # (past it, a folder is opened by its parent's handle)
_DIR = os.O_RDONLY | os.O_DIRECTORY
_MARKS = ("pyvenv.cfg", "CACHEDIR.TAG", "conda-meta")  # (a venv's, a cache's, a conda env's)


class Walk:
    """One walk: ``found`` and ``named`` (of names the step may make anywhere): path →
    :func:`ident`; ``venvs``; ``passed`` (:func:`folder_id` and path); ``links`` (→ where)."""

    def __init__(self) -> None:
        self.found: dict[str, Ident] = {}
        self.named: dict[str, Ident] = {}
        self.links: dict[str, str] = {}
        self.venvs: list[str] = []
        self.passed: list[str] = []
        self.listed, self.finished, self.why = 0, True, ""


def below(top: str, lists: dict[str, list[str]], act: object = None) -> Walk:
    """What lies below ``top`` (the module's docstring); one passed by before the command
    (``passed``) is passed by after it, where it still lies. ``act``, after it: called as
    ``act(kind, path)`` for each find, not kept: ``found``, ``out`` (a link out of the top),
    ``into`` (one into a folder passed by: followed where it says true), ``venv``, ``deep``."""
    return _Walker(top, lists, act).run()


class _Folder:
    __slots__ = ("path", "fd", "listing", "pending", "early", "marks", "decided", "followed")

    def __init__(self, path: str, fd: int, listing: object, followed: bool) -> None:
        self.path, self.listing, self.followed = path, listing, followed  # (through a link)
        self.fd = fd  # (a deep one's own: the folders in it opened by it)
        self.pending: list[str] = []  # (the folders in it to walk, by name; a link's: by path)
        self.early: list[tuple[str, str]] = []  # (finds before it is known to be passed by)
        self.marks: list[str] = []  # (a venv's or a cache's, among its names)
        self.decided = False  # (whether it is passed by is known)

    def release(self) -> None:
        os.close(self.fd) if self.fd >= 0 else None


class _Walker:
    def __init__(self, top: str, lists: dict[str, list[str]], act: object) -> None:
        deeper = lists["deeper"]
        self.files = {n for n in deeper if "*" not in n and not n.endswith("/")}
        self.dirs = {n[:-1] for n in deeper if "*" not in n and n.endswith("/")}
        self.patterns = [n for n in deeper if "*" in n]
        self.starts = tuple(p.partition("*")[0] for p in self.patterns if not p.startswith("*"))
        self.ends = tuple(p.rstrip("/").partition("*")[2] for p in self.patterns
                          if p.startswith("*"))
        self.roots, self.skip = lists["rw"] + lists["temp"] + ["/dev"], lists["laterskip"]
        self.ok, self.oknames = lists.get("laterok", []), set(lists.get("laterokname", []))
        self.skipnames = {os.path.basename(p) for p in self.skip}
        self.since = int((lists.get("since") or ["0"])[0])
        self.passed = set(lists.get("passed", []))
        self.top, self.act, self.walk, self.open = top, act, Walk(), 0
        self.seen: set[str] = set()  # (folders reached through a link: each once)
        self.places: dict[str, bool] = {}  # (whether a folder is passed by, as a link finds)
        self.most_open = _OPEN_MOST

    def run(self) -> Walk:
        import resource  # (a folder being read holds a descriptor: as many as the walk may)

        was = resource.getrlimit(resource.RLIMIT_NOFILE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (was[1], was[1]))
            self.most_open = max(16, min(_OPEN_MOST, was[1] - 64))
        except (OSError, ValueError):
            self.most_open = max(16, min(_OPEN_MOST, was[0] - 64))
        try:
            stack = [f for f in [self._open(None, self.top, True)] if f]
            while stack and (self.walk.finished or self.act):
                folder = stack[-1]
                if folder.pending:
                    child = self._open(folder, folder.pending.pop(), False)
                    stack += [child] if child else []
                elif folder.listing is not None:
                    self._read(folder, max(_SHARE_LEAST, _NAMES >> min(len(stack), 30)))
                else:
                    stack.pop().release()
            for folder in stack:
                self._close(folder)
                folder.release()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, was)
        return self.walk

    def _open(self, parent: _Folder | None, name: str, followed: bool) -> _Folder | None:
        """``name`` in ``parent``: by its path while that is short; deeper, by the parent's
        handle (one step, however deep: no walk pays for every level above a folder). A
        link's target, or the top, by its path."""
        path = name if parent is None or name.startswith("/") else f"{parent.path}/{name}"
        if too_long(path, _LONGEST) and parent is not None and self.act:
            path = self._lift(parent.path, name) or path  # (so that what is in it is named)
        fd = -1
        try:
            if too_long(path, _LONGEST):
                raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
            if parent and len(parent.path) > _SHORT and path.endswith("/" + name):
                parent.fd = os.open(parent.path, _DIR) if parent.fd < 0 else parent.fd
                fd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=parent.fd)
            listing = os.scandir(path if fd < 0 else fd)
        except OSError as exc:
            if fd >= 0:
                os.close(fd)
            if not self._reopened(path, exc):
                return None
            try:
                fd, listing = -1, os.scandir(path)
            except OSError as again:
                self._unreadable(path, again)
                return None
        self.open += 1
        return _Folder(path, fd, listing, followed or name.startswith("/"))

    def _lift(self, parent: str, name: str) -> str:
        """A folder a command made too deep for its path to be named (none was before it):
        moved to the top, under a name no tool reads, and walked there."""
        fds: list[int] = []
        try:
            fds += [os.open(parent, _DIR), os.open(self.top, _DIR)]  # (one gone: none lifted)
            for n in range(1_000):
                free = f"maker-aside.deep.{n if n < 100 else time.time_ns()}"
                if not os.path.lexists(os.path.join(self.top, free)):
                    os.rename(name, free, src_dir_fd=fds[0], dst_dir_fd=fds[1])
                    self.act("deep", os.path.join(self.top, free))  # type: ignore[operator]
                    return os.path.join(self.top, free)
        except OSError:
            pass
        finally:
            for fd in fds:
                os.close(fd)
        return ""

    def _reopened(self, path: str, exc: OSError) -> bool:
        """Whether a folder that could not be read can be now: after a command, one of the
        person's it made unreadable is made readable again (before it, none was). Else why
        not is kept, unless it is gone, or another user's (a container's volume)."""
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) or others(path, exc):
            return False
        if self.act and exc.errno == errno.EACCES and make_readable(path):
            return True
        self._unreadable(path, exc)
        return False

    def _unreadable(self, path: str, exc: OSError) -> None:
        if self.walk.finished:
            self.walk.finished, self.walk.why = False, f"{path} cannot be read ({exc.strerror})"

    def _read(self, folder: _Folder, share: int) -> None:
        """Read on in ``folder``'s names: to their end, or until a share is held. (The
        walk's hot loop: a plain file, most names, costs a set lookup and two prefix tests.)"""
        whole, files, starts, ends = self.open > self.most_open, self.files, self.starts, self.ends
        pending, early, listed, skip = folder.pending, folder.early, 0, self.skipnames
        try:
            for entry in folder.listing:  # type: ignore[attr-defined]
                listed, low = listed + 1, entry.name.lower()
                if entry.name in _MARKS:  # (in any form: a venv whose marker is a link too)
                    folder.marks.append(entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if self._named(low, True, False):
                        self._find(folder, "found", f"{folder.path}/{entry.name}")
                    elif low != "node_modules" and (entry.name not in skip or f"{folder.path}/"
                                                    f"{entry.name}" not in self.skip):
                        pending.append(entry.name)
                elif entry.is_symlink():
                    if self._named(low, False, True):
                        self._find(folder, "found", f"{folder.path}/{entry.name}")
                    elif low != "node_modules" and (entry.name not in skip or f"{folder.path}/"
                                                    f"{entry.name}" not in self.skip):
                        self._find(folder, "link", f"{folder.path}/{entry.name}")
                elif low in files or (low.startswith(starts) or low.endswith(ends)) and \
                        self._named(low, False, False):
                    self._find(folder, "found", f"{folder.path}/{entry.name}")
                if not whole and len(pending) + len(early) >= share:
                    if not folder.decided:
                        self._decide(folder, [m for m in _MARKS if os.path.lexists(
                            os.path.join(folder.path, m))])
                    self.walk.listed += listed
                    return
        except OSError as exc:  # (a folder's names that cannot all be read: said)
            if exc.errno != errno.ENOENT:
                self._unreadable(folder.path, exc)
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
        elif os.path.basename(path).lower() in self.oknames:
            if not self.act and len(self.walk.named) < _NAMED_MOST:  # (a repository there)
                self.walk.named[path] = ident(path)  # (held, not counted as the person's)
        elif self.act:
            self.act("found", path)  # type: ignore[operator]
        else:
            self.walk.found[path] = ident(path)
            self._bound(len(self.walk.found), _FOUND_MOST, "files that run code later")

    def _decide(self, folder: _Folder, marks: list[str]) -> None:
        """Whether ``folder`` is passed by (a venv or a cache older than the plan, or one
        passed by before the command), now its markers are known; its early finds then."""
        path, folder.decided = folder.path, True
        if "pyvenv.cfg" in marks or "conda-meta" in marks:
            self._venv(path)
        key = f"{folder_id(path)} {path}" if marks else ""
        passed = bool(marks) and not folder.followed and path != self.top and (
            key in self.passed or older(path, marks, self.since))
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
        """A link among the names: into a folder the walk passes by, followed (into a place
        it skips, or deep below the top: not); out of the top where a command may write,
        kept, not looked in; else the walk goes there anyway, or no command writes there."""
        there = folder_id(path)
        if not there or inside(path, self.ok):
            return  # (not a folder; or in the step's own place)
        real = real_folder(path)
        if inside(real, [self.top]):
            skipped = inside(real, self.skip) or real.count("/") > _DEEPEST + self.top.count("/")
            if not skipped and not self._passed_place(real) or (
                    self.act and not self.act("into", path)):  # type: ignore[operator]
                return
            if there not in self.seen and not skipped:
                self.seen.add(there)
                folder.pending.append(real)  # (by its path: a link's)
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
            if low == "node_modules" or self._named(low, True, False):
                return True
            if path not in self.places:
                if len(self.places) >= _LINKS_MOST:
                    self.places.clear()
                marks = [m for m in _MARKS if os.path.lexists(os.path.join(path, m))]
                self.places[path] = bool(marks) and (
                    f"{folder_id(path)} {path}" in self.passed or older(path, marks, self.since))
            if self.places[path]:
                return True
        return False

    def _bound(self, kept: int, most: int, what: str) -> None:
        if kept > most and self.walk.finished:
            self.walk.finished, self.walk.why = False, f"more than {most:,} {what} below it"
