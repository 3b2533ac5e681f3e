"""Read-only git, run without the programs a repository's config names.

``git diff`` and ``git status`` only read, yet git runs programs that its config (the
repository's ``.git/config``, the user's, the system's) and ``.gitattributes`` name:
``core.fsmonitor`` (on every index refresh), ``diff.external`` and a diff driver's
``command`` and ``textconv`` (diff, log -p, show, blame), a filter's ``clean``,
``smudge`` and ``process`` (to compare a changed file), the hooks (``post-index-change``
when status writes the index back), ``gpg.program`` (``log.showSignature``) and a pager.
So a read-only git command that maker lets an agent run (``maker.tools.command.readonly``) runs
as :func:`program_free` rewrites it: each git stage starts with ``maker.tools.git.git_run``'s
words (git by its absolute path, the global overrides, every filter the config defines
emptied), as every git maker runs itself does; then ``--no-ext-diff --no-textconv`` for
diff, log and show, ``--no-textconv`` for blame and grep (``git status -v``, whose diff
has no such switch, is refused by the reader check). An option that makes git enter
nested repositories (``--ignore-submodules=none``, ``--submodule=diff``,
``--recurse-submodules``) is refused: the nested repository's git reads its own config,
whose filters and fsmonitor the overrides here do not name. A repository whose config defines a
filter that cannot be switched off gets its git stages refused (``Refused``).

Observed with git 2.39: an empty ``diff.external`` or driver ``command``/``textconv``
is run (and fails) rather than switched off, which is why the switches are options.
"""

from __future__ import annotations

from pathlib import Path

from maker.errors import GitError, GitRefusedError
from maker.tools.command.readonly import read_only_stages
from maker.tools.command.shell import Refused, Word
from maker.tools.git.git_run import Git

__all__ = ["program_free"]

_DIFFS = ("--no-ext-diff", "--no-textconv")
# (options that make git enter nested repositories: their git runs their own config)
_ENTERS = ("--ignore-submodules", "--submodule", "--recurse-submodules", "--recurse")
_SWITCHES = {"diff": _DIFFS, "log": _DIFFS, "show": _DIFFS, "blame": ("--no-textconv",),
             "grep": ("--no-textconv",)}


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
    return " | ".join(_git_stage(stage[1:], cwd) if stage[0].text == "git"
                      else " ".join(word.source for word in stage) for stage in stages)


def _git_stage(args: list[Word], cwd: Path) -> str:
    where: list[str] = []  # the ``-C`` options: the repository whose config counts
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text == "-C":
            where += ["-C", args[i + 1].text]
            i += 1
        i += 1
    head, sub, rest = args[:i], args[i], args[i + 1:]  # (the reader check saw a subcommand)
    entering = [w.text for w in rest if _enters(w.text)]
    if entering:
        raise Refused(f"`{entering[0]}` makes git enter nested repositories, whose own "
                      "config's programs maker cannot switch off; run it without that "
                      "option (maker's git enters none)")
    try:
        words = Git(cwd, where=where).argv
    except GitRefusedError as refused:
        raise Refused(f"git's config defines a filter ({refused.name!r}) that maker cannot "
                      "switch off for it; read the files instead") from None
    except GitError as failed:
        raise Refused(f"maker cannot run this git with the repository's programs switched "
                      f"off: {failed}") from None
    return " ".join([*map(_quote, words), *(w.source for w in head), sub.source,
                     *_SWITCHES.get(sub.text, ()), *(w.source for w in rest)])


def _enters(word: str) -> bool:
    """Whether ``word`` is one of the options that enter nested repositories, as git
    reads it: a long option may be any unique start of its name (``--ignore-sub=none``)."""
    name, _, value = word.partition("=")
    if not name.startswith("--") or len(name) < 4:
        return False
    if "--ignore-submodules".startswith(name):
        return value not in ("", "all")
    return any(option.startswith(name) for option in _ENTERS[1:])


def _quote(text: str) -> str:
    return text if text and all(c.isalnum() or c in "-_./=:@%+," for c in text) \
        else "'" + text.replace("'", "'\\''") + "'"
