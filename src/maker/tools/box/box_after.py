"""What the box's first process undoes when the command ends: what git or a tool outside
the box would otherwise run later.

- a ``commondir`` in the repository's git folder (``gitdir``): git would read another
  folder's config and hooks for the repository (one there before the command refuses
  it: :meth:`After.refusal`);
- a file that runs code later made at the top of the step's folder (``laterdir``, its
  names in ``later``: lower case, one ``*`` for any run) is removed, a folder moved aside;
  one below the top (its names in ``deeper``) that was not there before the command ran,
  or is no longer what it was (``box_walk.py``: those there before are held,
  :meth:`After.hold`), is moved aside under a name no tool reads (a ``.pyc`` removed),
  unless it lies in a place the step's ``writes`` name (``laterok``), as is a link the
  command made out of the step's folder to a place a command may write;
- a ``.pth`` file (or ``sitecustomize`` in any form) the command wrote into a virtual
  environment's site-packages anywhere in the step's folder, unless an installed
  package's ``RECORD`` lists it with its hash (Python runs it at every start there);
- ``exec`` lines a command wrote into a rebase's or a cherry-pick's plan (git runs them
  at the person's next ``git rebase --continue``);
- a gitlink added to the repository's index (``index``, with ``git``): a nested
  repository, which the person's own ``git status`` or ``git diff`` enters, running what
  its config names (a clean filter, ``core.fsmonitor``). It is taken out of the index
  (``git update-index --force-remove``, which enters nothing); its files stay, untracked,
  and git does not enter an untracked repository. A step that means to add a submodule
  names ``.gitmodules`` in its ``writes`` (no ``index`` line then).

Each part is undone on its own: one that fails is said and the others still run. Only
regular files are read, without waiting (a FIFO there is not one), and no more than
``_READ_MAX`` of any. Read by ``box_setup.py`` from beside it (maker's data dir, read-only
to every step), for every boxed call: the standard library only, and ``subprocess`` only
where the index may hold a gitlink.
"""

from __future__ import annotations

import os
import stat

if "below" not in globals():  # (in the box, box_setup reads box_walk's code in first)
    from maker.tools.box.box_walk import (
        UNFINISHED,
        Walk,
        below,
        ident,
        inside,
        matches,
        put_aside,
        sites_of,
    )

_BOUND_MOST = 2_000  # (bound read-only; past them, one is held by what it is, ctime too)
MODE = b"\x00\x00\xe0\x00"  # (160000, a gitlink's mode, as the index stores it)
_READ_MAX = 64 << 20  # (an index of a very large repository; a plan or a .pth: far less)
Seen = tuple[int, int, int, int] | None  # (mtime, ctime, size, inode: ctime no one sets)


