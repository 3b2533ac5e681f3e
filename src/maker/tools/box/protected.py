"""The places the step executor may not touch: ``plans/`` and maker's data directories.

``Protected`` knows them, as named and as resolved (``plans/`` may be a symlink), and
raises ``Refused`` with the message that names the place and what to do instead. The
file tools (``maker.tools.guards.guard``) and the Bash reader
(``maker.tools.guards.guard_bash``) both check paths here.
"""

from __future__ import annotations

import os
import string
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from maker.core.paths import data_dir, project_of, seal_key_path
from maker.tools.command.shell import Refused

__all__ = ["Protected", "expansion", "git_config_places", "maker_data_dirs", "resolve",
           "unclear"]

# A cluster of short options (`-xzvf`), which a value may follow glued on (`-xzvfFILE`).
_LETTERS = string.ascii_letters + string.digits
# (each tail is a path to resolve, a step per folder in it: the work is bounded)
_MAX_CLUSTER, _MAX_GLUED = 32, 4096


def maker_data_dirs() -> tuple[Path, ...]:
    """maker's data directories: the plugin's (saved requests, counters) and the one
    that holds the sealing key (they differ when ``CLAUDE_PLUGIN_DATA`` is set)."""

    return tuple(dict.fromkeys((data_dir(), seal_key_path().parent)))


def git_config_places(project: Path) -> tuple[Path, ...]:
    """Where a repository names the programs git runs (``core.fsmonitor``,
    ``diff.external``, filter and textconv drivers, hooks): its config, hooks and
    ``info/`` (attributes), for a project whose ``.git`` is a folder."""
    git = project / ".git"
    # (all of it: no step writes git's own files by hand; its HEAD or index broken mid-
    # step would also turn maker's measure of the step's files off)
    return (git,) if git.is_dir() else ()


def resolve(cwd: Path, text: str) -> Path:
    """``text`` as a real path, relative to ``cwd`` unless absolute."""
    path = Path(text)
    return Path(os.path.realpath(path if path.is_absolute() else cwd / path))


