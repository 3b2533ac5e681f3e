"""What a step's box makes writable, read-only and hidden (``maker.tools.box.boundary``
runs it): the spec ``maker-box`` reads, one entry a line."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from maker.core.paths import project_of, seal_key_path
from maker.tools.box.protected import maker_data_dirs
from maker.tools.box.runs_later import anywhere, at_the_top, hooks_folder, named_places
from maker.tools.box.submodules import gitdir_of, submodule_places

__all__ = ["SANDBOX_EXEC", "SPEC_DIR", "Spec", "spec_for", "unshare_path"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"  # (macOS's own: box_setup.py runs the box with it)
SPEC_DIR = "box"  # under plans/.maker: each step's spec, read-only inside its own box
_SHELLS = ("/bin/bash", "/usr/bin/bash", "/bin/sh")
_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin"  # (read-only in the box)
_PLACES_MAX = 400  # places one walk of a folder adds to the spec, at most
_GIT_DATA = {"objects", "refs", "logs", "lfs"}  # (a git folder's own: no submodule there)


def _system_git() -> str | None:
    """git from the system's own folders (the box's first process runs it, outside the
    command's reach)."""
    found = shutil.which("git", path=_SYSTEM_PATH)
    return _real(found) if found else None


def unshare_path() -> str | None:
    """util-linux's ``unshare``, from the system's own folders only: a folder on the
    caller's PATH may be one a step can write (a project's ``.venv/bin``)."""
    found = shutil.which("unshare", path=_SYSTEM_PATH)
    return _real(found) if found else None
# Build caches under the home folder, writable in the box (the rest of it is not).
_CACHES = (".cache", ".npm", ".cargo/registry", ".cargo/git", ".m2", ".gradle", "go/pkg",
           ".yarn", ".pnpm-store", ".bun/install/cache", ".nuget/packages", ".ivy2",
           ".sbt", ".stack", ".cabal/packages", ".hex", ".mix", ".composer/cache",
           ".ccache", ".rustup/tmp")


@dataclass(frozen=True)
class Spec:
    """The box of one step: what it binds, in order (``(kind, path)``)."""

    entries: tuple[tuple[str, str], ...]

    def text(self) -> str:
        shell = next((s for s in _SHELLS if os.access(s, os.X_OK)), "/bin/sh")
        lines = [f"python {_real(sys.executable)}", f"unshare {unshare_path() or 'unshare'}",
                 f"ids {os.getuid()} {os.getgid()}",
                 f"shell {shell}", *(f"git {g}" for g in [_system_git()] if g),
                 *(f"{kind} {path}" for kind, path in self.entries)]
        return "\n".join(lines) + "\n"

    def paths(self, kind: str) -> list[str]:
        return [p for k, p in self.entries if k == kind]