class After:
    def __init__(self, lists: dict[str, list[str]]) -> None:
        self.guarded = [f"{g}/commondir" for g in lists["gitdir"]]
        self.names = lists["later"]
        self.tops = lists["laterdir"]
        self.before = {folder: set(_listed(folder)) for folder in self.tops}
        self.todos = {t: _digest(t) for g in lists["gitdir"] for t in (
            f"{g}/rebase-merge/git-rebase-todo", f"{g}/sequencer/todo")}
        self.lists = lists
        self.walked: list[Walk] | None = None
        self.held = {ident(p) for p in lists["held"]}  # (wherever it lies now: the same)
        self.bound = {ident(p)[:2] for p in lists["bound"]}  # (changed from outside only)
        self.held_links = {ident(p) for p in lists["links"]}  # (out of the folder: kept)
        self.sites = {site: _startup(site) for site in sites_of(self.tops, lists["venvs"])}
        self.index, self.git = (lists["index"] + [""])[0], (lists["git"] + [""])[0]
        self.seen = _stat(self.index) if self.git and self.index else None
        self.links = gitlinks(self.git, self.index) if self.seen and may_link(self.index) \
            else set()

    @staticmethod
    def hold(lists: dict[str, list[str]]) -> list[str]:
        """Walk below the top of the step's folder before the command runs: what runs
        code later there is held (``held``, with the virtual environments: ``venvs``);
        what of it the box binds read-only over itself (not a link, not the step's)."""
        for key in ("held", "venvs", "passed", "bound", "links", "unfinished"):
            lists[key] = []
        for top in lists["laterdir"]:
            walk = below(top, lists)
            lists["held"] += walk.found
            lists["venvs"] += walk.venvs
            lists["passed"] += walk.passed
            lists["links"] += walk.links
            lists["unfinished"] += [] if walk.finished else [UNFINISHED.format(top, walk.why)]
        lists["bound"] = [p for p in lists["held"] if not os.path.islink(p) and not inside(
            p, lists["laterok"]) and not p.endswith(".pyc")][:_BOUND_MOST]
        return lists["bound"]

    def refusal(self) -> str:
        """Why the command may not run here ("" when it may)."""
        for path in self.guarded:
            if os.path.lexists(path):
                return (f"{path} exists: git would read another folder's config and hooks "
                        "for this repository; remove it (a repository's own git folder has "
                        "none)")
        return ""

    def undo(self) -> list[str]:
        """Undo what the command left that runs later; what was undone, in words."""
        said: list[str] = []
        for part in (self._commondir, self._gitlinks, self._todos, self._made, self._deeper,
                     self._sites):  # (what reads a venv's RECORD files last: the slowest)
            try:
                said += part()
            except Exception as exc:  # (any failure of one part stops none of the others)
                said.append(f"could not finish undoing what the command left "
                            f"({part.__name__[1:]}: {type(exc).__name__}: {exc}); look at it "
                            "before running git or the project's python yourself")
        return said

    def _commondir(self) -> list[str]:
        said = []
        for path in self.guarded:
            if os.path.lexists(path):
                _remove(path)
                said.append(f"removed {path}, which the command made: git would have read "
                            "another folder's config and hooks")
        return said

    def _gitlinks(self) -> list[str]:
        if not self.git or not self.index or _stat(self.index) == self.seen \
                or _stat(self.index) is None or not may_link(self.index):
            return []
        added, failed = take_out(self.git, self.index, self.links)
        said = [f"took the nested repository {p} out of git's index: git would run the "
                "programs its own config names (to add a submodule, the step's writes name "
                ".gitmodules)" for p in added]
        if failed:
            said.append(f"could not take the nested repositories {', '.join(added)} out of "
                        f"git's index ({failed}): remove them yourself (git rm --cached) "
                        "before running git there")
        return said

    def _todos(self) -> list[str]:
        return [f"took the exec lines out of {todo}, which the command wrote: git would run "
                "them at the person's next rebase --continue"
                for todo, seen in self.todos.items()
                if _digest(todo) not in (None, seen) and _no_exec(todo)]

    def _sites(self) -> list[str]:
        said = []
        now = set(sites_of(self.tops, [v for walk in self.walk() for v in walk.venvs]))
        for site in sorted(now | set(self.sites)):  # (a venv the command made: all new)
            for path in _unrecorded(site, self.sites.get(site, {})):
                done = _remove(path)
                said.append(f"removed {path}, which the command wrote: Python runs it at "
                            "every start of the venv, and no installed package lists it"
                            if done.startswith("removed") else done)
        return said

    def _made(self) -> list[str]:
        said = []
        for path in self.made():  # (a folder moved aside: a person's editor's, made meanwhile)
            said.append(put_aside(path, "the command made it") if os.path.isdir(path)
                        and not os.path.islink(path) else _remove(path))
        return said

    def _deeper(self) -> list[str]:
        said, ok, names = [], self.lists["laterok"], self.lists["laterokname"]
        for top, walk in zip(self.tops, self.walk(), strict=True):
            for path, seen in walk.found.items():
                if seen in self.held or seen[:2] in self.bound or inside(path, ok) or \
                        os.path.basename(path).lower() in names:
                    continue
                said.append(_remove(path) if path.endswith(".pyc") else
                            put_aside(path, "the command made or moved it"))
            said += [put_aside(link, "it leads out of the step's folder, where a command "
                                     "may write") for link in walk.links
                     if ident(link) not in self.held_links and not inside(link, ok)]
            said += [] if walk.finished else [UNFINISHED.format(top, walk.why)]
        return said

    def walk(self) -> list[Walk]:
        """Below the top of each step's folder, once the command has ended."""
        if self.walked is None:
            self.walked = [below(top, self.lists) for top in self.tops]
        return self.walked

    def made(self) -> list[str]:
        return [os.path.join(folder, name) for folder, before in self.before.items()
                for name in _listed(folder) if name not in before and
                any(matches(name.lower(), n) for n in self.names)]


def gitlinks(git: str, index: str) -> set[str]:
    """The gitlinks in the index of the git folder that holds ``index``."""
    import subprocess  # (only where the index may hold one)

    try:
        out = subprocess.run(_git(git, index) + ["ls-files", "--stage", "-z"],
                             capture_output=True, timeout=30, check=True,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape")
            for entry in out.split(b"\0") if entry.startswith(b"160000 ") and b"\t" in entry}


