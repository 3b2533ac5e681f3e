"""Every git that maker runs, run one way: without the programs a repository's config names.

maker runs git itself (the measure of a step's files, the worktrees of steps run side by
side, the landing of their changes) and rewrites the read-only git it lets an agent run
(``maker.tools.git.git_programs``). Even a git command that only reads may run a program
that git's config (the repository's, the user's, the system's) or ``.gitattributes``
names, and a step executor may have planted one there: ``core.fsmonitor`` (every index
refresh), a filter's ``clean``, ``smudge`` and ``process`` (``git add``, a checkout,
``cat-file --filters``), a hook (an index written, a checkout), ``gpg.program`` (a
signed commit, ``log.showSignature``), a pager, and a transport's programs (a partial
clone's lazy fetch runs what a remote names). So every git goes through :class:`Git`:

- git by the absolute path this process finds (no shell function or alias stands in);
- :data:`GLOBAL_OVERRIDES`: no pager, no optional locks, fsmonitor off, hooks from
  ``/dev/null``, no signature made or checked, no transport (``protocol.allow=never``),
  and no nested repository entered (``diff.ignoreSubmodules=all``, no submodule
  recursion): ``git status`` runs a gitlinked repository's own status, with its own
  config's filters, which the names read here do not cover;
- every filter the config defines emptied (``-c filter.<name>.clean=``, ``smudge``,
  ``process``: an empty filter passes the file through);
- stdin closed (or the bytes given), a timeout, and the repository named by the folder
  alone: the variables of maker's own environment that would point git elsewhere
  (``GIT_DIR``, ``GIT_INDEX_FILE``, ...) are dropped; a caller's own (the measure's
  temporary index, the worktrees' commit identity) are arguments.

One filter ``-c`` cannot switch off: a name with ``=`` in it (git splits ``-c`` at the
first ``=``) or a line break. Where the config defines one, maker runs no git at all:
:class:`maker.errors.GitRefusedError` (the repository, the name), which each caller turns
into its own outcome: the measure says the step's files are not measured, a worktree
is a clear error that names the filter, a reader's command is refused.

Observed with git 2.39: an empty ``diff.external`` or a diff driver's empty
``command``/``textconv`` is run (and fails) rather than switched off; those are switched
off by the subcommands' own options (``--no-ext-diff --no-textconv``), which the callers
give.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from maker.errors import GitError, GitRefusedError

__all__ = ["CONFIG_TIMEOUT_S", "GLOBAL_OVERRIDES", "Git", "filter_names", "find_git", "said"]

GLOBAL_OVERRIDES = ("--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
                    "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false",
                    "-c", "commit.gpgSign=false", "-c", "protocol.allow=never",
                    "-c", "diff.ignoreSubmodules=all", "-c", "submodule.recurse=false",
                    "-c", "status.submoduleSummary=false")
FILTER_KEYS = ("clean", "smudge", "process")
CONFIG_TIMEOUT_S = 10.0  # reading the config, at most (a caller's own timeout may be less)
# (the variables that name another repository, index or object store than the folder's)
_LOCATORS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE")
_ALWAYS = {"GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0"}


def find_git() -> str:
    """The absolute path of the git this process finds. Raises GitError without one."""
    git = shutil.which("git")
    if git is None:
        raise GitError("maker finds no git (install git)")
    return os.path.abspath(git)


def said(done: subprocess.CompletedProcess[bytes]) -> str:
    """What a failed git said: its last line on stderr (cut), else its exit status."""
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit {done.returncode}"


class Git:
    """git in the repository at ``cwd`` (``where``: git's ``-C`` options, when a command
    names its repository so), every program its config names switched off.

    Making one reads the config's filters: raises GitRefusedError when one cannot be
    switched off, GitError when there is no git or its config cannot be read in
    ``timeout``. ``config``: the caller's own ``-c`` settings, given to every call."""

    def __init__(self, cwd: Path, *, where: Sequence[str] = (), config: Sequence[str] = (),
                 timeout: float = CONFIG_TIMEOUT_S) -> None:
        self.exe = find_git()
        self.cwd = Path(cwd)
        names = filter_names(self.exe, self.cwd, where, min(timeout, CONFIG_TIMEOUT_S))
        odd = [name for name in names if "=" in name or "\n" in name]
        if odd:
            raise GitRefusedError(self.cwd, odd[0])
        emptied = [w for name in names for key in FILTER_KEYS
                   for w in ("-c", f"filter.{name}.{key}=")]
        self.argv: tuple[str, ...] = (self.exe, *GLOBAL_OVERRIDES, *emptied, *config)
        """git and every override, before a subcommand (``-C`` options not included)."""

    def run(self, args: Sequence[str], *, timeout: float,
            env: Mapping[str, str] | None = None,
            data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """``git args`` run in the repository; its exit status is the caller's to read.
        ``env``: variables of the caller's own (on top of this process's, less those
        that would point git at another repository). Raises GitError when git cannot
        start or does not end within ``timeout`` seconds."""
        return _exec([*self.argv, *args], self.cwd, timeout, env, data)


def filter_names(git: str, cwd: Path, where: Sequence[str] = (),
                 timeout: float = CONFIG_TIMEOUT_S) -> list[str]:
    """The names of the filters git's config defines for the repository at ``cwd``
    (``where``: git's ``-C`` options), sorted. Reading the config runs no program.
    Raises GitError when git cannot read it in time."""
    done = _exec([git, *where, *GLOBAL_OVERRIDES, "config", "--null", "--name-only",
                  "--get-regexp", r"^filter\..+\.(clean|smudge|process)$"],
                 cwd, timeout, None, None)
    if done.returncode not in (0, 1):  # (1: no such key)
        raise GitError(f"git cannot read the config of the repository at {cwd}: "
                       f"{said(done)}")
    keys = done.stdout.decode("utf-8", "replace").split("\0")
    return sorted({key.split(".", 1)[1].rsplit(".", 1)[0] for key in keys
                   if key.count(".") >= 2})


def _exec(argv: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None,
          data: bytes | None) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items() if k not in _LOCATORS}
    full.update(_ALWAYS)
    full.update(env or {})
    try:
        return subprocess.run(argv, cwd=cwd, input=data, capture_output=True,
                              timeout=max(timeout, 0.1), env=full,
                              stdin=None if data is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {_sub(argv)} took longer than {timeout:g} s in {cwd}") from None
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {_sub(argv)} could not run in {cwd}: {exc}") from None


def _sub(argv: list[str]) -> str:
    """The subcommand of a git command line (the first word after its options)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-c", "-C") else 1
    return argv[i] if i < len(argv) else "?"
