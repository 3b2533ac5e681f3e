"""The options of the readers that could write or run programs, checked word by word.

``maker.tools.command.readonly`` decides whether a command line only reads; for the readers
whose options can write a file or run a program (sort, uniq, file, tree, find, rg, git,
diff) it hands the words to ``CHECKERS[program]``, which raises ``Refused`` with the
reason when one of them could. ``sort``, ``uniq``, ``file``, ``tree`` and ``find`` are
held to an allow-list of options; ``rg``, ``git`` and ``diff``, whose option sets are too
large, to a deny-list that also refuses any abbreviation of a forbidden long option
(``--outp`` for ``--output``) and any bundle of short options that contains a forbidden
one (``-uo``, ``-Orm``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from maker.tools.command.shell import Refused, Word

__all__ = ["CHECKERS"]

_GIT_READERS = frozenset({"log", "show", "diff", "status", "ls-files", "grep", "blame",
                          "rev-parse", "describe", "shortlog", "ls-tree", "cat-file"})
_WRITES = "can write files or run programs"


@dataclass(frozen=True)
class _Options:
    """A reader's options. With ``allow_list`` only the listed options pass."""

    forbidden_short: str = ""
    forbidden_long: tuple[str, ...] = ()
    allow_list: bool = False
    short: str = ""  # flags
    short_valued: str = ""  # take a value: the rest of the word, or the next word
    long: frozenset[str] = frozenset()  # names without "--"; a value may follow "="
    long_valued: frozenset[str] = frozenset()  # take a value: "=value" or the next word
    exact: frozenset[str] = frozenset()  # options that only look like an abbreviation

    def reason(self, label: str, word: str) -> str | None:
        """Why option ``word`` (it starts with ``-``) is refused for ``label``, or None."""
        if word in ("-", "--"):
            return None
        if word.startswith("--"):
            return self._long_reason(label, word)
        cluster = word[1:]
        for ch in cluster:  # anywhere in the bundle, even where it might be a value
            if ch in self.forbidden_short:
                inside = "" if cluster == ch else f" (in `{word}`)"
                return f"`{label} -{ch}`{inside} {_WRITES}"
        if self.allow_list:
            for ch in cluster:
                if ch in self.short_valued:
                    break
                if ch not in self.short:
                    return (f"`{label} -{ch}` is not a known read-only option of "
                            f"`{label}`")
        return None

    def _long_reason(self, label: str, word: str) -> str | None:
        name = word.split("=", 1)[0]
        if name in self.exact:
            return None
        for forbidden in self.forbidden_long:
            if forbidden.startswith(name):  # the option itself or an abbreviation of it
                if name == forbidden:
                    return f"`{label} {forbidden}` {_WRITES}"
                return f"`{label} {name}` abbreviates `{forbidden}`, which {_WRITES}"
        if self.allow_list and name[2:] not in self.long | self.long_valued:
            return (f"`{label} {name}` is not a known read-only option of `{label}` "
                    f"(spell long options out in full)")
        return None


def _check_options(options: _Options, label: str, args: list[Word]) -> None:
    for word in args:
        if word.text.startswith("-"):
            reason = options.reason(label, word.text)
            if reason:
                raise Refused(reason)


