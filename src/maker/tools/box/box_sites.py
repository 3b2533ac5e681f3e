"""What Python runs at every start of a virtual environment in a step's folder (its
``.pth`` files, ``sitecustomize`` and ``usercustomize`` in any form), and how the box's
first process reads files: a regular file only, without waiting (a FIFO there is not
one), and no more than a bound of it.

Standard library only: ``box_setup.py`` reads it from beside it (after ``box_walk.py``,
before ``box_after.py``), for every boxed call.
"""

from __future__ import annotations

import os
import stat

_READ_MAX = 64 << 20  # (an index of a very large repository; a plan or a .pth: far less)
Seen = tuple[int, int, int, int] | None  # (mtime, ctime, size, inode: ctime no one sets)


def sites_of(tops: list[str], venvs: list[str]) -> list[str]:
    """The site-packages of each virtual environment: at the top of the step's folder,
    and those the walk found below it."""
    sites = []
    found = [os.path.join(top, n) for top in tops for n in listed(top)]
    for venv in dict.fromkeys([*found, *venvs]):
        lib = os.path.join(venv, "lib")
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
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
