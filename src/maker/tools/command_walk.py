"""What a Bash command line runs: the one reading of a command that maker's guards share.

``walk(command, cwd)`` reads a command through the lexer (``maker.tools.shell``) and
returns, in the order bash meets them, the programs it runs (``Run``) and what it cannot
follow (``Unknown``). Three guards are policies over it:

* the step executor's (``maker.tools.guard_bash``): every ``Unknown`` is refused, and
  every ``Run`` is checked (maker's commands, git, the paths its words name);
* the main agent's (``maker.tools.decision_guard``): a person's decision named anywhere,
  or maker named beside text it cannot see, is refused;
* a reading agent's (``maker.tools.readonly``): one pipeline of known readers.

What it follows: simple commands between ``; & && || | |& ;; ;&`` and newlines, ``cd``
carrying the directory on (``eval``'s too); reserved words and assignments before the
program, kept apart (a variable that names a program, ``GIT_EDITOR`` or ``BASH_ENV``, is
read as the command line it is); nested command lines (``bash -c``, ``eval``, ``trap``, an
alias's value, a wrapper's argument that holds whitespace: ``env -S '…'``, ``script -c
'…'``, ``watch '…'``, ``ssh host '…'``); wrappers (``maker.tools.runners``: ``env``,
``timeout``, ``xargs``, ``find -exec``, …), as a ``guessed`` run for each place in their
arguments where their program may start (``appends`` when they add arguments of their
own); ``python -m maker`` as maker's run; program text handed to an interpreter
(``python -c``, ``node -e``, a ``sed`` script, a here-document fed to python) as ``code``.

What it does not follow, it says (``Unknown``): ``$`` expansions and backticks, brace
expansion, ``(``/``)``, function definitions, ``trap``, ``alias``, ``source``/``.``,
``coproc``, a shell reading commands from stdin, a ``cd`` it cannot resolve, control
characters, text it cannot lex, nesting deeper than four lines.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from maker.tools import runners
from maker.tools.shell import HereDoc, Op, Token, Word, lexed, tilde

__all__ = ["Run", "Unknown", "Walk", "walk"]

_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", ";;", ";&"})
_REDIRECTS = frozenset({"<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<<"})
_RESERVED = frozenset({"!", "if", "then", "else", "elif", "while", "until", "do", "time",
                       "{", "}", "fi", "done", "esac"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=")
_MAX_DEPTH = 4
_MAX_GUESSES = 64  # places in a wrapper's arguments where its program may start


@dataclass(frozen=True)
class Unknown:
    """What the walk cannot follow. ``kind``: ``expands`` (text the shell builds at run
    time), ``construct`` (code defined now and run later, or a file's), ``parens``,
    ``stdin``, ``cd``, ``syntax`` (or a control character), ``depth``, ``wide``."""

    kind: str
    what: str
    fix: str
    depth: int = 0
    guessed: bool = False


@dataclass(frozen=True)
class Run:
    """One program a command line runs.

    ``words``: the program and its arguments, as lexed; ``argv``: their text, ``~``
    expanded. ``others``: the simple command's other words (assignments, reserved words,
    redirections' files), for a policy that checks every word it names. ``via``: the
    wrapper, shell or variable that runs it ("" for the line itself)."""

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

    @property
    def name(self) -> str:
        return PurePosixPath(self.argv[0]).name if self.argv else ""

    @property
    def args(self) -> list[str]:
        return list(self.argv[1:])

    @property
    def runs_maker(self) -> bool:
        return self.name in ("maker", "maker.exe")


@dataclass
class Walk:
    """A command line's runs and unknowns in order (``steps``); every word's and
    here-document's text at any depth (``texts``); the line's own operators."""

    steps: list[Run | Unknown] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[Run]:
        return [s for s in self.steps if isinstance(s, Run)]

    @property
    def unknowns(self) -> list[Unknown]:
        return [s for s in self.steps if isinstance(s, Unknown)]


def walk(command: str, cwd: Path, *, home: Path | None = None,
         every_word: bool = False) -> Walk:
    """The walk of ``command`` run in ``cwd``. ``every_word``: read any argument that
    holds whitespace as a command line (a program maker does not know may run it), not
    only a wrapper's."""
    walker = _Walker(home if home is not None else Path(os.path.expanduser("~")), every_word)
    walker.line(command, cwd, 0, via="")
    return walker.out


class _Walker:
    def __init__(self, home: Path, every_word: bool) -> None:
        self.home = home
        self.every_word = every_word
        self.out = Walk()

    def unknown(self, kind: str, what: str, fix: str, depth: int,
                guessed: bool = False) -> None:
        self.out.steps.append(Unknown(kind, what, fix, depth, guessed))

    def line(self, command: str, cwd: Path, depth: int, *, via: str) -> Path:
        """Walk one command line; return the directory it leaves the shell in. (A line
        another program runs is walked whole: its words are its own.)"""
        if depth > _MAX_DEPTH:
            self.unknown("depth", "it nests shells too deeply", "run the command itself",
                         depth)
            return cwd
        tokens = lexed(command)
        if isinstance(tokens, str):
            self.out.texts.extend(command.split())  # (its words kept, for what they name)
            self.unknown("syntax", tokens, "remove it" if "control" in tokens
                         else "close every quote", depth)
            return cwd
        if depth == 0:
            self.out.operators += [t.text for t in tokens if isinstance(t, Op)]
        self.out.texts += [t.text if isinstance(t, Word) else t.body
                           for t in tokens if not isinstance(t, Op)]
        simple: list[Token] = []
        for token in [*tokens, Op(";")]:
            if isinstance(token, Op) and token.text in ("(", ")"):
                self.unknown("parens", "it uses `(` or `)` (a subshell, `$(…)`, a function or "
                             "a case pattern)", "run the commands one after another, without "
                             "them", depth)
            if isinstance(token, Op) and (token.text in _SEPARATORS or token.text in "()"):
                if simple:
                    cwd = self.simple(simple, cwd, depth, via)
                simple = []
            elif token != Op("#"):
                simple.append(token)
        return cwd

    def simple(self, tokens: list[Token], cwd: Path, depth: int, via: str) -> Path:
        words: list[Word] = []
        others: list[Word] = []
        redirects: list[str] = []
        stdin: list[str] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if isinstance(token, HereDoc):
                if token.hazards:
                    self.unknown("expands", "its here-document expands `$` or backticks",
                                 "quote its delimiter (<<'EOF')", depth)
                stdin.append(token.body)
            elif isinstance(token, Op):
                redirects.append(token.text)
                if token.text in ("<<", "<<-"):
                    i += 1  # the delimiter: not a file, not an argument
                elif token.text in _REDIRECTS and isinstance(after, Word):
                    self.word_hazards(after, depth)
                    others.append(after)  # the file it reads or writes
                    if token.text == "<<<":
                        stdin.append(after.text)
                    i += 1
            else:
                self.word_hazards(token, depth)
                words.append(token)
            i += 1
        lead: list[Word] = []
        while words and (words[0].text in _RESERVED or _ASSIGNMENT.match(words[0].text)):
            lead.append(words.pop(0))
        assignments = tuple(w.text for w in lead if _ASSIGNMENT.match(w.text))
        for assignment in assignments:
            self.assignment(assignment, cwd, depth)
        run = Run(tuple(words), tuple(tilde(w, self.home) for w in words), cwd, depth, via,
                  others=(*lead, *others), assignments=assignments,
                  reserved=tuple(w.text for w in lead if w.text in _RESERVED),
                  redirects=tuple(redirects), stdin=tuple(stdin))
        return self.program(run)

    def word_hazards(self, word: Word, depth: int) -> None:
        if word.hazards - {"!", "! in quotes"}:
            self.unknown("expands", f"`{word.text}` uses `$` or backticks, which the shell "
                         "expands into text maker cannot see", "write the value out (single "
                         "quotes keep `$` literal)", depth)
        unquoted = word.unquoted
        start, end = unquoted.find("{"), unquoted.rfind("}")
        if 0 <= start < end and ("," in unquoted[start:end] or ".." in unquoted[start:end]):
            self.unknown("expands", f"`{word.text}` uses brace expansion",
                         "write each word out", depth)

    def assignment(self, text: str, cwd: Path, depth: int) -> None:
        """A variable that names a program: its value is a command line."""
        name, _, value = text.partition("=")
        name = name.rstrip("+")
        if name in runners.PROGRAM_VARS and value.strip():
            self.line(value, cwd, depth + 1, via=name)

    # -- what a program runs ---------------------------------------------------------

    def program(self, run: Run) -> Path:
        """Record ``run`` and what it runs in turn; return the directory after it. (A
        guessed run's own wrappers are not guessed again, nor is it a builtin's.)"""
        name, args, cwd, depth, g = run.name, run.args, run.cwd, run.depth, run.guessed
        code: list[str] = []
        nested: list[tuple[str, str]] = []  # (command line, via)
        if run.argv and run.argv[0] in runners.UNMODELLED and not g:
            self.unknown("construct", f"`{run.argv[0]}` {runners.UNMODELLED[run.argv[0]]}, which "
                         "maker does not follow", "run the commands themselves (a virtual "
                         "environment's program by its path: `.venv/bin/pytest`)", depth, g)
            if run.argv[0] == "trap" and args:
                nested.append((args[0], "trap"))
            elif run.argv[0] == "alias":
                nested += [(a.partition("=")[2], "alias") for a in args if "=" in a]
            elif run.argv[0] in ("function", "coproc"):  # (the body, or the command)
                skip = 2 if run.argv[0] == "function" else 1
                nested.append((" ".join(w.source for w in run.words[skip:]), run.argv[0]))
        elif name in ("cd", "pushd"):
            cwd = self.cd(args, cwd, depth, g)
        elif name == "popd":
            self.unknown("cd", "`popd` goes back to a directory maker cannot follow",
                         "`cd` to the directory by its path", depth, g)
        elif name in runners.SHELLS:
            nested += self.shell(name, args, run, depth, g)
        elif runners.PYTHON.match(name):
            code += self.python(run)
        elif name in runners.INLINE_CODE:
            flag = runners.INLINE_CODE[name]
            code += [args[i + 1] for i, a in enumerate(args[:-1])
                     if a in (flag, "--eval", "-p", "--print")]
            code += run.stdin
        elif name in runners.SCRIPTED:
            code += args
        elif name in runners.DECLARERS:  # (the variables it sets are the run's assignments)
            sets = tuple(arg for arg in args if _ASSIGNMENT.match(arg))
            for assignment in sets:
                self.assignment(assignment, cwd, depth)
            run = replace(run, assignments=run.assignments + sets)
        self.out.steps.append(replace(run, code=tuple(code)) if code else run)
        if name == "eval":
            cwd = self.line(" ".join(args), cwd, depth + 1, via="eval")
        for line, via in nested:
            self.line(line, cwd, depth + 1, via=via)
        wraps = name in runners.WRAPPERS or name in runners.APPENDERS
        if wraps and not g:
            for i in range(min(len(args), _MAX_GUESSES)):
                self.program(self.guess(run, i + 1, name))
            if len(args) > _MAX_GUESSES:  # (a program that deep is not a wrapper's)
                self.unknown("wide", f"`{name}` is given more than {_MAX_GUESSES} arguments",
                             "run the program it runs yourself", depth, g)
        if (wraps or self.every_word) and not g:
            for arg in args:  # (`env -S '…'`, `script -c '…'`, `watch '…'`: a line)
                if any(c.isspace() for c in arg):
                    self.line(arg, cwd, depth + 1, via=name)
        return cwd

    def guess(self, run: Run, start: int, wrapper: str) -> Run:
        """The run that starts at word ``start`` of ``run``, a wrapper's: its leading
        assignments (``env X=1 prog``) set apart, as a simple command's are."""
        words, argv = list(run.words[start:]), list(run.argv[start:])
        lead = 0
        while lead < len(argv) and _ASSIGNMENT.match(argv[lead]):
            lead += 1
        assignments = tuple(argv[:lead])
        for assignment in assignments:
            self.assignment(assignment, run.cwd, run.depth)
        return Run(tuple(words[lead:]), tuple(argv[lead:]), run.cwd, run.depth, wrapper,
                   True, wrapper in runners.APPENDERS, assignments=assignments, stdin=run.stdin)

    def cd(self, args: list[str], cwd: Path, depth: int, guessed: bool) -> Path:
        operands = [a for a in args if a not in ("-L", "-P", "-e", "-@", "--")]
        if not operands:
            return self.home
        if len(operands) > 1 or operands[0] == "-" or operands[0].startswith("-"):
            self.unknown("cd", f"`cd {' '.join(args)}` goes to a directory maker cannot "
                         "follow", "`cd` to one directory by its path", depth, guessed)
            return cwd
        target = Path(operands[0])
        return Path(os.path.realpath(target if target.is_absolute() else cwd / target))

    def shell(self, name: str, args: list[str], run: Run, depth: int,
              guessed: bool) -> list[tuple[str, str]]:
        for i, arg in enumerate(args):
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--")
                               and "c" in arg[1:]):
                return [(args[i + 1], name)] if i + 1 < len(args) else []
            if not arg.startswith("-") and arg not in ("+o", "+e"):
                return []  # a script file: its path is a word, its text is not read
        self.unknown("stdin", f"`{name}` would read its commands from stdin, which maker "
                     "cannot see", f"run the commands themselves, or `{name} -c '…'`", depth,
                     guessed)
        return []

    def python(self, run: Run) -> list[str]:
        """The code a python run is handed; ``-m maker`` is recorded as maker's run."""
        args = run.args
        for i, arg in enumerate(args):
            module = args[i + 1] if arg == "-m" and i + 1 < len(args) else (
                arg[2:] if arg.startswith("-m") and len(arg) > 2 else None)
            if module is not None:
                if module == "maker" or module.startswith("maker."):
                    rest = run.argv[i + 3:] if arg == "-m" else run.argv[i + 2:]
                    self.out.steps.append(Run((), ("maker", *rest), run.cwd, run.depth,
                                              "python -m", run.guessed))
                return []
            code = args[i + 1] if arg == "-c" and i + 1 < len(args) else (
                arg[2:] if arg.startswith("-c") and len(arg) > 2 else None)
            if code is not None:
                return [code]
            if not arg.startswith("-"):
                return list(run.stdin) if arg == "-" else []  # a script file
        return list(run.stdin)