class Protected:
    """The places no step may touch, and the messages that say so."""


    def __init__(self, plans_root: Path, data_dirs: tuple[Path, ...] | None,
                 home: Path | None, workspace: Path | None = None) -> None:
        self.plans_root = plans_root
        project = project_of(plans_root)
        # A step run beside others works in its own worktree (under the plans folder):
        # there, and only there, it may write; the main checkout is not its own.
        self.workspace = _both(workspace) if workspace is not None else ()
        self.main_dirs = _both(project) if workspace is not None else ()
        # ...except the worktree's own copy of the plans folder (tracked, or made there):
        # files there would read as the plan's, and what lands leaves them out.
        rel = os.path.relpath(os.path.abspath(plans_root), os.path.abspath(project))
        self.plans_copies = () if rel == "." or rel.startswith("..") else tuple(
            p for w in self.workspace for p in _both(w / rel))
        self.data_dirs = maker_data_dirs() if data_dirs is None else data_dirs
        self.home = Path.home() if home is None else home
        self.plan_dirs = _both(plans_root)
        self.key_dirs = tuple(p for d in self.data_dirs for p in _both(d))
        self.git_places = tuple(p for d in git_config_places(project) for p in _both(d))

    def plans_text(self, named: str = "") -> str:
        via = f" (`{named}` names it)" if named else ""
        return (f"maker: {self.plans_root} is maker's own record of the plan; no step reads "
                f"or writes it directly{via}. Your brief (`maker context N`) has what you "
                "need from it, and your handoff (your final message) records your results.")

    def git_text(self) -> str:
        return ("maker: the repository's config, hooks and attributes (.git/config, "
                ".git/hooks/, .git/info/) name programs that git runs for everyone, even "
                "for a `git status` or `git diff`; no step changes them. If the step needs "
                "a git setting, report it in your handoff for a person to make.")

    def workspace_git(self, path: Path) -> bool:
        """Whether ``path`` is the worktree's own ``.git`` file (it names the git dir
        every git command there changes: pointed at the main repository, a `git commit`
        in the worktree rewrites the main checkout's index and branch)."""
        return any(path == w / ".git" for w in self.workspace)

    def in_workspace(self, path: Path) -> bool:
        """Whether ``path`` is the step's own: in its worktree, not in the plans copy."""
        return bool(self.workspace) and self.inside(path, self.workspace) \
            and not self.inside(path, self.plans_copies)

    def names_plans_copy(self, text: str, cwd: Path) -> bool:
        """Whether ``text`` names the worktree's copy of the plans folder: resolved, or
        as named (a link there may point anywhere)."""
        return bool(self.plans_copies) and any(
            self.inside(p, self.plans_copies)
            for p in (resolve(cwd, text), Path(os.path.abspath(cwd / text))))

    def plans_copy_text(self, named: str = "") -> str:
        return (self.plans_text(named) + f" In this worktree, `{self.plans_copies[0]}` "
                "stands for it: a copy of the plan's folder, not the step's work.")

    def workspace_text(self, named: str = "") -> str:
        via = f" (`{named}` names it)" if named else ""
        return (f"maker: this step runs beside others, in its own worktree "
                f"{self.workspace[0]}: the main checkout {self.main_dirs[0]} is not its to "
                f"touch{via}. Work on the same files in the worktree (same relative paths); "
                "maker brings the change back when the step hands off.")

    def key_text(self) -> str:
        dirs = " and ".join(str(d) for d in self.data_dirs)
        return (f"maker: {dirs} is maker's own data (the key that seals verification runs, "
                "saved requests); no step reads or writes it.")

    @staticmethod
    def inside(path: Path, roots: tuple[Path, ...]) -> bool:
        return any(path == r or r in path.parents for r in roots)

    def check_word(self, text: str, cwd: Path, *, glob: bool = False) -> None:
        """Refuse a command's word that names a protected place: as a whole, after each
        ``=`` (``--output=FILE``, ``VAR=FILE``), or the value glued to a short option
        (``-oFILE``; in a cluster, ``-xzfFILE``, it starts at any letter but the first)."""
        cluster = text[1:] if text.startswith("-") and not text.startswith("--") else ""
        letters = len(cluster) - len(cluster.lstrip(_LETTERS))
        if letters > _MAX_CLUSTER or letters * text.count("/") > _MAX_GLUED:
            raise Refused(unclear(f"`{text[:24]}…` is an option word too long to read (a "
                                  "value glued on could start after any of its letters)",
                                  "write the options apart, each value as a word of its own"))
        tails = [text[i:] for i in range(2, letters + 2)]  # (a value after each letter)
        values = [text[i + 1:] for i, c in enumerate(text) if c == "="]
        for candidate in dict.fromkeys([text, *text.split("=")[1:], *values, *tails]):
            if candidate:
                self.check_path(candidate, cwd, glob=glob and candidate == text)

    def check_path(self, text: str, cwd: Path, *, glob: bool = False,
                   destroys: bool = False) -> None:
        """Refuse a path in a protected place (``destroys``: or one that holds it)."""
        if glob:
            self.check_glob(text, cwd, destroys)
            return
        path = resolve(cwd, text)
        if self.inside(path, self.key_dirs):
            raise Refused(self.key_text())
        if self.workspace_git(path):
            raise Refused(self.git_text())
        if self.names_plans_copy(text, cwd):
            raise Refused(self.plans_copy_text(text))
        if destroys and path in self.workspace:
            raise Refused(f"maker: `{text}` is this step's worktree itself, with the `.git` "
                          "file that ties it to its repository: deleting or moving it takes "
                          "that too (and git run here would then change the main checkout). "
                          "Remove the files you mean by name.")
        if self.in_workspace(path):
            return  # (inside plans/, yet the step's own worktree)
        if self.workspace and self.inside(path, self.main_dirs) and (
                "/" in text or text.startswith(".")
                or self.in_workspace(Path(os.path.abspath(cwd / text)))):
            # (a path named outright, or a name in the worktree that a symlink takes out
            # of it; a bare name is the directory's it runs in, and the Bash guard runs a
            # step's commands only in its worktree)
            raise Refused(self.workspace_text(text))
        if self.inside(path, self.plan_dirs):
            raise Refused(self.plans_text(text))
        if self.inside(path, self.git_places):
            raise Refused(self.git_text())
        if destroys and any(path == r or path in r.parents for r in self.plan_dirs):
            raise Refused(self.plans_text(text) + " Deleting or moving a directory that "
                           "holds it would take it too.")

    def check_glob(self, pattern: str, cwd: Path, destroys: bool) -> None:
        """Refuse a glob that could name (or, for ``destroys``, hold) a protected dir."""
        full = PurePosixPath(os.path.normpath(pattern if pattern.startswith("/")
                                              else f"{cwd}/{pattern}")).parts
        inside = any(full[:len(w.parts)] == w.parts and len(full) > len(w.parts)
                     for w in self.workspace)
        # (in the worktree: its .git file, and a plans copy that is there to match)
        roots = (*self.key_dirs, *self.git_places, *(w / ".git" for w in self.workspace),
                 *(p for p in self.plans_copies if os.path.lexists(p))) if inside else \
            (*self.plan_dirs, *self.main_dirs, *self.key_dirs, *self.git_places)
        for root in roots:
            parts = root.parts
            n = min(len(full), len(parts))
            if not all(_component_matches(parts[i], full[i]) for i in range(n)):
                continue
            if len(full) >= len(parts) or destroys:
                raise Refused(unclear(
                    f"the pattern `{pattern}` could match {root}, which no step may touch",
                    "name the files you mean without a pattern that matches it"))


def _both(path: Path) -> tuple[Path, ...]:
    """A directory as named and as resolved (``plans/`` may be a symlink)."""
    absolute = Path(os.path.abspath(path))
    real = Path(os.path.realpath(path))
    return (absolute,) if absolute == real else (absolute, real)


def _component_matches(name: str, pattern: str) -> bool:
    """Whether a glob component matches a name, as bash does (no dotglob)."""
    if name.startswith(".") and not pattern.startswith("."):
        return pattern == name
    return fnmatchcase(name, pattern)


def unclear(what: str, fix: str) -> str:
    return (f"maker cannot check this command, so the step executor may not run it: {what}. "
            f"{fix[0].upper()}{fix[1:]}.")


def expansion(what: str, fix: str) -> str:
    return unclear(what + " (it could name maker or plans/)", fix)
