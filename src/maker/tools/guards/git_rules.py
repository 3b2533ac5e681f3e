"""What a git command line changes beyond the step's files, read from its words.

A step's git work is its files: ``git status``, ``diff``, ``log``, ``add``, ``commit``.
What else git can change is the person's (``maker.tools.guards.guard_bash`` asks
:func:`git_refusal` of every git command the step executor runs):

* refs that name the person's work, and the history git keeps: ``update-ref``, a branch
  or tag forced, moved or deleted, ``symbolic-ref`` repointed, notes and replacements,
  ``filter-branch``, a ``fetch`` into a branch; ``gc``, ``prune``, ``repack``,
  ``pack-refs``, ``reflog expire`` (maker keeps a step's unlanded work in objects no ref
  names); remotes added or changed (the shared ``.git/config``). Refused for every step.
* A step run beside others works in a worktree that shares every ref but its own HEAD,
  and the objects and config, with the person's checkout: there a new branch or tag,
  ``fetch``, ``push``, ``remote update`` and ``submodule`` changes are refused too. A
  commit in that (detached) worktree moves only its own HEAD, and is allowed.
* Commands git runs for the caller, which maker cannot read: ``submodule foreach``,
  ``bisect run``, ``difftool --extcmd``, ``--upload-pack``…, and ``-c`` settings that can
  name a program (an alias, a pager, an editor): of ``-c``, only ``_SAFE_SETTINGS``.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from maker.tools.box.protected import unclear

__all__ = ["GIT_VALUED", "git_refusal", "git_subcommand", "sets_git_config"]

# git's own options that take their value as the next word.
GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                        "--config-env", "--super-prefix", "--attr-source"})
# What a step may set with `git -c`: a section, or section.key (lower case).
_SAFE_SETTINGS = ("user", "color", "advice", "i18n", "column", "init", "core.quotepath",
                  "core.autocrlf", "core.safecrlf", "core.filemode", "commit.gpgsign",
                  "tag.gpgsign", "safe.directory")
_HISTORY = frozenset({"gc", "prune", "repack", "pack-refs", "maintenance"})
_REWRITES = frozenset({"update-ref", "filter-branch", "filter-repo"})
_REMOTE_CONFIG = frozenset({"add", "rename", "remove", "rm", "set-head", "set-branches",
                            "set-url"})
# Options (or a first operand) whose value is a command that git runs.
_RUNNERS = {"difftool": ("-x", "--extcmd"), "grep": ("-O", "--open-files-in-pager"),
            "fetch": ("--upload-pack",), "ls-remote": ("--upload-pack",),
            "clone": ("--upload-pack", "-u"), "push": ("--receive-pack", "--exec"),
            "archive": ("--exec",), "submodule": ("foreach",), "bisect": ("run",)}


class _Refs(NamedTuple):
    """How ``git branch``/``git tag`` reads: short options that change an existing ref,
    short options whose value follows glued (the scan of a cluster stops there), long
    options that change a ref, and options that make it list (operands are patterns)."""

    changes: str
    valued: str
    longs: tuple[str, ...]
    lists: tuple[str, ...]


_REFS = {
    "branch": _Refs("dDmMcCfu", "u", ("--delete", "--move", "--copy", "--force",
                                      "--set-upstream-to", "--unset-upstream",
                                      "--edit-description"),
                    ("-l", "--list", "-a", "--all", "-r", "--remotes", "--contains",
                     "--no-contains", "--merged", "--no-merged", "--points-at",
                     "--show-current", "--format", "--sort")),
    "tag": _Refs("df", "numF", ("--delete", "--force"),
                 ("-l", "--list", "-n", "--contains", "--no-contains", "--merged",
                  "--no-merged", "--points-at", "--format", "--sort", "-v", "--verify")),
}

_PERSONS = ("maker: `git {sub}` {what}, and those are the person's, not this step's: they "
            "stay as they are while a step runs. Your work is in your files (`git add` and "
            "`git commit` are fine); if the step needs a branch, tag or remote changed, say "
            "so in your handoff for a person to do.")
_BESIDE = ("maker: this step runs beside others in its own worktree, which shares its "
           "branches, tags, remotes, objects and config with the person's checkout: `git "
           "{sub}` would change them for everyone. Work with `git status`, `git diff`, `git "
           "add` and `git commit` (a commit here moves only the worktree's own HEAD); maker "
           "brings the change back when the step hands off. If the step needs more (a "
           "push, a branch, a tag), say so in your handoff for a person to do.")


def git_subcommand(args: list[str]) -> tuple[int, str]:
    """Where ``git args…``'s subcommand is among ``args``, and the subcommand ("" when
    there is none): the first word after git's own options (``git -C . reset``)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in GIT_VALUED else 1
    return (i, args[i]) if i < len(args) else (len(args), "")