_SORT = _Options(
    forbidden_short="oT",
    forbidden_long=("--output", "--temporary-directory", "--compress-program"),
    allow_list=True,
    short="bdfghiMnRrVcCmsuz",
    short_valued="ktS",
    long=frozenset({"ignore-leading-blanks", "dictionary-order", "ignore-case",
                    "general-numeric-sort", "ignore-nonprinting", "month-sort",
                    "human-numeric-sort", "numeric-sort", "random-sort", "reverse",
                    "version-sort", "merge", "stable", "unique", "zero-terminated", "debug",
                    "help", "version", "check"}),
    long_valued=frozenset({"sort", "key", "field-separator", "buffer-size", "parallel",
                           "batch-size", "files0-from", "random-source"}),
)
_UNIQ = _Options(
    allow_list=True,
    short="cdDiuz",
    short_valued="fsw",
    long=frozenset({"count", "repeated", "all-repeated", "ignore-case", "unique",
                    "zero-terminated", "group", "help", "version"}),
    long_valued=frozenset({"skip-fields", "skip-chars", "check-chars"}),
)
_FILE = _Options(
    # -C compiles a magic file (writes), -p resets access times (writes),
    # -z/-Z run decompressors, -S turns the sandbox off.
    forbidden_short="CpzZS",
    forbidden_long=("--compile", "--preserve-date", "--uncompress", "--uncompress-noreport",
                    "--no-sandbox"),
    allow_list=True,
    short="bcdEhikLlNnrsv0",
    short_valued="efFmP",
    long=frozenset({"brief", "checking-printout", "debug", "extension", "mime", "mime-type",
                    "mime-encoding", "keep-going", "list", "dereference", "no-dereference",
                    "raw", "special-files", "print0", "no-pad", "no-buffer", "apple", "help",
                    "version"}),
    long_valued=frozenset({"exclude", "exclude-quiet", "files-from", "separator",
                           "magic-file", "parameter"}),
)
_TREE = _Options(
    # -o writes its output to a file; -R with -H writes 00Tree.html into every directory.
    forbidden_short="oRH",
    allow_list=True,
    short="adlfxpsughDFvtcUrqNQCniASJX",
    short_valued="LPI",
    long=frozenset({"help", "version", "inodes", "device", "noreport", "dirsfirst",
                    "filesfirst", "du", "si", "prune", "matchdirs", "ignore-case", "gitignore",
                    "metafirst", "info"}),
    long_valued=frozenset({"charset", "filelimit", "timefmt", "sort"}),
)
_RG = _Options(
    # --pre and --hostname-bin run a program; -z/--search-zip runs decompressors.
    forbidden_short="z",
    forbidden_long=("--pre", "--hostname-bin", "--search-zip"),
)
_DIFF = _Options(forbidden_short="l", forbidden_long=("--paginate",))  # pipes through pr
_GIT_SUB = _Options(
    # -O/--open-files-in-pager (git grep) runs a program; --output writes a file;
    # --ext-diff/--textconv/--filters run configured programs; --show-signature runs gpg;
    # --help may start a browser or man.
    forbidden_short="O",
    forbidden_long=("--output", "--open-files-in-pager", "--ext-diff", "--textconv",
                    "--filters", "--show-signature", "--help"),
    exact=frozenset({"--text"}),  # diff -a, not an abbreviation of --textconv
)

_GIT_STATUS = _Options(forbidden_short="v", forbidden_long=("--verbose",))


def _check_sort(program: str, args: list[Word]) -> None:
    _check_options(_SORT, program, args)


def _check_file(program: str, args: list[Word]) -> None:
    _check_options(_FILE, program, args)


def _check_tree(program: str, args: list[Word]) -> None:
    _check_options(_TREE, program, args)


def _check_rg(program: str, args: list[Word]) -> None:
    _check_options(_RG, program, args)


def _check_diff(program: str, args: list[Word]) -> None:
    _check_options(_DIFF, program, args)


def _check_uniq(program: str, args: list[Word]) -> None:
    """uniq [OPTION]... [INPUT [OUTPUT]]: one file operand at most, so nothing is written."""
    for word in args:
        if word.globs:
            raise Refused(f"`{word.text}` is an unquoted pattern that could expand to several "
                           f"files, and `uniq` writes its second file operand; name one file")
    _check_options(_UNIQ, program, args)
    operands = 0
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            operands = len(args) - i - 1
            break
        if text == "-" or not text.startswith("-"):
            # From the first operand on, every word counts as one: POSIXLY_CORRECT stops
            # option parsing there.
            operands = len(args) - i
            break
        if text.startswith("--"):
            if "=" not in text and text[2:] in _UNIQ.long_valued:
                i += 1  # its value is the next word
        else:
            for j, ch in enumerate(text[1:], start=1):
                if ch in _UNIQ.short_valued:
                    if j == len(text) - 1:
                        i += 1  # its value is the next word
                    break
        i += 1
    if operands > 1:
        raise Refused("`uniq` writes its second file operand (an output file); give it at "
                       "most one input file")


