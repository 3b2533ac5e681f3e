"""A bash lexer for maker's command checks: words after quote removal, and operators.

Both checks of agents' Bash commands read a command through this one lexer: the
read-only checker (``maker.tools.command.readonly``) and the step executor's guard
(``maker.tools.guards.guard``). It lexes the way bash does for the part of the language the
checks accept, and reports the rest instead of guessing:

* quotes (``'…'``, ``"…"``) and backslashes are removed, and each character of a word
  remembers whether it was quoted (an unquoted ``*`` globs, a quoted one does not);
  a backslash-newline joins lines, as in bash;
* operators are tokens of their own: ``| || |& & && ; ;; ( ) < > >> >| <> <& >& &> &>>
  << <<- <<<``, a newline, and ``#`` for a comment (whose text is dropped);
* a here-document's body becomes a ``HereDoc`` token right after its delimiter word;
* what the lexer does not expand is recorded on the word as a hazard, never dropped:
  ``$`` (a variable, ``$(…)``, ``${…}``, ``$'…'``) and backticks, unquoted or inside
  double quotes, and ``!``.

An unclosed quote raises ``ShellSyntaxError`` (a last backslash is itself, as in bash).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

__all__ = ["GLOB_CHARS", "HereDoc", "Op", "Refused", "ShellSyntaxError", "Token", "Word",
           "lexed", "tilde", "tokenize"]

GLOB_CHARS = frozenset("*?[")
# Longest first: the lexer takes the longest operator that matches.
_OPERATORS = ("&>>", "<<-", "<<<", "&&", "||", "|&", ";;", ";&", ">>", ">|", "<>", "<&", ">&",
              "&>", "<<", "|", "&", ";", "(", ")", "<", ">", "\n")
_OPERATOR_START = frozenset(op[0] for op in _OPERATORS)


class Refused(Exception):
    """Raised inside a check that reads commands through this lexer (the read-only
    checker, the executor's guard) with the reason a command may not run."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ShellSyntaxError(Exception):
    """The command cannot be lexed (an unclosed quote)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Word:
    """A shell word after quote removal; ``quoted[i]`` says whether text[i] was quoted.

    ``hazards`` names what bash would expand and this lexer did not: ``"$"`` and
    ``"`"`` unquoted, ``"$ in quotes"`` and ``"` in quotes"`` inside double quotes, and
    ``"!"`` / ``"! in quotes"``.
    """

    text: str
    quoted: tuple[bool, ...]
    hazards: frozenset[str] = field(default=frozenset())

    @property
    def globs(self) -> bool:
        return any(c in GLOB_CHARS and not q for c, q in zip(self.text, self.quoted, strict=True))

    @property
    def braces(self) -> bool:
        """Brace expansion (``{a,b}``, ``{1..3}``) in its unquoted characters: one word
        becomes several."""
        unquoted = self.unquoted
        start, end = unquoted.find("{"), unquoted.rfind("}")
        return 0 <= start < end and ("," in unquoted[start:end] or ".." in unquoted[start:end])

    @property
    def may_expand_to_option(self) -> bool:
        """An unquoted glob that could match a file named ``-x``/``--x``."""
        if not self.globs:
            return False
        first_is_glob = self.text[:1] in GLOB_CHARS and not self.quoted[0]
        return first_is_glob or self.text.startswith("-")

    @property
    def source(self) -> str:
        """The word as shell text that lexes back to it: its quoted characters in single
        quotes, the others bare (a bare glob still globs, a bare ``~`` still expands)."""
        runs = groupby(zip(self.text, self.quoted, strict=True), key=lambda cq: cq[1])
        return "".join("'" + "".join(c for c, _ in run).replace("'", "'\\''") + "'"
                       if quoted else "".join(c for c, _ in run)
                       for quoted, run in runs) or "''"

    @property
    def unquoted(self) -> str:
        """The characters that were not quoted (for brace and tilde expansion)."""
        return "".join(c for c, q in zip(self.text, self.quoted, strict=True) if not q)


@dataclass(frozen=True)
class Op:
    """An operator (``|``, ``&&``, ``>``, a newline, ``#`` for a comment, …)."""

    text: str


@dataclass(frozen=True)
class HereDoc:
    """A here-document's body; ``expands`` when its delimiter was unquoted (then bash
    expands ``$`` and backticks in it: those are in ``hazards``)."""

    body: str
    expands: bool
    hazards: frozenset[str] = field(default=frozenset())


Token = Word | Op | HereDoc


def tilde(word: Word, home: Path) -> str:
    """``word``'s text with a leading unquoted ``~`` expanded."""
    if word.text.startswith("~") and not word.quoted[0]:
        head, sep, rest = word.text.partition("/")
        return (str(home) if head == "~" else os.path.expanduser(head)) + sep + rest
    return word.text


def lexed(command: str) -> list[Token] | str:
    """The tokens of ``command``, or why it cannot be read (an unclosed quote; a NUL,
    which no command line can hold)."""
    if "\x00" in command:
        return "it contains a NUL character"
    try:
        return tokenize(command)
    except ShellSyntaxError as exc:
        return f"it cannot be parsed: {exc.reason}"


def tokenize(command: str) -> list[Token]:
    """The tokens of ``command``. Raises ShellSyntaxError when it cannot be lexed."""
    return _Lexer(command).run()


class _Lexer:
    def __init__(self, command: str) -> None:
        self.src = command
        self.i = 0
        self.tokens: list[Token] = []
        self.chars: list[str] = []
        self.quoted: list[bool] = []
        self.hazards: set[str] = set()
        self.in_word = False
        self.pending: list[tuple[int, str, bool, bool]] = []  # (index, delim, strip, expands)

    def run(self) -> list[Token]:
        src, n = self.src, len(self.src)
        while self.i < n:
            c = src[self.i]
            if c == "\\" and src[self.i + 1:self.i + 2] == "\n":
                self.i += 2  # line continuation
                continue
            if c in " \t":
                self.end_word()
            elif c in _OPERATOR_START:
                self.operator()
                continue
            elif c == "#" and not self.in_word:
                end = src.find("\n", self.i)
                self.tokens.append(Op("#"))
                self.i = n if end < 0 else end
                continue
            elif c == "\\":
                if self.i + 1 >= n:  # (bash keeps a last backslash as itself)
                    self.add("\\", True)
                    break
                self.add(src[self.i + 1], True)
                self.i += 1
            elif c == "'":
                end = src.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("No closing quotation")
                for ch in src[self.i + 1:end]:
                    self.add(ch, True)
                self.in_word = True
                self.i = end
            elif c == '"':
                self.double_quoted()
            else:
                if c in "$`":
                    self.hazards.add(c)
                elif c == "!":
                    self.hazards.add("!")
                self.add(c, False)
            self.i += 1
        self.end_word()
        self.read_heredocs()  # a here-document cut short by the end of the command
        return self.tokens

    def add(self, ch: str, quoted: bool) -> None:
        self.chars.append(ch)
        self.quoted.append(quoted)
        self.in_word = True

    def end_word(self) -> None:
        if self.in_word:
            self.tokens.append(Word("".join(self.chars), tuple(self.quoted),
                                    frozenset(self.hazards)))
            if len(self.tokens) >= 2 and self.tokens[-2] in (Op("<<"), Op("<<-")):
                word = self.tokens[-1]
                assert isinstance(word, Word)
                self.pending.append((len(self.tokens), word.text, self.tokens[-2] == Op("<<-"),
                                     not any(word.quoted)))
        self.chars.clear()
        self.quoted.clear()
        self.hazards = set()
        self.in_word = False

    def operator(self) -> None:
        self.end_word()
        op = next(o for o in _OPERATORS if self.src.startswith(o, self.i))
        self.tokens.append(Op(op))
        self.i += len(op)
        if op == "\n":
            self.read_heredocs()

    def double_quoted(self) -> None:
        src, n = self.src, len(self.src)
        self.in_word = True
        i = self.i + 1
        while i < n:
            c = src[i]
            if c == '"':
                self.i = i
                return
            if c == "\\" and i + 1 < n and src[i + 1] in '$`"\\\n':
                i += 1
                if src[i] != "\n":
                    self.add(src[i], True)
                i += 1
                continue
            if c in "$`!":
                self.hazards.add(f"{c} in quotes")
            self.add(c, True)
            i += 1
        raise ShellSyntaxError("No closing quotation")

    def read_heredocs(self) -> None:
        """Read the bodies of the here-documents opened on the line just ended."""
        for done, (index, delim, strip, expands) in enumerate(self.pending):
            lines: list[str] = []
            while self.i < len(self.src):
                end = self.src.find("\n", self.i)
                line = self.src[self.i:] if end < 0 else self.src[self.i:end]
                self.i = len(self.src) if end < 0 else end + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                lines.append(line)
            body = "\n".join(lines)
            hazards = frozenset(_body_hazards(body)) if expands else frozenset()
            # Right after its delimiter word (each body inserted shifts the later ones).
            self.tokens.insert(index + done, HereDoc(body, expands, hazards))
        self.pending.clear()


def _body_hazards(body: str) -> set[str]:
    """What bash expands in an unquoted here-document: ``$`` and backticks."""
    found: set[str] = set()
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c in "$`":
            found.add(f"{c} in quotes")
        i += 1
    return found
