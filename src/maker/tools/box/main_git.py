"""Which of the main agent's commands may write git's folder in its box.

git's folder is read-only in the main agent's box but to a command that is git's alone, in
the project's own repository, running nothing that git's own options or the project's
files choose: else a program a step planted could make a ``commondir`` (or a ref, a
gitlink) that a git of the person's, run meanwhile, would read. Such a command:

- runs git (or GitHub's ``gh``, whose ``pr create`` pushes with git) and, beside it, only
  builtins that run no code (``cd``, ``echo``, …); an expansion only as the client writes
  a commit message (``$(cat <<'EOF'`` … ``EOF)``);
- runs the git (and the ``cat``) that the search path finds outside the project (a
  ``.venv/bin/git`` a step planted is not git);
- gives git no option that names a program or another repository (``-c`` only for a
  name, an email, signing, colours; no ``-C``, ``--git-dir``, ``--exec-path``), no
  variable of git's but the author's and committer's, and one of the subcommands that
  run no command of their own (``rebase -x``, ``bisect run``, ``submodule foreach`` do);
- runs where the folder it starts in, and every folder up to the project's top, is no
  repository of its own (a ``.git``, or a folder that looks like a bare repository);
- in a project where git finds no repository of its own that the index does not hold as
  a submodule (``git ls-files -o``: a step's ``git init`` in ``vendor/x``): ``git add``
  enters one whatever the config says, and runs what its config names; nor ``add -f``,
  which adds one that the ignore rules hide.

What a hook the person installed runs at a
commit (pre-commit's local hooks, husky) runs with the folder writable: a documented
limit (docs/internals.md#known-limits).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from maker.tools.command.command_walk import Run, walk

__all__ = ["gits_alone"]

_QUIET = frozenset({"cd", "echo", "printf", "true", "false", ":", "pwd", "test", "["})  # (no code)
# A commit message as the client writes one: a quoted here-document, not expanded, to cat
_MESSAGE = re.compile(r"\$\(cat <<'([A-Za-z_]\w*)'\n(.*)\n\1\n[ \t\n]*\)", re.S)
_SUBCOMMANDS = frozenset({
    "add", "commit", "status", "diff", "log", "show", "branch", "tag", "checkout", "switch",
    "restore", "reset", "rm", "mv", "stash", "merge", "rebase", "cherry-pick", "revert",
    "fetch", "pull", "push", "rev-parse", "ls-files", "blame", "reflog", "describe",
    "shortlog", "notes"})
_SAFE_KEYS = re.compile(r"(?:user\.(?:name|email)|(?:commit|tag)\.gpgsign|color\.\w+|"
                        r"advice\.\w+|core\.quotepath|init\.defaultbranch)=.*", re.I)
_QUIET_OPTIONS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs",
                            "--no-replace-objects"})


def gits_alone(command: str, project: Path, cwd: Path | None,
               nested: Callable[[Path], bool]) -> bool:
    """Whether ``command``, run in ``cwd`` (the project's top when None), may find git's
    folder writable (see the module's docstring); ``nested(project)``: whether git finds
    a repository of its own in the project (yes where it cannot say)."""
    project = Path(os.path.realpath(project))
    walked = walk(command, Path(os.path.realpath(cwd)) if cwd is not None else project)
    gits = [run for run in walked.runs if run.name in ("git", "gh")]
    if not gits or not all(run in gits or (run.name in _QUIET and run.argv[0] in _QUIET)
                           for run in walked.runs):
        return False
    if walked.unknowns and not (_found(["cat"], project) and all(
            u.kind == "expands" and _message(u.word) for u in walked.unknowns)):
        return False
    return all(_found(list(run.argv[:1]), project) and _in_the_project(run.cwds, project)
               and (_options(run) if run.name == "git" else not any(
                   a.startswith("GIT_") for a in run.assignments)) for run in gits) \
        and not nested(project)


def _message(expansion: str) -> bool:
    """Whether a ``$(…)`` the walk found is ``$(cat <<'END'`` … ``END)``, which runs
    nothing (no line of its body ends the here-document early: what follows would run)."""
    found = _MESSAGE.fullmatch(expansion)
    return found is not None and found.group(1) not in found.group(2).split("\n")


def _found(program: list[str], project: Path) -> bool:
    """Whether the program is one the search path finds outside the project."""
    if not program or "/" in program[0]:
        return False
    where = shutil.which(program[0])
    return where is not None and not _under(os.path.realpath(where), project)


def _options(run: Run) -> bool:
    if any(a.startswith("GIT_") and not a.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))
           for a in run.assignments):
        return False
    args = run.args
    while args and args[0].startswith("-"):
        if args[0] == "-c" and len(args) > 1 and _SAFE_KEYS.fullmatch(args[1]):
            args = args[2:]
        elif args[0] in _QUIET_OPTIONS:
            args = args[1:]
        else:
            return False
    return bool(args) and args[0] in _SUBCOMMANDS and not (args[0] == "rebase" and any(
        a.startswith(("-x", "--exec", "-i", "--interactive")) for a in args[1:])) and not (
        args[0] == "add" and any(a in ("-f", "--force") or (a.startswith("-") and not
                                 a.startswith("--") and "f" in a) for a in args[1:]))


def _in_the_project(cwds: tuple[Path, ...], project: Path) -> bool:
    for cwd in cwds:
        here = Path(os.path.realpath(cwd))
        if not _under(str(here), project):
            return False
        while here != project:  # (a repository of its own below the project's top)
            if os.path.lexists(here / ".git") or _bare(here):
                return False
            here = here.parent
    return True


def _bare(folder: Path) -> bool:
    """Whether git would take ``folder`` itself for a repository (a bare one's parts)."""
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir() and \
        (folder / "refs").is_dir()


def _under(path: str, folder: Path) -> bool:
    return path == str(folder) or path.startswith(str(folder) + os.sep)
