"""Commands that write into ``plans/`` without naming it: a copy, a move or a link into
a folder that holds it, an archive extracted or a patch applied over it, ``find -exec``
from above it, ``git stash``. Both guards ask ``spill_reason`` of every simple command
they read (the step executor's, ``maker.tools.guards.guard``, which guards maker's data
directories the same way; everyone else's, ``maker.tools.guards.decision_guard``).

The words are the lexer's (``maker.tools.command.shell``), quotes removed; a path is resolved
against the directory the command runs in.
"""

from __future__ import annotations

import os
from pathlib import Path

from maker.tools.guards.git_rules import git_subcommand

__all__ = ["spill_reason"]

_INTO = frozenset({"cp", "mv", "rsync", "install", "scp", "ln", "link"})
_TARGET_DIR = ("-t", "--target-directory")
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete"})
_GIT_OVER = frozenset({"stash", "checkout", "restore", "reset", "switch", "clean", "apply",
                       "am", "merge", "rebase", "pull", "worktree"})


# Where each extractor writes: the option that names its output folder (else the
# folder it runs in). unzip's -o is "overwrite", 7z's is the output folder.
_EXTRACT_INTO = {"tar": ("-C", "--directory"), "bsdtar": ("-C", "--directory"),
                 "unzip": ("-d",), "7z": ("-o",), "cpio": ("-D", "--directory"),
                 "pax": (), "patch": ("-d", "--directory")}


def _covers(path: str, cwd: Path, guarded: str, own: str = "") -> bool:
    """Whether ``path`` is the ``guarded`` folder, inside it, or a folder that holds it;
    a path in ``own`` (the step's worktree, under plans/) is not inside it."""
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    if own and _within(full, own) and not _within(guarded, own):
        return False
    return full == guarded or _within(guarded, full) or _within(full, guarded)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _operands(args: list[str]) -> list[str]:
    out, after_dashes = [], False
    for a in args:
        if a == "--" and not after_dashes:
            after_dashes = True
        elif after_dashes or not a.startswith("-"):
            out.append(a)
    return out


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(args):
        for name in names:
            if a == name and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(name + "=") or (len(name) == 2 and a.startswith(name)
                                             and len(a) > 2 and not name.startswith("--")):
                return a.split("=", 1)[1] if "=" in a else a[len(name):]
    return None


def spill_reason(name: str, args: list[str], cwd: Path, plans_root: Path,
                 strict: bool = True, data_dirs: tuple[Path, ...] = (),
                 workspace: Path | None = None) -> str | None:
    """Why the simple command ``name args…`` could write into ``plans_root`` (or one of
    ``data_dirs``, maker's data, which the step executor's guard passes), or None.

    ``workspace``: the worktree of a step run beside others. It lies under plans/ yet is
    the step's own, but for its ``.git`` file (which ties it to its repository: a copy
    or an archive over it would point the worktree's git at another).

    ``strict`` (the step executor): every git command that rewrites the working tree is
    refused, and ``patch``; otherwise (the main agent, who works with git) only those
    that would reach plans/: ``git stash``, ``git clean``, and a checkout, restore or
    reset of a folder that holds it, or ``--hard``."""
    guarded = [(os.path.realpath(plans_root), f"{plans_root} (maker's own record of the plan)")]
    guarded += [(os.path.realpath(d), f"{d} (maker's own data)") for d in data_dirs]
    own = os.path.realpath(workspace) if workspace is not None else ""
    if workspace is not None:
        guarded.append((os.path.join(own, ".git"), f"{workspace / '.git'} (the file that "
                        "ties this worktree to its repository)"))
    return _spill(name, args, cwd, guarded, strict, own)


def _spill(name: str, args: list[str], cwd: Path, guarded: list[tuple[str, str]],
           strict: bool, own: str) -> str | None:
    def covered(*paths: str) -> str | None:
        return next((where for root, where in guarded for p in paths
                     if _covers(p, cwd, root, own)), None)

    plans, where = guarded[0]
    if name in _INTO:
        operands = _operands(args)
        dests = [d for d in (_option_value(args, _TARGET_DIR),) if d]
        if name in ("ln", "link") and len(operands) >= 2 and not dests:
            target, link = operands[0], operands[-1]
            base = cwd / link if (cwd / link).is_dir() else (cwd / link).parent
            if _covers(target, base, plans, own):
                return f"`{name}` would make a link into {where}"
        dests += operands[-1:] if len(operands) >= 2 else []
        into = covered(*dests)
        if into:
            return (f"`{name}` would write into a folder that holds {into}; copy or move "
                    "the files you mean by their own names")
    elif name in _EXTRACT_INTO:
        flags = "".join(a for a in args if a.startswith("-") and not a.startswith("--"))
        first = args[0] if args and not args[0].startswith("-") else ""
        extracts = (name in ("unzip", "cpio") or "x" in flags or "x" in first
                    or "--extract" in args or "--get" in args or (name == "7z" and "x" in args)
                    or (name == "pax" and "-r" in args) or (name == "patch" and strict))
        into = covered(_option_value(args, _EXTRACT_INTO[name]) or ".") if extracts else None
        if into:
            what = "apply a patch" if name == "patch" else "extract"
            return (f"`{name}` would {what} over a folder that holds {into}; "
                    f"{what} in a folder of its own")
    elif name == "find":
        roots = []
        for a in args:
            if a.startswith("-") or a in ("(", "!"):
                break
            roots.append(a)
        hit = covered(*(roots or ["."])) if _FIND_ACTIONS & set(args) else None
        if hit:
            return (f"`find` would act on files in {hit}; start it in a folder that "
                    "does not hold it")
    elif name == "git":
        i, sub = git_subcommand(args)  # (`git -C . reset --hard`)
        rest = _operands(args[i + 1:]) if sub else []
        reaches = sub in ("stash", "clean") or (
            sub in ("checkout", "restore", "reset")
            and ("--hard" in args or any(_covers(a, cwd, plans, own) for a in rest)))
        if (sub in _GIT_OVER and strict) or reaches:
            return (f"`git {sub}` may rewrite or remove {where} with the working tree; "
                    "name the files you mean, or leave it to a person")
    return None
