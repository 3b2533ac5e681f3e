"""What a Bash command line runs: the one reading of a command that maker's guards share.

``walk(command, cwd)`` reads a command through the lexer (``maker.tools.command.shell``) and
returns, in the order bash meets them, the programs it runs (``Run``) and what it cannot
follow (``Unknown``). Three guards are policies over it: the step executor's
(``maker.tools.guards.guard_bash``: every ``Unknown`` refused, every ``Run`` checked), the main
agent's (``maker.tools.guards.decision_guard``: no person's decision, however hidden) and a
reading agent's (``maker.tools.command.readonly``: one pipeline of known readers).

It follows simple commands and the folders a ``cd`` may leave the shell in (a ``cd`` may
fail); assignments and reserved words before a program (a variable that names a program,
``GIT_EDITOR``, is a command line); nested command lines (``bash -c``, ``eval``, ``trap``,
an alias, a here-document fed to a shell, a wrapper's argument that holds whitespace:
``env -S``, ``script -c``, ``watch``, ``ssh``); wrappers (``maker.tools.command.runners``), as a
``guessed`` run at each place their program may start; ``python -m maker``; program text
handed to an interpreter, as the run's ``code``. What it does not follow, it says:
expansions (``$``, backticks, braces, ``~+``), a program named by a pattern, subshells,
functions, ``trap``, ``alias``, ``source``, ``coproc``, commands piped into a shell, a
``cd`` it cannot resolve, control characters, text it cannot lex, deep nesting.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from maker.tools.command import runners
from maker.tools.command.shell import HereDoc, Op, Token, Word, lexed, tilde

__all__ = ["Run", "Unknown", "Walk", "walk"]

_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", ";;", ";&"})
_REDIRECTS = frozenset({"<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<<"})
_RESERVED = frozenset({"!", "if", "then", "else", "elif", "while", "until", "do", "time",
                       "{", "}", "fi", "done", "esac"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=")
_MAX_DEPTH = 4
_MAX_GUESSES = 64  # places in a wrapper's arguments where its program may start
_MAX_CDS = 64  # `cd`s followed in one command
_MAX_WHERE = 8  # folders the shell may be in at once


@dataclass(frozen=True)
class Unknown:
    """What the walk cannot follow; ``kind``: expands, braces, tilde, pattern, construct,
    parens, stdin (commands piped into a shell), cd, syntax, control, depth, wide."""

    kind: str
    what: str
    fix: str
    depth: int = 0
    guessed: bool = False
    word: str = ""  # (an expanding word's own text, as lexed)


@dataclass(frozen=True)
class Run:
    """One program a command line runs.

    ``words``: the program and its arguments, as lexed (``argv``: their text, ``~``
    expanded); ``others``: its other words (assignments, redirections' files); ``cwd``:
    where it runs, ``also``: where else it may (a ``cd`` may fail); ``via``: the wrapper,
    shell or variable that runs it ("" for the line itself)."""

    words: tuple[Word, ...]
    argv: tuple[str, ...]
    cwd: Path
    depth: int = 0
    via: str = ""
    guessed: bool = False
    appends: bool = False
    others: tuple[Word, ...] = ()
    assignments: tuple[str, ...] = ()
    reserved: tuple[str, ...] = ()
    redirects: tuple[str, ...] = ()
    stdin: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    also: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return PurePosixPath(self.argv[0]).name if self.argv else ""

    @property
    def args(self) -> list[str]:
        return list(self.argv[1:])

    @property
    def runs_maker(self) -> bool:
        return self.name in ("maker", "maker.exe")

    @property
    def cwds(self) -> tuple[Path, ...]:
        return (self.cwd, *self.also)


@dataclass
class Walk:
    """Runs and unknowns in order (``steps``); the words' texts at any depth (``texts``),
    the here-documents' (``bodies``); the line's own operators."""

    steps: list[Run | Unknown] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[Run]:
        return [s for s in self.steps if isinstance(s, Run)]

    @property
    def unknowns(self) -> list[Unknown]:
        return [s for s in self.steps if isinstance(s, Unknown)]


Where = tuple[Path, ...]  # the folders the shell may be in, the likeliest last


def walk(command: str, cwd: Path, *, home: Path | None = None, every_word: bool = False) -> Walk:
    """The walk of ``command`` run in ``cwd``. ``every_word``: read any word that holds
    whitespace as a command line (a program maker does not know may run it), not only a
    wrapper's argument."""
    walker = _Walker(home if home is not None else Path(os.path.expanduser("~")), every_word,
                     "CDPATH" in command)
    if runners.unencodable(command):  # (a lone surrogate: no path can be read)
        walker.unknown("encoding", "it holds text that is not Unicode", "remove it", 0)
    else:
        walker.line(command, (cwd,), 0, via="")
    return walker.out


class _Walker:
    def __init__(self, home: Path, every_word: bool, cdpath: bool) -> None:
        self.home = home
        self.every_word = every_word
        self.cdpath = cdpath  # (a `cd NAME` may then go anywhere)
        self.cds = 0
        self.out = Walk()

    def unknown(self, kind: str, what: str, fix: str, depth: int, guessed: bool = False) -> None:
        self.out.steps.append(Unknown(kind, what, fix, depth, guessed))

    def line(self, command: str, where: Where, depth: int, *, via: str) -> Where:
        """Walk one command line; return the folders it may leave the shell in."""
        if depth > _MAX_DEPTH:
            self.unknown("depth", "it nests shells too deeply", "run it itself", depth)
            return where
        if any(ord(c) < 32 and c not in "\t\n" or ord(c) == 127 for c in command):
            self.unknown("control", "it contains a control character", "remove it", depth)
        tokens = lexed(command)
        if isinstance(tokens, str):
            self.out.texts.extend(command.split())  # (its words kept, for what they name)
            self.unknown("syntax", tokens, "close every quote (and leave NUL out)", depth)
            return where
        if depth == 0:
            self.out.operators += [t.text for t in tokens if isinstance(t, Op)]
        self.out.texts += [t.text for t in tokens if isinstance(t, Word)]
        self.out.bodies += [t.body for t in tokens if isinstance(t, HereDoc)]
        simple: list[Token] = []
        for token in [*tokens, Op(";")]:
            if isinstance(token, Op) and token.text in ("(", ")"):
                self.unknown("parens", "it uses `(` or `)` (a subshell, `$(…)`, a function or "
                             "a case pattern)", "run the commands one after another, without "
                             "them", depth)
            if isinstance(token, Op) and (token.text in _SEPARATORS or token.text in "()"):
                if simple:
                    where = self.simple(simple, where, depth, via, token.text)
                simple = []
            elif token != Op("#"):
                simple.append(token)
        return where

    def simple(self, tokens: list[Token], where: Where, depth: int, via: str,
               after: str) -> Where:
        words: list[Word] = []
        others: list[Word] = []
        redirects: list[str] = []
        stdin: list[str] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            if isinstance(token, HereDoc):
                if token.hazards:
                    self.unknown("expands", "its here-document expands `$` or backticks",
                                 "quote its delimiter (<<'EOF')", depth)
                stdin.append(token.body)
            elif isinstance(token, Op):
                redirects.append(token.text)
                if token.text in ("<<", "<<-"):
                    i += 1  # the delimiter: not a file, not an argument
                elif token.text in _REDIRECTS and isinstance(following, Word):
                    self.word_hazards(following, depth)
                    others.append(following)  # the file it reads or writes
                    if token.text == "<<<":
                        stdin.append(following.text)
                    i += 1
            else:
                self.word_hazards(token, depth)
                words.append(token)
            i += 1
        lead: list[Word] = []
        while words and (words[0].text in _RESERVED or _ASSIGNMENT.match(words[0].text)):
            lead.append(words.pop(0))
        if words and (words[0].globs or words[0].braces):
            self.unknown("pattern", f"the program `{words[0].text}` is named by a pattern",
                         "name the program itself", depth)
        assignments = tuple(w.text for w in lead if _ASSIGNMENT.match(w.text))
        for assignment in assignments:
            self.assignment(assignment, where, depth)
        run = Run(tuple(words), tuple(tilde(w, self.home) for w in words), where[-1], depth,
                  via, others=(*lead, *others), assignments=assignments,
                  reserved=tuple(w.text for w in lead if w.text in _RESERVED),
                  redirects=tuple(redirects), stdin=tuple(stdin), also=where[:-1])
        return self.program(run, where, after)

    def word_hazards(self, word: Word, depth: int) -> None:
        if word.hazards - {"!", "! in quotes"}:
            self.out.steps.append(Unknown("expands", f"`{word.text}` uses `$` or backticks, "
                                          "which the shell expands into text maker cannot "
                                          "see", "write the value out (single quotes keep "
                                          "`$` literal)", depth, word=word.text))
        if word.braces:
            self.unknown("braces", f"`{word.text}` uses brace expansion",
                         "write each word out", depth)
        if word.text[:2] in ("~+", "~-") and not word.quoted[0]:
            self.unknown("tilde", f"`{word.text}` names the shell's current or previous "
                         "folder", "name the folder by its path", depth)

    def assignment(self, text: str, where: Where, depth: int) -> None:
        """A variable that names a program: its value is a command line."""
        name, _, value = text.partition("=")
        name = name.rstrip("+")
        if name in runners.PROGRAM_VARS and value.strip():
            self.line(value, where, depth + 1, via=name)

    # -- what a program runs ---------------------------------------------------------

    def program(self, run: Run, where: Where, after: str = "") -> Where:
        """Record ``run`` and what it runs in turn; return the folders after it. (A
        guessed run's own wrappers are not guessed again, nor is it a builtin's.)"""
        name, args, depth, g = run.name, run.args, run.depth, run.guessed
        code: list[str] = []
        nested: list[tuple[str, str]] = []  # (command line, via)
        if run.argv and run.argv[0] in runners.UNMODELLED and not g:
            self.unknown("construct", f"`{run.argv[0]}` {runners.UNMODELLED[run.argv[0]]}, "
                         "which maker does not follow", "run the commands themselves (a "
                         "virtual environment's program by its path: `.venv/bin/pytest`)",
                         depth, g)
            if run.argv[0] == "trap" and args:
                nested.append((args[0], "trap"))
            elif run.argv[0] == "alias":
                nested += [(a.partition("=")[2], "alias") for a in args if "=" in a]
            elif run.argv[0] in ("function", "coproc"):  # (the body, or the command)
                skip = 2 if run.argv[0] == "function" else 1
                nested.append((" ".join(w.source for w in run.words[skip:]), run.argv[0]))
        elif name in ("cd", "pushd", "popd"):
            where = self.cd(run, where, after)
        elif name in runners.SHELLS:
            kind, text = runners.shell_run(args)
            if kind == "line":
                nested.append((text, name))
            elif kind == "stdin" and run.stdin:  # (a here-document: the commands it runs)
                nested += [(body, name) for body in run.stdin]
            elif kind == "stdin":
                self.unknown("stdin", f"`{name}` would read commands piped into it, which "
                             "maker cannot see", f"run the commands themselves, or `{name} "
                             "-c '…'`", depth, g)
        elif runners.PYTHON.match(name):
            kind, given = runners.python_run(args)  # (`-m maker`: below)
            code += given if kind == "code" else list(run.stdin) if kind == "stdin" else []
        elif name in runners.INLINE_CODE:
            code += [*runners.inline_code(name, args), *run.stdin]
        elif name in runners.SCRIPTED:
            code += args
        elif name in runners.DECLARERS:  # (the variables it sets are the run's assignments)
            sets = tuple(arg for arg in args if _ASSIGNMENT.match(arg))
            for assignment in sets:
                self.assignment(assignment, where, depth)
            run = replace(run, assignments=run.assignments + sets)
        nested += [(text, name) for text in runners.option_lines(name, args)]
        found = runners.maker_argv(name, args)  # (`-m maker`, maker's own script)
        if found is not None:
            self.out.steps.append(Run((), ("maker", *found), run.cwd, depth, "python -m", g,
                                      also=run.also))
        self.out.steps.append(replace(run, code=tuple(code)) if code else run)
        if name == "eval":
            where = self.line(" ".join(args), where, depth + 1, via="eval")
        for text, via in nested:
            self.line(text, where, depth + 1, via=via)
        wraps = name in runners.WRAPPERS or name in runners.APPENDERS
        if wraps and not g:
            for i in self.guesses(args, depth):
                self.program(self.guess(run, i + 1, name), where)
        if (wraps or self.every_word) and not g:
            lines = args if not self.every_word else [
                w.text for w in (*run.words, *run.others)]
            for text in lines:  # (`env -S '…'`, `script -c '…'`, `watch '…'`: a line)
                if any(c.isspace() for c in text):
                    self.line(text, where, depth + 1, via=name)
        return where

    def guesses(self, args: list[str], depth: int) -> list[int]:
        """Where a wrapper's program may start (the first places; maker, a shell…)."""
        special = [i for i in range(_MAX_GUESSES, len(args)) if runners.runs_code(args[i])]
        if len(special) > _MAX_GUESSES:
            self.unknown("wide", f"it hands more than {_MAX_GUESSES} shells or interpreters "
                         "to one program", "run them one at a time", depth)
        return [*range(min(len(args), _MAX_GUESSES)), *special[:_MAX_GUESSES]]

    def guess(self, run: Run, start: int, wrapper: str) -> Run:
        """The run that starts at word ``start`` of ``run``, a wrapper's: its leading
        assignments (``env X=1 prog``) set apart, as a simple command's are."""
        words, argv = list(run.words[start:]), list(run.argv[start:])
        lead = 0
        while lead < len(argv) and _ASSIGNMENT.match(argv[lead]):
            lead += 1
        assignments = tuple(argv[:lead])
        for assignment in assignments:
            self.assignment(assignment, (*run.also, run.cwd), run.depth)
        return Run(tuple(words[lead:]), tuple(argv[lead:]), run.cwd, run.depth, wrapper,
                   True, wrapper in runners.APPENDERS, assignments=assignments,
                   stdin=run.stdin, also=run.also)

    def cd(self, run: Run, where: Where, after: str) -> Where:
        """The folders the shell may be in after ``run`` (a ``cd``): the new one, and,
        unless only ``&&`` follows it, the ones before (it may fail)."""
        operands = [w for w in run.words[1:] if w.text not in ("-L", "-P", "-e", "-@", "--")]
        text = operands[0].text if operands else ""
        if run.name == "cd" and not operands:
            targets: Where = (self.home,)
        elif (run.name == "popd" or len(operands) != 1 or text[:1] in "-+" or
              operands[0].hazards - {"!", "! in quotes"} or text[:2] in ("~+", "~-") or
              (self.cdpath and not text.startswith(("/", ".")))) or self.cds >= _MAX_CDS:
            self.unknown("cd", f"`{' '.join(run.argv)[:80]}` goes to a folder maker cannot "
                         "follow", "`cd` to one folder by its path", run.depth, run.guessed)
            return where
        else:
            path = tilde(operands[0], self.home)
            targets = tuple(dict.fromkeys(
                p for c in where for p in (Path(os.path.normpath(c / path)),
                                           Path(os.path.realpath(c / path)))))
        self.cds += 1
        if run.guessed:
            return where
        found = tuple(dict.fromkeys(targets if after == "&&" else (*where, *targets)))
        return found if len(found) <= _MAX_WHERE else (found[0], *found[-_MAX_WHERE + 1:])

