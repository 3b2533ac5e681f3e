"""How the box's first process looks at files: what Python runs at every start of a
virtual environment in a step's folder (its ``.pth`` files, ``sitecustomize`` and
``usercustomize`` in any form); a file read (a regular file only, without waiting: a FIFO
there is not one; no more than a bound of it); what a path is (:func:`ident`); and a file
moved aside under a name no tool reads (:func:`put_aside`).

Standard library only: ``box_setup.py`` reads it from beside it (first, then
``box_walk.py`` and ``box_after.py``), for every boxed call.
"""

from __future__ import annotations

import errno
import os
import stat
import time

_READ_MAX = 64 << 20  # (an index of a very large repository; a plan or a .pth: far less)
Seen = tuple[int, int, int, int] | None  # (mtime, ctime, size, inode: ctime no one sets)
UNDONE_NOT = "maker-undo-unfinished"  # (at the top: an undo that did not finish, and why)
Ident = tuple[int, int, int]  # (device, inode, ctime in ns: what no command can set back)


def sites_of(tops: list[str], venvs: list[str]) -> list[str]:
    """The site-packages of each virtual environment: at the top of the step's folder,
    and those the walk found below it."""
    sites = []
    found = [os.path.join(top, n) for top in tops for n in listed(top)]
    for venv in dict.fromkeys([*found, *venvs]):
        lib = os.path.join(venv, "lib")
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")) or os.path.isdir(
                os.path.join(venv, "conda-meta")):  # (a venv, or a conda or pixi env)
            sites += [os.path.join(lib, v, "site-packages") for v in listed(lib)
                      if os.path.isdir(os.path.join(lib, v, "site-packages"))]
    return sites


def startup(site: str) -> dict[str, Seen]:
    """What Python runs at every start from ``site``: its ``.pth`` files and
    ``sitecustomize``/``usercustomize`` (a module, a package, compiled), with their stat."""
    return {n: stat_of(os.path.join(site, n)) for n in listed(site) if n.endswith(".pth")
            or n.partition(".")[0] in ("sitecustomize", "usercustomize")}  # (any form)


def unrecorded(site: str, before: dict[str, Seen], budget: int = 64 << 20) -> list[str]:
    """The start-up files the command made or changed in ``site`` that no installed
    package's RECORD lists with their hash (an installer's own are: pip's, an editable
    install's; a file changed by hand no longer matches), reading at most ``budget`` bytes
    of RECORDs (past it, what is not yet read lists none)."""
    changed = [n for n, seen in startup(site).items() if before.get(n, ()) != seen]
    if not changed:
        return []
    recorded: dict[str, str] = {}
    for info in listed(site):
        record = read_file(os.path.join(site, info, "RECORD"), min(16 << 20, budget)) \
            if info.endswith(".dist-info") and budget > 0 else None
        budget -= len(record or b"")
        for line in (record or b"").decode("utf-8", "replace").splitlines():
            name, _, rest = line.partition(",")
            recorded[name] = rest.split(",")[0]
    return [os.path.join(site, n) for n in changed
            if not _matches(os.path.join(site, n), recorded.get(n, ""))]


def _matches(path: str, hashed: str) -> bool:
    """Whether the file's content is what its RECORD line says (``sha256=<urlsafe b64>``)."""
    import base64
    import hashlib

    data = read_file(path, 16 << 20)
    if data is None or not hashed.startswith("sha256="):
        return False
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return digest.decode() == hashed.removeprefix("sha256=")

def stat_of(path: str) -> Seen:
    try:
        seen = os.lstat(path)
    except OSError:
        return None
    return seen.st_mtime_ns, seen.st_ctime_ns, seen.st_size, seen.st_ino