def git_refusal(args: list[str], *, beside: bool) -> str | None:
    """Why the step executor may not run ``git args…`` (``beside``: it works in a
    worktree beside other steps), or None. ``git config`` and ``git clean`` are the
    caller's to refuse (their messages name the places it guards)."""
    i, sub = git_subcommand(args)
    unsafe = [key for key in _settings(args[:i]) if not _safe_setting(key)]
    if unsafe:
        return (f"maker: `git -c {unsafe[0]}=…` may name a program git runs (an alias, a "
                "pager, an editor, a hook) that maker cannot check. Of git's settings a step "
                f"passes with -c only {', '.join(_SAFE_SETTINGS)}; run git without it, or "
                "name the setting your step needs in your handoff.")
    rest = args[i + 1:]
    operands = [a for a in rest if not a.startswith("-")]
    runner = next((o for o in _RUNNERS.get(sub, ())
                   if (operands[:1] == [o] if o[0] != "-" else _has_option(rest, o))), None)
    if runner:
        return unclear(f"`git {sub} {runner}` runs a command that maker cannot see",
                       "run that command itself, as a command of its own")
    what = _changes(sub, rest, operands)
    if what:
        return _PERSONS.format(sub=sub, what=what)
    shared = sub in ("fetch", "push") or (sub == "remote" and operands[:1] in (
        ["update"], ["prune"])) or (sub == "submodule" and operands[:1] not in (
            [], ["status"], ["summary"])) or _ref_change(sub, rest) == "create"
    if beside and shared:
        return _BESIDE.format(sub=" ".join([sub, *operands[:1]]))
    return None


def sets_git_config(args: list[str]) -> bool:
    """Whether ``git args…`` is a `git config` that may write (any form but a read):
    an option among those that lead, or a subcommand that comes first, says it reads
    (later, the same words are values: `git config core.fsmonitor list`)."""
    i, sub = git_subcommand(args)
    if sub != "config":
        return False
    rest = args[i + 1:]
    leading = set(itertools.takewhile(lambda a: a.startswith("-"), rest))
    reads = bool(leading & {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l",
                            "--list"}) or rest[:1] in (["get"], ["list"])
    return not reads


def _changes(sub: str, rest: list[str], operands: list[str]) -> str | None:
    """What ``git sub rest…`` changes of the person's refs or history, or None."""
    if sub in _REWRITES:
        return "moves or rewrites branches and other refs"
    if sub in _HISTORY:
        return "deletes or repacks objects and refs that git keeps"
    if sub == "reflog" and operands[:1] in (["expire"], ["delete"]):
        return "deletes the record of where branches have been"
    if sub == "symbolic-ref" and (len(operands) >= 2 or _has_option(rest, "-d")
                                  or _has_option(rest, "--delete")):
        return "repoints HEAD or another symbolic ref"
    if sub == "replace" and rest[:1] not in ([], ["-l"], ["--list"]):
        return "replaces objects for every command that reads them"
    if sub == "notes" and operands[:1] not in ([], ["list"], ["show"], ["get-ref"]):
        return "changes the notes attached to commits"
    if sub == "remote" and operands[:1] and operands[0] in _REMOTE_CONFIG:
        return "changes the repository's remotes (its shared .git/config)"
    if _ref_change(sub, rest) == "change":
        return f"moves, renames or deletes a {sub} (or sets its upstream)"
    if sub == "fetch" and any(":" in a for a in operands[1:]):
        return "moves the branches its refspec names"
    return None


def _ref_change(sub: str, rest: list[str]) -> str:
    """For ``git branch``/``git tag``: "change" (an existing ref forced, moved, deleted
    or given an upstream), "create" (a new one), or "" (it lists)."""
    refs = _REFS.get(sub)
    if refs is None:
        return ""
    for a in rest:
        if a.startswith("--") and a.split("=")[0] in refs.longs:
            return "change"
        if a.startswith("-") and not a.startswith("--"):
            for c in a[1:]:
                if c in refs.changes:
                    return "change"
                if c in refs.valued:
                    break
    if any(a.split("=")[0] in refs.lists or (a.startswith("-n") and sub == "tag")
           for a in rest):
        return ""
    return "create" if any(not a.startswith("-") for a in rest) else ""


def _settings(options: list[str]) -> list[str]:
    """The settings git's own ``-c key=value`` and ``--config-env key=VAR`` set."""
    out = []
    for i, a in enumerate(options):
        if a in ("-c", "--config-env") and i + 1 < len(options):
            out.append(options[i + 1].split("=")[0])
        elif a.startswith("--config-env="):
            out.append(a.split("=")[1])
    return out


def _safe_setting(key: str) -> bool:
    key = key.lower()
    return any(key == s or ("." not in s and key.startswith(s + "."))
               for s in _SAFE_SETTINGS)


def _has_option(args: list[str], option: str) -> bool:
    """Whether ``option`` is among ``args``: alone, as ``option=value``, or (a short
    option) with its value glued on."""
    return any(a == option or a.startswith(option + "=")
               or (len(option) == 2 and a.startswith(option) and not a.startswith("--"))
               for a in args)