def spec_for(plans_root: Path, workspace: Path | None = None,
             writes: list[str] | None = None, *, network: bool = True,
             private_tmp: Path | None = None, signs: bool = False,
             commits: bool = False, nested: bool = False) -> Spec:
    """The box of a step of the plan in ``plans_root``; ``workspace`` is the worktree of
    a step run beside others (writable, in a read-only main checkout); ``writes`` the
    step's own (a file that runs code later, named there, is the step's to write);
    ``network``: the machine's (else loopback only); ``private_tmp``: the step's own
    folder, the box's ``/tmp`` (the project, caches and the home folder seen through it
    as they are); ``signs``: the person's ssh-agent stays reachable (the main agent's
    ``git push``: an agent signs, it runs nothing); ``commits``: the project's ``.git``
    stays writable (the main agent's ``git commit``), as it does for a step whose
    ``writes`` name ``.git`` or ``.gitmodules``; else it is read-only: maker measures a
    step's files and a person commits them, and no ``commondir``, gitlink or ref a
    command makes there is read by a git outside the box while the command runs;
    ``nested``: a repository made below the top is the person's (the main agent's box)."""
    project = _real(project_of(plans_root))
    home = os.path.expanduser("~")
    with contextlib.suppress(OSError):  # (the cache every tool may want: never missing)
        os.makedirs(os.path.join(home, ".cache"), exist_ok=True)
    own = _real(workspace) if workspace is not None else project
    temp = [p for p in (os.environ.get("TMPDIR", ""), "/tmp", "/var/tmp")
            if p and os.path.isdir(p)]
    writable = [own, *(_real(os.path.join(home, c)) for c in _CACHES
                       if os.path.isdir(os.path.join(home, c)))]
    entries: list[tuple[str, str]] = [("rw", p) for p in writable]
    entries += [("temp", p) for p in temp]
    if private_tmp is not None:
        entries += [("tmp", _real(private_tmp)), ("keep", _real(home))]
    if any(_under(_real(home), _real(t)) for t in temp):  # (a temp home: not the step's)
        entries.append(("ro", _real(home)))
    if not network:
        entries.append(("net", "none"))
    git = _own_git(Path(project)) if workspace is None else None
    if git is not None:
        if commits or _commits_git(writes):
            entries.append(("rw", str(git)))  # (a mount point: it cannot be renamed away)
            entries.append(("gitdir", str(git)))  # (no `commondir` may lead out of it)
            if ".gitmodules" not in (writes or []):  # (a gitlink it adds: taken out)
                entries.append(("index", str(git / "index")))
        else:  # (git's own state: no commondir, gitlink or ref a git outside would read)
            entries.append(("ro", str(git)))
    if workspace is None and (Path(project) / ".git").is_file():
        entries.append(("ro", str(Path(project) / ".git")))  # (the file that names it)
    if workspace is not None:  # (the main checkout is not its to change, in /tmp too)
        entries.append(("ro", project))
        rel = os.path.relpath(os.path.abspath(plans_root), os.path.abspath(project_of(
            plans_root)))
        if not rel.startswith(".."):
            entries += [("ro", p) for p in (f"{own}/{rel}", f"{own}/.git") if _exists(p)]
    entries.append(("ro", _real(plans_root)))
    entries += [("ro", _real(d)) for d in maker_data_dirs() if d.is_dir()]
    entries += [("ro", p) for p in _git_places(Path(project))]
    entries += submodule_places(Path(own), _system_git(), empty=not commits)
    later = at_the_top(Path(own), writes)
    entries += [("ro", p) for p in _client_places(Path(own), later)]
    entries += [("ro", p) for p in _hooks_path(Path(own))]
    entries += [("laterdir", own), *(("later", n) for n in later)]
    entries += [*(("deeper", n) for n in anywhere(writes, nested)), ("since", _since(
        plans_root)), ("laterskip", f"{own}/.git"),
        *(("laterok", p) for p in named_places(Path(own), writes))]
    if any(isinstance(w, str) and w.strip().removeprefix("./").rstrip("/") == ".gitmodules"
           for w in writes or []):
        entries += [("laterokname", ".git"), ("laterokname", "head")]  # (a submodule's)
    if not _under(own, _real(plans_root)):  # (read-only, and its worktrees are large)
        entries.append(("laterskip", _real(plans_root)))
    entries += [("ro", p) for p in _makers_own() if not _under(p, own)]
    key = seal_key_path()
    if key.is_file():
        entries.append(("hide", _real(key)))
    agent = os.environ.get("SSH_AUTH_SOCK", "") if signs else ""
    for place in (p for p in _sockets() if _exists(p) and p != agent):
        if agent and _under(agent, place):  # (the agent's socket in it: all but the way)
            entries += [("hide", p) for p in _all_but(place, agent)]
        else:
            entries.append(("hide", place))
    return Spec(tuple(dict.fromkeys(entries)))


def _since(plans_root: Path) -> str:
    """When the plan's first boxed call was made (ns, its mark's ctime, made then): a
    folder the walk passes by (a venv, a cache) must be older."""
    mark = plans_root / ".maker" / SPEC_DIR / "since"
    with contextlib.suppress(OSError):
        return str(os.stat(mark).st_ctime_ns)  # (every call but the plan's first)
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return str(os.stat(mark).st_ctime_ns)
    except OSError:
        return "0"  # (none: the walk passes by no venv or cache)


def _own_git(project: Path) -> Path | None:
    """The project's git folder when it lies inside the project: ``.git`` itself, or the
    folder a ``.git`` link or file names (``gitdir: .gitdata``); None else."""
    dotgit = project / ".git"
    if dotgit.is_dir() and not dotgit.is_symlink():
        return dotgit
    if dotgit.is_symlink() or dotgit.is_file():
        real = Path(_real(dotgit)) if dotgit.is_symlink() else gitdir_of(dotgit)
        if real is not None and real.is_dir() and _under(str(real), str(project)) and \
                str(real) != str(project):
            return real
    return None


def _commits_git(writes: list[str] | None) -> bool:
    """Whether a step's ``writes`` name git's own state: ``.git`` (a step that commits)
    or ``.gitmodules`` (one that adds a submodule)."""
    return any(w.strip().rstrip("/") in (".git", ".gitmodules") or w.strip().startswith(".git/")
               for w in writes or [] if isinstance(w, str))