def read_file(path: str, limit: int = _READ_MAX, *, follow: bool = False) -> bytes | None:
    """A regular file's bytes (None for anything else, and for one over ``limit``),
    opened without waiting: a FIFO there never holds the box. ``follow``: through a
    symbolic link (as git reads its index)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW))
    except OSError:
        return None
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode) or seen.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as data:
            return data.read(limit + 1)[:limit]
    finally:
        os.close(fd)

def listed(folder: str) -> list[str]:
    try:
        return os.listdir(folder) if os.path.isdir(folder) else []
    except OSError:
        return []


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
    (``maker-aside.<name>``, numbered if taken, the name left out if too long, then a name
    of the process and the time: always one free); its new path. Done in the folder by its
    handle: a path too long to name whole still moves."""
    folder, name = os.path.split(path)
    fd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for n in range(10_000):
            moved = f"maker-aside.{n}.{name}" if n else f"maker-aside.{name}"
            moved = moved if len(os.fsencode(moved)) <= 255 and n < 100 else \
                f"maker-aside.{os.getpid()}.{time.time_ns()}.{n}"
            try:
                os.lstat(moved, dir_fd=fd)
            except FileNotFoundError:
                os.rename(name, moved, src_dir_fd=fd, dst_dir_fd=fd)
                return os.path.join(folder, moved)
    finally:
        os.close(fd)
    raise OSError(f"no free name beside {path}")


def put_aside(path: str, why: str) -> str:
    """Move ``path`` aside (removed where it cannot be); what was done, in words (it
    begins ``could not`` where neither was done)."""
    try:
        return (f"moved {path} aside, to {aside(path)}: {why}, and it runs code later "
                "outside the box (the step's writes do not name it)")
    except Exception as exc:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                import shutil  # (rarely needed: not every boxed call's import)

                shutil.rmtree(path)
            else:
                os.unlink(path)
            return f"removed {path}: {why}, and it runs code later outside the box"
        except Exception:
            return (f"could not move {path} aside ({exc}): it runs code later outside the "
                    "box; remove it before running tools in its folder")


def inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def folder_id(path: str) -> str:
    """A folder's device and inode (a link's target's), as text; "" if it is none."""
    try:
        seen = os.stat(path)
    except OSError:
        return ""
    return f"{seen.st_dev}:{seen.st_ino}" if stat.S_ISDIR(seen.st_mode) else ""


def real_folder(path: str) -> str:
    """Where a link to a folder leads, as the kernel names it (one call, however deep),
    else as ``realpath`` finds it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return os.path.realpath(path)
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)


def inner(folder: str, most: int = 5_000) -> frozenset[tuple[str, int, int, int]] | None:
    """What a folder holds, each file and folder by what it is (``ident``: ctime too),
    for a folder held past the binds; None past ``most`` (then it is held by its own)."""
    seen: set[tuple[str, int, int, int]] = set()
    for root, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            seen.add((os.path.join(root, name), *ident(os.path.join(root, name))))
        if len(seen) > most:
            return None
    return frozenset(seen)


def mark_undone(tops: list[str], why: list[str]) -> None:
    """Say at the top of the step's folder that the undo did not finish: until a person
    removes the mark, no command runs there (what the command left is not taken as
    theirs). Written as a regular file only, never through a link nor into a FIFO (what
    a command left there is moved aside first), its words on one line, printable."""
    text = "".join(c if c.isprintable() else "?" for c in "; ".join(why))[:4000] + "\n"
    for top in tops:
        mark = os.path.join(top, UNDONE_NOT)
        for _ in range(2):
            try:
                fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW |
                             os.O_NONBLOCK, 0o644)
            except OSError:
                put_aside(mark, "it stood where maker says its undo did not finish")
                continue
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.write(fd, text.encode("utf-8", "replace"))
                    break
            finally:
                os.close(fd)
            put_aside(mark, "it stood where maker says its undo did not finish")


def older(folder: str, marks: list[str], since: int) -> bool:
    """Whether a venv or a cache folder is older than the plan's first boxed call, its
    markers too."""
    try:
        return max(os.lstat(os.path.join(folder, m)).st_ctime_ns for m in ["", *marks]) < since
    except OSError:
        return False


def others(folder: str, exc: OSError) -> bool:
    """Whether ``folder`` is unreadable as another user's (a container's volume): no
    command of the person's made it so, or put anything there."""
    try:
        return exc.errno in (errno.EACCES, errno.EPERM) and os.lstat(folder).st_uid != \
            os.getuid()
    except OSError:
        return False


def too_long(path: str, most: int) -> bool:
    """Whether ``path`` is longer than ``most`` bytes (encoded only where it may be)."""
    return len(path) > most // 4 and len(os.fsencode(path)) > most


def make_readable(path: str) -> bool:
    """Give a folder's owner back what reading it takes (a command took it away)."""
    try:
        os.chmod(path, (os.lstat(path).st_mode & 0o7777) | 0o700)
        return True
    except OSError:
        return False
