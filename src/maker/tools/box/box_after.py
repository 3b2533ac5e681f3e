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

Each part is undone on its own: one that fails is said and the others still run, and
a mark at the top of the step's folder (``UNDONE_NOT``) then stops every later command
there (what the command left is not taken as the person's) until a person removes it. Only
regular files are read, without waiting and within a bound (``box_sites.read_file``).
Read by ``box_setup.py`` from beside it (maker's data dir, read-only to every step), for
every boxed call: the standard library only, and ``subprocess`` only where the index may
hold a gitlink.
"""

from __future__ import annotations

import os
import stat

if "below" not in globals():  # (in the box, box_setup reads box_walk's and box_sites' first)
    from maker.tools.box.box_sites import (
        UNDONE_NOT,
        ident,
        inner,
        inside,
        listed,
        mark_undone,
        matches,
        put_aside,
        read_file,
        sites_of,
        startup,
        stat_of,
        unrecorded,
    )
    from maker.tools.box.box_walk import UNFINISHED, Walk, below

_BOUND_MOST = 2_000  # (bound read-only; past them, one is held by what it is, ctime too)
MODE = b"\x00\x00\xe0\x00"  # (160000, a gitlink's mode, as the index stores it)


class After:
    def __init__(self, lists: dict[str, list[str]]) -> None:
        self.guarded = [f"{g}/commondir" for g in lists["gitdir"]]
        self.names = lists["later"]
        self.tops = lists["laterdir"]
        self.before = {folder: set(listed(folder)) for folder in self.tops}
        self.todos = {t: _digest(t) for g in lists["gitdir"] for t in (
            f"{g}/rebase-merge/git-rebase-todo", f"{g}/sequencer/todo")}
        self.lists = lists
        self.walked: list[Walk] | None = None
        self.judged: list[str] = []
        self.stuck: list[str] = []  # (what could be neither moved aside nor removed)
        self.held = {ident(p) for p in lists["held"]}  # (wherever it lies now: the same)
        self.bound = {ident(p)[:2] for p in lists["bound"]}  # (changed from outside only)
        self.held_links = {ident(p) for p in lists["links"]}  # (the person's: kept)
        bound = set(lists["bound"])  # (a folder held past the binds: what is in it, too)
        self.inner = {ident(p): inner(p) for p in lists["held"] if p not in bound
                      and os.path.isdir(p) and not os.path.islink(p)}
        self.sites = {site: startup(site) for site in sites_of(self.tops, lists["venvs"])}
        self.index, self.git = (lists["index"] + [""])[0], (lists["git"] + [""])[0]
        self.seen = stat_of(self.index) if self.git and self.index else None
        self.links = gitlinks(self.git, self.index) if self.seen and may_link(self.index) \
            else set()

    @staticmethod
    def hold(lists: dict[str, list[str]]) -> list[str]:
        """Walk below the top of the step's folder before the command runs: what runs
        code later there is held (``held``, with the virtual environments: ``venvs``);
        what of it the box binds read-only over itself (not a link, not the step's; the
        person's first, then the repositories the step may make: ``laterokname``)."""
        for key in ("held", "venvs", "passed", "bound", "links", "unfinished"):
            lists[key] = []
        named: list[str] = []
        for top in lists["laterdir"]:
            walk = below(top, lists)
            lists["held"] += walk.found
            named += walk.named
            lists["venvs"] += walk.venvs
            lists["passed"] += walk.passed
            lists["links"] += walk.links
            lists["unfinished"] += [] if walk.finished else [UNFINISHED.format(top, walk.why)]
            if os.path.lexists(os.path.join(top, UNDONE_NOT)):  # (an earlier undo's)
                lists["unfinished"].append(UNFINISHED.format(top, (
                    f"the undo after an earlier command did not finish, and what it made may "
                    f"still be there (what stopped it: {os.path.join(top, UNDONE_NOT)}); "
                    "look below it, then remove that file")))
        bound = [p for p in [*lists["held"], *named] if not os.path.islink(p) and not inside(
            p, lists["laterok"]) and not p.endswith(".pyc")]
        if len(bound) > _BOUND_MOST:  # (folders first: one held past the binds is walked)
            bound.sort(key=lambda p: not os.path.isdir(p))
        lists["bound"] = bound[:_BOUND_MOST]
        lists["held"] += named
        return lists["bound"]

    def refusal(self) -> str:
        """Why the command may not run here ("" when it may)."""
        if any(held is None for held in self.inner.values()):
            return (f"a folder that runs code later, held past the {_BOUND_MOST:,} maker "
                        "binds read-only, holds more than 5,000 files: what a command changes "
                        "in it could not be seen (remove what is not needed, or set boundary: "
                        "off in plans/settings.yaml)")
        for path in self.guarded:
            if os.path.lexists(path):
                return (f"{path} exists: git would read another folder's config and hooks "
                        "for this repository; remove it (a repository's own git folder has "
                        "none)")
        return ""

    def undo(self) -> list[str]:
        """Undo what the command left that runs later; what was undone, in words."""
        said: list[str] = []
        failed = []
        for part in (self._commondir, self._gitlinks, self._todos, self._made, self._deeper,
                     self._sites):  # (what reads a venv's RECORD files last: the slowest)
            try:
                said += part()
            except Exception as exc:  # (any failure of one part stops none of the others)
                failed.append(f"{part.__name__[1:]}: {type(exc).__name__}: {exc}")
                said.append(f"could not finish undoing what the command left ({failed[-1]}); "
                            "look at it before running git or the project's python yourself")
        failed += [f"could not move {p} aside" for p in dict.fromkeys(self.stuck)]
        if failed or any(not w.finished for w in self.walked or []):
            mark_undone(self.tops, failed + [w.why for w in self.walked or [] if w.why])
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
        if not self.git or not self.index or stat_of(self.index) == self.seen \
                or stat_of(self.index) is None or not may_link(self.index):
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
            for path in unrecorded(site, self.sites.get(site, {})):
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
        walks = self.walk()  # (first: what it undoes is said as it goes)
        return self.judged + [UNFINISHED.format(top, walk.why) for top, walk in zip(
            self.tops, walks, strict=True) if not walk.finished]

    def walk(self) -> list[Walk]:
        """Below the top of each step's folder, once the command has ended: what it made
        there is undone as the walk finds it (:meth:`judge`)."""
        if self.walked is None:
            self.judged = []
            self.walked = [below(top, self.lists, self.judge) for top in self.tops]
        return self.walked

    def judge(self, kind: str, path: str) -> bool:
        """What the walk after the command found (``box_walk.below``), undone where the
        command made it or changed it; whether a link into a folder passed by is kept."""
        seen, said = ident(path), self.judged
        if kind == "deep":
            said.append(f"moved a folder the command made too deep to name to {path}: what "
                        "runs code later in it is moved aside as anywhere")
        elif kind == "venv":  # (past the ones whose start-up files were kept: RECORDs unread)
            for site in sites_of([], [path]):
                said += [_remove(p) for p in unrecorded(site, self.sites.get(site, {}), 0)]
        elif kind == "found" and seen not in self.held and seen[:2] not in self.bound:
            said.append(_remove(path) if path.endswith(".pyc") else
                        put_aside(path, "the command made or moved it"))
        elif kind == "found" and seen in self.inner and inner(path) != self.inner[seen]:
            said.append(put_aside(path, "the command changed what is in it"))
        elif kind in ("out", "into") and seen not in self.held_links:
            said.append(put_aside(path, "it leads out of the step's folder, where a command "
                                        "may write" if kind == "out" else
                                  "it leads into a folder the walk passes by"))
            self.stuck += [path] if said[-1].startswith("could not") else []
            return False
        self.stuck += [path] if said and said[-1].startswith("could not") else []
        return True

    def made(self) -> list[str]:
        return [os.path.join(folder, name) for folder, before in self.before.items()
                for name in listed(folder) if name not in before and
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


def may_link(index: str) -> bool:
    """Whether the index may hold a gitlink: its bytes hold a gitlink's mode, or a split
    index keeps entries in a shared index beside it, or it is too large to look into. One
    that is no regular file (a FIFO, a device) git cannot read either: no."""
    data = read_file(index, follow=True)
    if data is None:
        try:
            return stat.S_ISREG(os.stat(index).st_mode)  # (a regular one: too large)
        except OSError:
            return False
    return MODE in data or any(n.startswith("sharedindex.")
                               for n in listed(os.path.dirname(index)))


def _digest(path: str) -> bytes | None:
    """A plan's content, to compare (a stat can be put back as it was); a mark for one
    that is not a plain file, or is too large; None where there is none."""
    data = read_file(path, 1 << 20)
    if data is None:
        return None if not os.path.lexists(path) else b"\0(not a plain file)"
    return data


def _no_exec(todo: str) -> bool:
    """A rebase's or a sequencer's plan without its ``exec`` (``x``) lines, which git runs
    as commands; whether it had any (one that is not a plain file, or too large, goes)."""
    data = read_file(todo, 1 << 20)
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


def _remove(path: str) -> str:
    """Remove ``path``; what was done, in words."""
    import shutil  # (rarely needed: not every boxed call's import)

    try:
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else \
            os.unlink(path)
        return f"removed {path}, which the command made: it runs code later outside the box"
    except Exception:  # (too deep for rmtree too): moved aside, then
        return put_aside(path, "it could not be removed")