# find: every option and primary must be listed; the ones that take an argument consume
# the next word (find's own rule), which is still refused if it names a forbidden action.
_FIND_FORBIDDEN = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                             "-fprint0", "-fprintf", "-fls"})
_FIND_FLAGS = frozenset({
    "-H", "-L", "-P", "-empty", "-executable", "-readable", "-writable", "-nouser",
    "-nogroup", "-true", "-false", "-depth", "-d", "-mount", "-xdev", "-follow", "-noleaf",
    "-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-warn", "-nowarn",
    "-print", "-print0", "-ls", "-prune", "-quit", "-not", "-a", "-and", "-o", "-or",
    "-help", "--help", "-version", "--version",
})
_FIND_VALUED = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-regextype", "-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid", "-gid",
    "-links", "-inum", "-samefile", "-lname", "-ilname", "-newer", "-anewer", "-cnewer",
    "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-used", "-fstype",
    "-maxdepth", "-mindepth", "-printf", "-files0-from", "-context",
})
_FIND_NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]\Z")


def _check_find(program: str, args: list[Word]) -> None:
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if not text.startswith("-") or text == "-":
            continue  # a start point, an operator (`(`, `)`, `!`, `,`) or a value
        if text in _FIND_FORBIDDEN:
            raise Refused(f"`find {text}` {_WRITES}")
        if text in _FIND_VALUED or _FIND_NEWER_XY.match(text):
            if i < len(args) and args[i].text in _FIND_FORBIDDEN:
                raise Refused(f"`find {args[i].text}` {_WRITES}")
            i += 1
        elif text not in _FIND_FLAGS:
            raise Refused(f"`find {text}` is not a known read-only option of `find`")


# git: global options from an allow-list, then a read-only subcommand, then its options
# against a deny-list (git accepts abbreviated long options, so prefixes are refused).
_GIT_GLOBAL_FLAGS = frozenset({
    "--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice",
})
_GIT_GLOBAL_REFUSALS = (
    ("-c", "`git -c` can set a program to run (a pager, an editor, a diff driver)"),
    ("--config-env", "`git --config-env` can set a program to run"),
    ("--exec-path", "`git --exec-path` chooses where git finds the programs it runs"),
    ("--git-dir", "`git --git-dir` can point git at a repository whose config runs programs"),
    ("--work-tree", "`git --work-tree` can point git at another tree"),
    ("-p", "`git -p` runs a pager"),
    ("--paginate", "`git --paginate` runs a pager"),
)


def _check_git(program: str, args: list[Word]) -> None:
    i = 0
    while i < len(args):
        word = args[i].text
        if word == "-C":  # run in another directory: takes a value
            if i + 1 >= len(args) or args[i + 1].text.startswith("-"):
                raise Refused("`git -C` needs a directory")
            i += 2
            continue
        if word.startswith("-"):
            if word not in _GIT_GLOBAL_FLAGS:
                for prefix, reason in _GIT_GLOBAL_REFUSALS:
                    if word.startswith(prefix):
                        raise Refused(reason)
                raise Refused(f"`git {word}` is not a known read-only git option")
            i += 1
            continue
        if word not in _GIT_READERS:
            raise Refused(f"`git {word}` is not a read-only git command")
        rest = args[i + 1:]
        _check_options(_GIT_SUB, f"git {word}", rest)
        if word == "status":  # its diff (-v) runs textconv, which it cannot turn off
            _check_options(_GIT_STATUS, "git status", rest)
        for arg in rest:
            if "%G" in arg.text:
                raise Refused(f"`{arg.text}` asks git to check signatures, which runs gpg")
        return
    raise Refused("`git` needs a read-only subcommand (log, show, diff, status, ...)")


CHECKERS: dict[str, Callable[[str, list[Word]], None]] = {
    "sort": _check_sort,
    "uniq": _check_uniq,
    "file": _check_file,
    "tree": _check_tree,
    "find": _check_find,
    "rg": _check_rg,
    "git": _check_git,
    "diff": _check_diff,
}