def take_out(git: str, index: str, before: set[str]) -> tuple[list[str], str]:
    """Take every gitlink the index holds now and did not hold ``before`` out of it: the
    ones found, and why taking them out failed ("" when it did not)."""
    import subprocess

    added = sorted(gitlinks(git, index) - before)
    if not added:
        return [], ""
    done = subprocess.run(_git(git, index) + ["update-index", "--force-remove", "--", *added],
                          capture_output=True, timeout=30, check=False,
                          stdin=subprocess.DEVNULL)
    left = gitlinks(git, index) & set(added)
    if done.returncode or left:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["left"]
        return sorted(left) or added, why[0][:200]
    return added, ""


def _git(git: str, index: str) -> list[str]:
    # (plumbing that reads and writes the index only: no filter, fsmonitor or hook runs)
    gitdir = os.path.dirname(index)
    return [git, f"--git-dir={gitdir}", f"--work-tree={os.path.dirname(gitdir)}",
            "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]


def _stat(path: str) -> Seen:
    try:
        seen = os.lstat(path)
    except OSError:
        return None
    return seen.st_mtime_ns, seen.st_ctime_ns, seen.st_size, seen.st_ino


def _read(path: str, limit: int = _READ_MAX, *, follow: bool = False) -> bytes | None:
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


def may_link(index: str) -> bool:
    """Whether the index may hold a gitlink: its bytes hold a gitlink's mode, or a split
    index keeps entries in a shared index beside it, or it is too large to look into. One
    that is no regular file (a FIFO, a device) git cannot read either: no."""
    data = _read(index, follow=True)
    if data is None:
        try:
            return stat.S_ISREG(os.stat(index).st_mode)  # (a regular one: too large)
        except OSError:
            return False
    return MODE in data or any(n.startswith("sharedindex.")
                               for n in _listed(os.path.dirname(index)))


def _digest(path: str) -> bytes | None:
    """A plan's content, to compare (a stat can be put back as it was); a mark for one
    that is not a plain file, or is too large; None where there is none."""
    data = _read(path, 1 << 20)
    if data is None:
        return None if not os.path.lexists(path) else b"\0(not a plain file)"
    return data


def _no_exec(todo: str) -> bool:
    """A rebase's or a sequencer's plan without its ``exec`` (``x``) lines, which git runs
    as commands; whether it had any (one that is not a plain file, or too large, goes)."""
    data = _read(todo, 1 << 20)
    if data is None:
        _remove(todo)
        return True
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    kept = [line for line in lines if line.strip().split(" ")[0] not in ("exec", "x")
            and not line.strip().startswith(("exec\t", "x\t"))]
    if len(kept) == len(lines):
        return False
    with open(todo, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write("\n".join(kept))
    return True


def _startup(site: str) -> dict[str, Seen]:
    """What Python runs at every start from ``site``: its ``.pth`` files and
    ``sitecustomize``/``usercustomize`` (a module, a package, compiled), with their stat."""
    return {n: _stat(os.path.join(site, n)) for n in _listed(site) if n.endswith(".pth")
            or n.partition(".")[0] in ("sitecustomize", "usercustomize")}  # (any form)


def _unrecorded(site: str, before: dict[str, Seen]) -> list[str]:
    """The start-up files the command made or changed in ``site`` that no installed
    package's RECORD lists with their hash (an installer's own are: pip's, an editable
    install's; a file changed by hand no longer matches)."""
    changed = [n for n, seen in _startup(site).items() if before.get(n, ()) != seen]
    if not changed:
        return []
    recorded: dict[str, str] = {}
    budget = 64 << 20  # (all RECORDs read, at most: past it, what is not yet read is none)
    for info in _listed(site):
        record = _read(os.path.join(site, info, "RECORD"), min(16 << 20, budget)) \
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

    data = _read(path, 16 << 20)
    if data is None or not hashed.startswith("sha256="):
        return False
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return digest.decode() == hashed.removeprefix("sha256=")


def _listed(folder: str) -> list[str]:
    try:
        return os.listdir(folder) if os.path.isdir(folder) else []
    except OSError:
        return []


def _remove(path: str) -> str:
    """Remove ``path``; what was done, in words."""
    import shutil  # (rarely needed: not every boxed call's import)

    try:
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else \
            os.unlink(path)
        return f"removed {path}, which the command made: it runs code later outside the box"
    except Exception:  # (too deep for rmtree too): moved aside, then
        return put_aside(path, "it could not be removed")