def _makers_own() -> list[str]:
    """maker's own program (a plugin's whole root: its hooks, agents and commands are
    run by the next session) and the interpreter that runs it, wherever they lie (a
    checkout or a venv in /tmp is in a writable place): read-only, but when they are in
    the step's own project (maker working on itself)."""
    package = Path(__file__).resolve().parents[2]  # (src/maker/tools/box -> src/maker)
    root = package.parents[1]  # (a plugin's root: its hooks, agents and commands too)
    places = [package, root if (root / "scripts" / "hook").is_file() else root / "bin",
              root / "scripts", Path(sys.base_prefix), Path(sys.prefix)]
    return [_real(p) for p in places if p.is_dir()]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _client_places(project: Path, names: tuple[str, ...]) -> list[str]:
    """The project's Claude Code settings (its hooks run outside any box), and every file
    at its top that runs code later (``names``, from ``maker.tools.box.runs_later``: MCP
    servers, direnv, git hooks' managers, …): read-only where they exist (``.claude/``
    made when missing, so that no step makes it); what a command makes of the others,
    the box removes (``later`` in the spec)."""
    claude = project / ".claude"
    try:
        claude.mkdir(exist_ok=True)
    except OSError:
        pass
    try:
        there = [e.name for e in os.scandir(project)]
    except OSError:
        there = []
    found = [n for n in there if any(fnmatch.fnmatchcase(n.lower(), p) for p in names)]
    return [_real(p) for p in (claude, *(project / n for n in sorted(found))) if p.exists()]


def _git_places(project: Path) -> list[str]:
    """The repository's config, hooks and attributes (of its common git dir, when the
    project is a linked worktree); ``hooks/`` and ``info/`` made when missing, so that no
    step makes them."""
    git = project / ".git"
    if git.is_file():
        common = gitdir_of(git)
        if common is None:
            return []
        git = common
    if not git.is_dir():
        return []
    places = []
    for name in ("hooks", "info"):
        try:
            (git / name).mkdir(exist_ok=True)
        except OSError:
            pass
    for name in ("config", "config.worktree", "hooks", "info"):
        if (git / name).exists():
            places.append(_real(git / name))
    return places + _module_places(git / "modules")


def _module_places(modules: Path) -> list[str]:
    """Each submodule's own config, hooks and info under ``.git/modules`` (at any depth:
    a submodule's own submodules), which the person's git reads when it enters one."""
    places: list[str] = []
    todo = [modules] if modules.is_dir() and not modules.is_symlink() else []
    while todo and len(places) < _PLACES_MAX:
        folder = todo.pop()
        if (folder / "HEAD").is_file():  # (a submodule's git folder)
            for name in ("hooks", "info"):  # (made when missing, as the repository's)
                with contextlib.suppress(OSError):
                    (folder / name).mkdir(exist_ok=True)
            places += [_real(folder / n) for n in ("config", "config.worktree", "hooks",
                                                  "info") if (folder / n).exists()]
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        todo += [Path(e.path) for e in entries
                 if e.is_dir(follow_symlinks=False) and e.name not in _GIT_DATA
                 and e.name not in ("hooks", "info")]
    return places


def _hooks_path(project: Path) -> list[str]:
    """The folder ``core.hooksPath`` names inside the project (git runs its hooks on the
    person's next commit): read-only, made when missing, so that no step makes it."""
    folder = hooks_folder(Path(_real(project)))
    if folder is None:
        return []
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return [str(folder)] if folder.is_dir() and "\n" not in str(folder) else []


def _sockets() -> list[str]:
    """Where a command could ask a process outside the box to act for it (a socket on a
    read-only mount still connects): terminal multiplexers, the user's runtime folder
    (systemd, D-Bus, podman, gpg-agent), the system bus, container engines, ssh-agent,
    X11. A server of the person's own elsewhere is not known here."""
    uid = os.getuid()
    tmp = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return [f"{tmp}/tmux-{uid}", f"/run/screen/S-{os.environ.get('USER', '')}",
            f"/run/user/{uid}", "/run/systemd/private", "/run/dbus/system_bus_socket",
            "/var/run/dbus/system_bus_socket", "/var/run/docker.sock", "/run/docker.sock",
            "/run/containerd/containerd.sock", "/run/podman/podman.sock",
            os.environ.get("SSH_AUTH_SOCK", ""), "/tmp/.X11-unix"]


def _all_but(folder: str, kept: str) -> list[str]:
    """Everything in ``folder`` but the way to ``kept`` (a socket inside it), at each
    level down to it: what hiding ``folder`` would have hidden, but for ``kept``."""
    whole, hidden = folder, []
    while folder != kept and _under(kept, folder):
        step = os.path.join(folder, os.path.relpath(kept, folder).split(os.sep)[0])
        try:
            hidden += [e.path for e in os.scandir(folder) if e.path != step and _exists(e.path)]
        except OSError:
            return [whole]  # (it cannot be read: hidden whole, the agent with it)
        if len(hidden) > _PLACES_MAX:
            return [whole]
        folder = step
    return hidden


def _real(path: Path | str) -> str:
    return os.path.realpath(path)


def _exists(path: str) -> bool:
    return os.path.lexists(path) and "\n" not in path
