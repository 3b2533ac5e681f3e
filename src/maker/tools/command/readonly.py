"""Is a shell command read-only? For agents that may look but must not touch.

A step that lists ``Grep`` or ``Glob`` may search with Bash: Claude Code 2.1.3xx
drops those tools from any agent that has Bash (search goes through Bash there), so
the step executor, which has Bash, never sees them. The planner's Bash, should it
ever be given one, is held to the same rule.

The rule is an allow-list. A command passes only if it is one plain command or a
``|`` pipeline, each stage runs a known reader by its bare name, and no word can
make that reader write a file or run another program:

* the text is read as the walk every guard shares reads it
  (``maker.tools.command.command_walk``); any unquoted
  operator (``; & > < ( )``), ``||``, backticks, ``$(``/``${``/``$`` outside single
  quotes, newlines, control characters, ``!`` and ``#`` comments are refused;
* brace expansion (``{a,b}``, ``{a..b}``) is refused wherever it appears, quoted or
  not, since it turns one word into several (``-{delete,true}`` is ``-delete``);
* a program given by a path (``/tmp/x/cat``) or an environment assignment
  (``FOO=x cmd``) is refused;
* readers whose options can write or run programs (``sort``, ``uniq``, ``file``,
  ``tree``, ``find``) are held to an allow-list of options; ``rg``, ``git`` and
  ``diff``, whose option sets are too large, to a deny-list that also refuses any
  abbreviation of a forbidden long option (``--outp`` for ``--output``) and any
  bundle of short options that contains a forbidden one (``-uo``, ``-Orm``);
* for those readers an unquoted glob that could expand to a file named like an
  option (``*``, ``-*``) is refused, and ``uniq`` may name at most one file (its
  second operand is an output file).

Anything unsure is refused: the agent can say what it needed instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from maker.tools.command.command_walk import walk
from maker.tools.command.maker_commands import READ_COMMANDS, is_allowed, listed
from maker.tools.command.reader_options import CHECKERS
from maker.tools.command.shell import Refused
from maker.tools.command.shell import Word as _Word

__all__ = ["is_read_only", "read_only_stages", "why_not_read_only"]

# Readers whose every option only reads. The readers with options that can write or
# run programs (sort, uniq, file, tree, find, rg, git, diff) are checked by
# ``maker.tools.command.reader_options``.
_PLAIN_READERS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "stat", "du",
    "cut", "tr", "basename", "dirname", "realpath", "readlink", "cmp", "nl", "true",
    "echo", "which", "type",
})

_OPERATOR_TEXT = ("it uses a shell operator (`;`, `&`, `&&`, `||`, `>`, `<`, `(`, `)`, "
                  "backticks or `$(...)`); run one plain command or a `|` pipeline of readers")
_RAW_OPERATORS = re.compile(r"[`\n\r]|\$\(|\$\{")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=")


def why_not_read_only(command: str) -> str | None:
    """None when ``command`` only reads; otherwise the reason it does not qualify."""
    try:
        _check(command)
    except Refused as refused:
        return refused.reason
    return None


def is_read_only(command: str) -> bool:
    return why_not_read_only(command) is None


def read_only_stages(command: str) -> list[list[_Word]]:
    """The words of each stage of ``command``'s pipeline, when it only reads (the first
    word of a stage is its reader); raises ``Refused`` with the reason when it does not."""
    return _check(command)


def _check(command: str) -> list[list[_Word]]:
    if _RAW_OPERATORS.search(command):
        raise Refused(_OPERATOR_TEXT)
    if _CONTROL.search(command):
        raise Refused("it contains a control character; run one plain command")
    if _has_braces(command):
        raise Refused("it uses brace expansion (`{a,b}` or `{a..b}`), which can turn one word "
                       "into several or into an option (even inside quotes it is refused); "
                       "write each word out")
    return _stages(command)


def _has_braces(command: str) -> bool:
    """A `{` followed later by `,` or `..` and then `}`: a superset of brace expansion."""
    start, end = command.find("{"), command.rfind("}")
    inside = command[start + 1:end] if 0 <= start < end else ""
    return "," in inside or ".." in inside


def _stages(command: str) -> list[list[_Word]]:
    """``command``'s pipeline stages, each the words of one reader: the line itself as
    the walk every guard shares reads it (``maker.tools.command.command_walk``)."""
    walked = walk(command, Path("."))
    own = [u for u in walked.unknowns if u.depth == 0 and not u.guessed]
    syntax = next((u for u in own if u.kind == "syntax"), None)
    if syntax is not None:
        raise Refused(f"it cannot be parsed ({syntax.what.partition(': ')[2]})")
    if "#" in walked.operators:
        raise Refused("it uses `#`, which starts a shell comment; quote it as `'#'`")
    if any(op != "|" for op in walked.operators):
        raise Refused(_OPERATOR_TEXT)
    stages = [run for run in walked.runs if run.depth == 0 and not run.guessed
              and not run.via]
    if len(stages) != walked.operators.count("|") + 1:
        raise Refused("it has an empty pipeline stage")
    for run in stages:
        for word in run.words:
            _check_hazards(word)
        if run.assignments:
            raise Refused(f"`{run.assignments[0]}` sets an environment variable for the "
                           "command; run the command alone")
        if run.reserved:
            raise Refused(f"`{run.reserved[0]}` is not a known read-only command")
        if not run.words:
            raise Refused("it has an empty pipeline stage")
    for run in stages:
        _check_stage(list(run.words))
    if own:  # (what the walk cannot follow, in a line of readers: nothing is left)
        raise Refused(own[0].what)
    return [list(run.words) for run in stages]


def _check_hazards(word: _Word) -> None:
    if "`" in word.hazards or "` in quotes" in word.hazards:
        raise Refused(_OPERATOR_TEXT)
    if "$" in word.hazards:
        raise Refused("it uses `$` outside single quotes (a variable or expansion can hide "
                       "what runs); put patterns that contain `$` in single quotes")
    if "!" in word.hazards:
        raise Refused("it uses `!` outside single quotes (history expansion or negation); "
                       "quote it as `'!'`, or use `-not` with find")
    for c in "$!":
        if f"{c} in quotes" in word.hazards:
            raise Refused(f"it uses `{c}` inside double quotes, where the shell expands it; "
                           f"use single quotes")


def _check_stage(words: list[_Word]) -> None:
    program = words[0].text
    args = words[1:]
    if _ASSIGNMENT.match(program):
        raise Refused(f"`{program}` sets an environment variable for the command; run the "
                       f"command alone")
    if "/" in program:
        name = program.rsplit("/", 1)[-1] or program
        raise Refused(f"`{program}` names the program by a path; only known readers run, "
                       f"by their bare name (`{name}`)")
    if program == "maker":
        _check_maker(args)
        return
    if program in _PLAIN_READERS:
        return
    checker = CHECKERS.get(program)
    if checker is None:
        raise Refused(f"`{program}` is not a known read-only command")
    for word in args:
        if word.may_expand_to_option:
            raise Refused(f"`{word.text}` is an unquoted pattern that could expand to a file "
                           f"named like an option of `{program}`; quote it, or start it with "
                           f"`./`")
    checker(program, args)


def _check_maker(args: list[_Word]) -> None:
    texts = [w.text for w in args]
    if is_allowed(texts, READ_COMMANDS):
        return
    if texts[:1] == ["plan"]:
        raise Refused("only `maker plan show` and `maker plan lint` may run")
    raise Refused(f"only maker's read commands ({listed(READ_COMMANDS)}) may run")
