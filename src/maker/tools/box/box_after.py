"""What the box's first process undoes when the command ends: what git or a tool outside
the box would otherwise run later.

- a ``commondir`` in the repository's git folder (``gitdir``): git would read another
  folder's config and hooks for the repository (one there before the command refuses
  it: :meth:`After.refusal`);
- a file that runs code later made at the top of the step's folder (``laterdir``, its
  names in ``later``: lower-case, ``*`` for a name's start);
- a ``.pth`` file (or ``sitecustomize.py``) the command wrote into a virtual
  environment's site-packages at the top of the step's folder, which no installed
  package's ``RECORD`` lists (Python runs it at every start of that environment);
- ``exec`` lines a command wrote into a rebase's or a cherry-pick's plan (git runs them
  at the person's next ``git rebase --continue``);
- a gitlink added to the repository's index (``index``, with ``git``): a nested
  repository, which the person's own ``git status`` or ``git diff`` enters, running what
  its config names (a clean filter, ``core.fsmonitor``). It is taken out of the index
  (``git update-index --force-remove``, which enters nothing); its files stay, untracked,
  and git does not enter an untracked repository. A step that means to add a submodule
  names ``.gitmodules`` in its ``writes`` (no ``index`` line then).

Read by ``box_setup.py`` from beside it (maker's data dir, read-only to every step), for
every boxed call: the standard library only, and ``subprocess`` only where the index
holds a gitlink's mode.
"""

from __future__ import annotations

import os
import sys

MODE = b"\x00\x00\xe0\x00"  # (160000, a gitlink's mode, as the index stores it)


class After:
    def __init__(self, lists: dict[str, list[str]]) -> None:
        self.guarded = [f"{g}/commondir" for g in lists["gitdir"]]
        self.names = lists["later"]
        self.before = {folder: set(_listed(folder)) for folder in lists["laterdir"]}
        self.todos = {t: _stat(t) for g in lists["gitdir"] for t in (
            f"{g}/rebase-merge/git-rebase-todo", f"{g}/sequencer/todo")}
        self.sites = {site: _startup(site) for top in lists["laterdir"]
                      for site in _venv_sites(top)}
        self.index, self.git = (lists["index"] + [""])[0], (lists["git"] + [""])[0]
        self.seen = _stat(self.index) if self.git else None
        self.links = gitlinks(self.git, self.index) if self.seen and _may_link(self.index) \
            else set()

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
        said = []
        for path in self.guarded:
            if os.path.lexists(path):
                os.unlink(path)
                said.append(f"removed {path}, which the command made: git would have read "
                            "another folder's config and hooks")
        if self.seen is not None and _stat(self.index) not in (None, self.seen) \
                and _may_link(self.index):
            for path in take_out(self.git, self.index, self.links):
                said.append(f"took the nested repository {path} out of git's index: git "
                            "would run the programs its own config names (to add a "
                            "submodule, the step's writes name .gitmodules)")
        for todo, seen in self.todos.items():
            if _stat(todo) not in (None, seen) and _no_exec(todo):
                said.append(f"took the exec lines out of {todo}, which the command wrote: "
                            "git would run them at the person's next rebase --continue")
        for site, before in self.sites.items():
            for path in _unrecorded(site, before):
                _remove(path)
                said.append(f"removed {path}, which the command wrote: Python runs it at "
                            "every start of the venv, and no installed package lists it")
        for path in self.made():
            _remove(path)
            said.append(f"removed {path}, which the command made: it runs code later, "
                        "outside the box (the step's writes do not name it)")
        return said

    def made(self) -> list[str]:
        return [os.path.join(folder, name) for folder, before in self.before.items()
                for name in _listed(folder) if name not in before and
                any(name.lower().startswith(n[:-1]) if n.endswith("*")  # (a name's start)
                    else name.lower() == n for n in self.names)]


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


def take_out(git: str, index: str, before: set[str]) -> list[str]:
    """Take every gitlink the index holds now and did not hold ``before`` out of it; the
    ones taken out."""
    import subprocess

    added = sorted(gitlinks(git, index) - before)
    if added:
        subprocess.run(_git(git, index) + ["update-index", "--force-remove", "--", *added],
                       capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL)
    return added


def _git(git: str, index: str) -> list[str]:
    # (plumbing that reads and writes the index only: no filter, fsmonitor or hook runs)
    gitdir = os.path.dirname(index)
    return [git, f"--git-dir={gitdir}", f"--work-tree={os.path.dirname(gitdir)}",
            "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        seen = os.stat(path)
    except OSError:
        return None
    return seen.st_mtime_ns, seen.st_size, seen.st_ino


def _may_link(index: str) -> bool:
    try:
        with open(index, "rb") as data:
            return MODE in data.read()
    except OSError:
        return False


def _no_exec(todo: str) -> bool:
    """A rebase's or a sequencer's plan without its ``exec`` (``x``) lines, which git runs
    as commands; whether it had any."""
    try:
        with open(todo, encoding="utf-8", errors="surrogateescape") as text:
            lines = text.read().split("\n")
        kept = [line for line in lines if line.strip().split(" ")[0] not in ("exec", "x")
                and not line.strip().startswith(("exec\t", "x\t"))]
        if len(kept) == len(lines):
            return False
        with open(todo, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write("\n".join(kept))
    except OSError:
        return False
    return True


def _venv_sites(top: str) -> list[str]:
    """The site-packages of each virtual environment at the top of the step's folder."""
    sites = []
    for name in _listed(top):
        lib = os.path.join(top, name, "lib")
        if os.path.isfile(os.path.join(top, name, "pyvenv.cfg")):
            sites += [os.path.join(lib, v, "site-packages") for v in _listed(lib)
                      if os.path.isdir(os.path.join(lib, v, "site-packages"))]
    return sites


def _startup(site: str) -> dict[str, tuple[int, int, int] | None]:
    """What Python runs at every start from ``site``: its ``.pth`` files and
    ``sitecustomize.py``/``usercustomize.py``, each with its stat."""
    return {n: _stat(os.path.join(site, n)) for n in _listed(site)
            if n.endswith(".pth") or n in ("sitecustomize.py", "usercustomize.py")}


def _unrecorded(site: str, before: dict[str, tuple[int, int, int] | None]) -> list[str]:
    """The start-up files the command made or changed in ``site`` that no installed
    package's RECORD lists (an installer's own are listed: pip's, an editable install's)."""
    changed = [n for n, seen in _startup(site).items() if before.get(n, ()) != seen]
    if not changed:
        return []
    recorded = set()
    for info in _listed(site):
        if info.endswith(".dist-info"):
            try:
                with open(os.path.join(site, info, "RECORD"), errors="replace") as record:
                    recorded |= {line.split(",")[0] for line in record}
            except OSError:
                continue
    return [os.path.join(site, n) for n in changed if n not in recorded]


def _listed(folder: str) -> list[str]:
    return os.listdir(folder) if os.path.isdir(folder) else []


def _remove(path: str) -> None:
    import shutil  # (rarely needed: not every boxed call's import)

    try:
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else \
            os.unlink(path)
    except OSError as exc:
        sys.stderr.write(f"maker-box: could not remove {path} ({exc}): remove it yourself\n")
