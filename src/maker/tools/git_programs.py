"""Read-only git, run without the programs a repository's config names.

``git diff`` and ``git status`` only read, yet git runs programs that its config (the
repository's ``.git/config``, the user's, the system's) and ``.gitattributes`` name:
``core.fsmonitor`` (on every index refresh), ``diff.external`` and a diff driver's
``command`` and ``textconv`` (diff, log -p, show, blame), a filter's ``clean``,
``smudge`` and ``process`` (to compare a changed file), the hooks (``post-index-change``
when status writes the index back), ``gpg.program`` (``log.showSignature``) and a pager.
So a read-only git command that maker lets an agent run (``maker.tools.readonly``) runs
as :func:`program_free` rewrites it:

- git by the absolute path this process finds (no shell function, alias or command
  planted on the way can stand in for it);
- ``--no-pager --no-optional-locks`` (no pager; the index is never written, so no
  hook), ``-c core.fsmonitor=false -c core.hooksPath=/dev/null -c
  log.showSignature=false``, and every filter the config defines emptied (``-c
  filter.<name>.clean=``: an empty filter passes the file through);
- ``--no-ext-diff --no-textconv`` for diff, log and show, ``--no-textconv`` for blame
  and grep (``git status -v``, whose diff has no such switch, is refused by the reader
  check).

Observed with git 2.39: an empty ``diff.external`` or driver ``command``/``textconv``
is run (and fails) rather than switched off, which is why the switches are options.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from maker.tools.readonly import read_only_stages
from maker.tools.shell import Refused, Word

__all__ = ["GLOBAL_OVERRIDES", "filter_drivers", "program_free"]

GLOBAL_OVERRIDES = ("--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
                    "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false")
_DIFFS = ("--no-ext-diff", "--no-textconv")
_SWITCHES = {"diff": _DIFFS, "log": _DIFFS, "show": _DIFFS, "blame": ("--no-textconv",),
             "grep": ("--no-textconv",)}
_FILTER_KEYS = ("clean", "smudge", "process")


def program_free(command: str, cwd: Path) -> str | None:
    """``command`` (a read-only pipeline, run in ``cwd``) with each of its git stages
    rewritten to run no program that git's config names (see the module's docstring);
    None when it is not read-only or has no git stage. Raises ``Refused`` when a git
    stage cannot be made so (no git found; a filter whose name ``-c`` cannot set)."""
    try:
        stages = read_only_stages(command)
    except Refused:
        return None
    if not any(stage[0].text == "git" for stage in stages):
        return None
    git = shutil.which("git")
    if git is None:
        raise Refused("maker finds no git to run it with the repository's programs "
                      "switched off")
    return " | ".join(_git_stage(git, stage[1:], cwd) if stage[0].text == "git"
                      else " ".join(word.source for word in stage) for stage in stages)


def _git_stage(git: str, args: list[Word], cwd: Path) -> str:
    where: list[str] = []  # the ``-C`` options: the repository whose config counts
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text == "-C":
            where += ["-C", args[i + 1].text]
            i += 1
        i += 1
    head, sub, rest = args[:i], args[i], args[i + 1:]  # (the reader check saw a subcommand)
    names = filter_drivers(git, cwd, where)
    odd = [name for name in names if "=" in name or "\n" in name]
    if odd:
        raise Refused(f"git's config defines a filter ({odd[0]!r}) that maker cannot switch "
                      "off for it; read the files instead")
    filters = [f"filter.{name}.{key}=" for name in names for key in _FILTER_KEYS]
    words = [git, *GLOBAL_OVERRIDES, *(w for f in filters for w in ("-c", f))]
    return " ".join([*map(_quote, words), *(w.source for w in head), sub.source,
                     *_SWITCHES.get(sub.text, ()), *(w.source for w in rest)])


def filter_drivers(git: str, cwd: Path, where: Sequence[str] = ()) -> list[str]:
    """The names of the filters git's config defines for the repository at ``cwd``
    (``where``: git's ``-C`` options), sorted; [] when there are none or git cannot tell.
    Reading config runs no program."""
    try:
        found = subprocess.run(
            [git, *where, "--no-pager", "-c", "core.fsmonitor=false", "config", "--null",
             "--name-only", "--get-regexp", r"^filter\..+\.(clean|smudge|process)$"],
            cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    keys = found.stdout.decode("utf-8", "replace").split("\0")
    return sorted({key.split(".", 1)[1].rsplit(".", 1)[0] for key in keys
                   if key.count(".") >= 2})


def _quote(text: str) -> str:
    return text if text and all(c.isalnum() or c in "-_./=:@%+," for c in text) \
        else "'" + text.replace("'", "'\\''") + "'"
