"""The step executor's Bash commands, read for what they run and what they touch.

A command is read through ``maker.tools.shell``'s lexer, never matched as raw text, so
quoting (``"maker"``, ``m\\aker``), paths (``/abs/bin/maker``), wrappers (``env``,
``timeout``, ``xargs``, ``find -exec``, ``python -m maker``), shells (``bash -c '…'``,
``eval``) and redirections are seen for what they run and touch. What cannot be
resolved is refused, saying why: ``$`` expansions and backticks (a variable can hold
``maker`` or ``plans``), brace expansion, subshells, globs that could match ``plans/``,
a ``cd`` to somewhere it cannot follow, a shell reading its commands from stdin. Of
maker's own commands only ``maker.tools.maker_commands.EXECUTOR_COMMANDS`` may run; of
git's, none that changes the person's refs or history (``maker.tools.git_rules``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from maker.tools.git_rules import git_refusal, git_subcommand, sets_git_config
from maker.tools.maker_commands import EXECUTOR_COMMANDS, is_allowed, listed
from maker.tools.protected import Protected, expansion, resolve, unclear
from maker.tools.shell import HereDoc, Op, Refused, ShellSyntaxError, Token, Word, tokenize
from maker.tools.spill import spill_reason

__all__ = ["BashGuard"]

_STATE = ("maker: the step executor does not move the plan's state (`maker step …`, `maker "
          "handoff accept`, `maker plan write`, …, however the program is named or "
          "wrapped): your final message, the handoff, is how this step ends. Of maker's "
          f"commands it may run {listed(EXECUTOR_COMMANDS)}, each directly.")
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", ";;", ";&"})
_REDIRECTS = frozenset({"<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<<"})
_RESERVED = frozenset({"!", "if", "then", "else", "elif", "while", "until", "do", "time",
                       "{", "}", "fi", "done", "esac"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"})
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*w?\Z")
_INLINE_CODE = {"node": "-e", "perl": "-e", "ruby": "-e", "php": "-r", "deno": "eval"}
# Programs that run the command in their arguments; the ones that add arguments of
# their own (xargs, parallel, find -exec) may not run maker at all.
_WRAPPERS = frozenset({"env", "command", "builtin", "exec", "nohup", "nice", "ionice",
                       "timeout", "stdbuf", "setsid", "sudo", "doas", "runuser", "chronic",
                       "unbuffer", "taskset", "chrt", "flock", "watch", "strace", "ltrace",
                       "uv", "uvx", "poetry", "pipx", "pdm", "hatch", "conda", "npx",
                       "script", "su", "time"})
_APPENDERS = frozenset({"xargs", "parallel", "find"})
_COPIERS = frozenset({"cp", "ln", "install", "mv", "rsync", "scp", "dd", "tee"})
# Programs that delete or move what they name: naming a directory that holds plans/ is
# naming plans/.
_DESTROYERS = frozenset({"rm", "rmdir", "mv", "shred", "chmod", "chown", "chgrp",
                         "rsync", "unlink", "truncate"})
# Programs whose script (an argument) may name files it writes: `sed 'w FILE'`, awk's
# `print > "FILE"`, vim's `-c 'w FILE'`. Their words are read as inline code is.
_SCRIPTED = frozenset({"sed", "gsed", "awk", "gawk", "mawk", "nawk", "vim", "vi", "nvim",
                       "ex", "view", "ed"})
# Variables whose value names a program something runs (git's editor, pager or ssh, a
# shell's start-up file): the value is read as a command line. git's own config in the
# environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, …) may name any program: refused.
_PROGRAM_VARS = frozenset({
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER", "BASH_ENV", "ENV", "PROMPT_COMMAND"})
_DECLARERS = frozenset({"export", "declare", "typeset", "readonly", "local"})
_CODE_TOKEN = re.compile(r"[^\s'\"`=,;:()\[\]{}<>|&+]+")
_MAX_DEPTH = 4
# What defines commands to run later, or runs a file's, which maker does not follow.
_UNMODELLED = {"function": "defines a function", "trap": "sets a trap (code run later)",
               "alias": "defines an alias", "coproc": "starts a coprocess",
               **dict.fromkeys(("source", "."), "runs a file's commands here")}
# maker's state-moving commands inside one word (a string a program may run: `env -S`,
# `script -c`, `watch`, `xargs sh -c`).
_STATE_WORDS = re.compile(r"(?<![\w.-])maker(?:\.exe)?\s+(?:step|handoff|plan|policy|"
                          r"proposal|approve|reject|adopt)\b")


class BashGuard(Protected):
    """``Protected``'s places, checked in a Bash command and whatever it runs."""

    def __init__(self, plans_root: Path, data_dirs: tuple[Path, ...] | None,
                 home: Path | None, workspace: Path | None = None, *,
                 step: int | None = None) -> None:
        super().__init__(plans_root, data_dirs, home, workspace)
        self.step = step  # the executor's own step: `maker land` lands no other

    def bash(self, command: str, cwd: Path) -> str | None:
        """Why ``command``, run in ``cwd``, is refused; None when it may run."""
        try:
            self._commands(command, cwd, 0)
        except Refused as refused:
            return refused.reason
        return None

    def _commands(self, command: str, cwd: Path, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise Refused(unclear("it nests shells too deeply", "run the command itself"))
        if any(ord(c) < 32 and c not in "\t\n" or ord(c) == 127 for c in command):
            raise Refused(unclear("it contains a control character", "remove it"))
        try:
            tokens = tokenize(command)
        except ShellSyntaxError as exc:
            raise Refused(unclear(f"it cannot be parsed: {exc.reason}",
                                    "close every quote")) from None
        simple: list[Token] = []
        for token in [*tokens, Op(";")]:
            if isinstance(token, Op) and token.text in ("(", ")"):
                raise Refused(unclear("it uses `(` or `)` (a subshell, `$(…)`, a "
                                        "function or a case pattern)",
                                        "run the commands one after another, without them"))
            if isinstance(token, Op) and token.text in _SEPARATORS:
                cwd = self._simple(simple, cwd, depth)
                simple = []
            elif token != Op("#"):
                simple.append(token)
        for token in tokens:  # (once all it runs is read: a string it hands on)
            text = token.body if isinstance(token, HereDoc) else getattr(token, "text", "")
            if isinstance(token, (Word, HereDoc)) and _STATE_WORDS.search(text):
                raise Refused(_STATE + " (Not in a string another program runs either.)")

    def _simple(self, tokens: list[Token], cwd: Path, depth: int) -> Path:
        """Check one simple command; return the directory the next one runs in."""
        words: list[str] = []
        bodies: list[str] = []  # here-documents and here-strings: the command's stdin
        i = 0
        while i < len(tokens):
            token = tokens[i]
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if isinstance(token, HereDoc):
                if token.hazards:
                    raise Refused(expansion("its here-document expands `$` or backticks",
                                              "quote its delimiter (<<'EOF')"))
                bodies.append(token.body)
            elif isinstance(token, Op):
                if token.text in ("<<", "<<-"):
                    i += 1  # the delimiter: not a file, not an argument
                elif token.text in _REDIRECTS and isinstance(after, Word):
                    self._check_word(after, cwd)  # the file it reads or writes
                    if token.text == "<<<":
                        bodies.append(after.text)
                    i += 1
            else:
                self._check_word(token, cwd)
                words.append(self._tilde(token))
            i += 1
        return self._program(words, bodies, cwd, depth)

    def _check_word(self, word: Word, cwd: Path) -> None:
        if word.hazards - {"!", "! in quotes"}:
            raise Refused(expansion(f"`{word.text}` uses `$` or backticks, which the shell "
                                      "expands into text maker cannot see",
                                      "write the value out (single quotes keep `$` literal)"))
        unquoted = word.unquoted
        start, end = unquoted.find("{"), unquoted.rfind("}")
        if 0 <= start < end and ("," in unquoted[start:end] or ".." in unquoted[start:end]):
            raise Refused(expansion(f"`{word.text}` uses brace expansion",
                                      "write each word out"))
        self.check_word(self._tilde(word), cwd, glob=word.globs)

    def _tilde(self, word: Word) -> str:
        if word.text.startswith("~") and not word.quoted[0]:
            head, sep, rest = word.text.partition("/")
            if head == "~":
                return str(self.home) + sep + rest
            return os.path.expanduser(head) + sep + rest
        return word.text

    # -- what runs -------------------------------------------------------------------

    def _program(self, words: list[str], bodies: list[str], cwd: Path, depth: int,
                 *, suffixes: bool = True) -> Path:
        """Check what a simple command runs; ``suffixes``: also every command that a
        wrapper among its words could run (a caller that already checks every suffix
        passes False)."""
        while words and (words[0] in _RESERVED or _ASSIGNMENT.match(words[0])):
            if _ASSIGNMENT.match(words[0]) and _maker_name(words[1:2]):
                raise Refused(_STATE + " (Run it without setting variables before it.)")
            self._assignment(words[0], cwd, depth)
            words = words[1:]
        if not words:
            return cwd
        name = PurePosixPath(words[0]).name
        args = words[1:]
        if words[0] in _UNMODELLED and suffixes:  # (a builtin: no wrapper runs it)
            raise Refused(unclear(f"`{words[0]}` {_UNMODELLED[words[0]]}, which maker does "
                                  "not follow", "run the commands themselves (a virtual "
                                  "environment's program by its path: `.venv/bin/pytest`)"))
        if self.workspace and not self.in_workspace(cwd) and name not in ("cd", "pushd") \
                and not _maker_name(words[:1]):
            raise Refused(self.workspace_text() + f" Run it there: `cd {self.workspace[0]} "
                          f"&& {' '.join(words)[:80]}`.")
        if _maker_name(words[:1]):
            self._maker(args)
        elif name in ("cd", "pushd"):
            return self._cd(args, cwd)
        elif name in ("popd",):
            raise Refused(unclear("`popd` goes back to a directory maker cannot follow",
                                    "`cd` to the directory by its path"))
        elif name == "eval":
            self._commands(" ".join(args), cwd, depth + 1)
        elif name in _SHELLS:
            self._shell(name, args, bodies, cwd, depth)
        elif _PYTHON.match(name):
            self._python(args, bodies, cwd)
        elif name in _INLINE_CODE:
            self._inline(args, _INLINE_CODE[name], bodies, cwd)
        elif name in _DECLARERS:
            for arg in args:
                self._assignment(arg, cwd, depth)
        elif name in _SCRIPTED:
            for arg in args:
                self._code(arg, cwd)
        elif name in _WRAPPERS or name in _APPENDERS:
            if name in _APPENDERS and any(_maker_name([a]) for a in args):
                raise Refused(_STATE + f" (`{name}` would add arguments of its own.)")
            if suffixes:
                for i in range(len(args)):
                    self._program(args[i:], bodies, cwd, depth, suffixes=False)
                for arg in args:  # (`env -S '…'`, `script -c '…'`, `watch '…'`: a line)
                    if any(c.isspace() for c in arg):
                        self._commands(arg, cwd, depth + 1)
        elif name == "git":
            self._git(args)
        spilled = spill_reason(name, args, cwd, self.plans_root, data_dirs=self.data_dirs,
                               workspace=self.workspace[0] if self.workspace else None)
        if spilled:
            raise Refused(f"maker: {spilled}.")
        if name in ("ln", "cp") and self.workspace:
            self._link_targets(name, args, cwd)
        if name in _COPIERS and any(_maker_name([a]) for a in args):
            raise Refused(_STATE + " (Copying or linking maker's program is refused too.)")
        if name in _DESTROYERS or (name == "find" and "-delete" in args):
            for a in args if name != "find" else args[:next(
                    (i for i, a in enumerate(args) if a.startswith("-")), len(args))]:
                if not a.startswith("-"):
                    self.check_path(a, cwd, glob=any(c in a for c in "*?["), destroys=True)
        return cwd

    def _assignment(self, word: str, cwd: Path, depth: int) -> None:
        """A variable set for a command (or exported): one that names a program is
        read as the command line it is."""
        if not _ASSIGNMENT.match(word):
            return
        name, _, value = word.partition("=")
        name = name.rstrip("+")
        if name.startswith("GIT_CONFIG"):
            raise Refused(unclear(f"`{name}` gives git settings, which may name a program "
                                  "it runs", "use `git -c user.name=…` for what the step "
                                  "needs, or leave it to a person"))
        if name in _PROGRAM_VARS and value.strip():
            self._commands(value, cwd, depth + 1)

    def _maker(self, args: list[str]) -> None:
        if not is_allowed(args, EXECUTOR_COMMANDS, alone=True):
            raise Refused(_STATE)
        if self.step is not None and args[:1] == ["land"] and args[1:] != [str(self.step)]:
            raise Refused(f"maker: you run step {self.step}; `maker land` brings back that "
                          f"step's change only: `maker land {self.step}`. Another step's "
                          "executor lands its own, when its work is done.")

    def _git(self, args: list[str]) -> None:
        if sets_git_config(args):
            raise Refused(self.git_text())
        if git_subcommand(args)[1] == "clean":
            raise Refused(self.plans_text() + " `git clean` would delete it (it is not "
                          "tracked); remove the files you mean by name.")
        why = git_refusal(args, beside=bool(self.workspace))
        if why:
            raise Refused(why)

    def _link_targets(self, name: str, args: list[str], cwd: Path) -> None:
        """A symbolic link's target is read from the link's folder, not from ``cwd``:
        checked there (``ln -s ../../../../x sub/l`` names the main checkout)."""
        flags = [a for a in args if a.startswith("-") and a != "-"]
        symbolic = any(a in ("--symbolic",) or (not a.startswith("--") and "s" in a[1:])
                       for a in flags)
        operands = [a for a in args if not (a.startswith("-") and a != "-")]
        if not symbolic or len(operands) < 2:
            return
        link = resolve(cwd, operands[-1])
        folder = link if link.is_dir() else link.parent
        for target in operands[:-1]:
            self.check_path(target, folder)

    def _cd(self, args: list[str], cwd: Path) -> Path:
        operands = [a for a in args if a not in ("-L", "-P", "-e", "-@", "--")]
        if not operands:
            return self.home
        if len(operands) > 1 or operands[0] == "-" or operands[0].startswith("-"):
            raise Refused(unclear(f"`cd {' '.join(args)}` goes to a directory maker "
                                    "cannot follow", "`cd` to one directory by its path"))
        return resolve(cwd, operands[0])  # already checked: not into plans/

    def _shell(self, name: str, args: list[str], bodies: list[str], cwd: Path,
               depth: int) -> None:
        for i, arg in enumerate(args):
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--")
                               and "c" in arg[1:]):
                if i + 1 >= len(args):
                    break
                self._commands(args[i + 1], cwd, depth + 1)
                return
            if not arg.startswith("-") and arg not in ("+o", "+e"):
                return  # a script file: its path was checked, its text is not read
        raise Refused(unclear(f"`{name}` would read its commands from stdin, which maker "
                                "cannot see", f"run the commands themselves, or `{name} -c "
                                "'…'`"))

    def _python(self, args: list[str], bodies: list[str], cwd: Path) -> None:
        for i, arg in enumerate(args):
            module = args[i + 1] if arg == "-m" and i + 1 < len(args) else (
                arg[2:] if arg.startswith("-m") and len(arg) > 2 else None)
            if module is not None:
                if module == "maker" or module.startswith("maker."):
                    raise Refused(_STATE)
                return
            code = args[i + 1] if arg == "-c" and i + 1 < len(args) else (
                arg[2:] if arg.startswith("-c") and len(arg) > 2 else None)
            if code is not None:
                self._code(code, cwd)
                return
            if not arg.startswith("-"):
                if arg == "-":
                    break
                return  # a script file: its path was checked, its text is not read
        for body in bodies:
            self._code(body, cwd)

    def _inline(self, args: list[str], flag: str, bodies: list[str], cwd: Path) -> None:
        for i, arg in enumerate(args[:-1]):
            if arg == flag or arg in ("--eval", "-p", "--print"):
                self._code(args[i + 1], cwd)
        for body in bodies:
            self._code(body, cwd)

    def _code(self, code: str, cwd: Path) -> None:
        """Program text handed to an interpreter: it may not name maker or plans/."""
        for token in _CODE_TOKEN.findall(code):
            if token == "maker" or token.startswith("maker.") or _maker_name([token]):
                raise Refused(_STATE + " (Inline code may not use maker either.)")
            if "/" in token or token in ("plans", self.plans_root.name) or (
                    self.workspace and token == ".git"):  # (the worktree's own .git file)
                self.check_word(token, cwd, glob=any(c in token for c in "*?["))


def _maker_name(words: list[str]) -> bool:
    """Whether the first of ``words`` runs maker: by name or by path, however quoted."""
    if not words:
        return False
    name = PurePosixPath(words[0]).name
    return name in ("maker", "maker.exe")
