"""Programs that run other programs, as maker's command walk (``maker.tools.command.command_walk``)
knows them: the one table every guard reads through it.

A program missing here is not read for what it runs; where the OS allows, the kernel is
the boundary all the same (``maker.tools.box.boundary``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = ["APPENDERS", "DECLARERS", "INLINE_CODE", "PROGRAM_VARS", "PYTHON", "SCRIPTED",
           "SHELLS", "UNMODELLED", "WRAPPERS", "inline_code", "option_lines", "python_run",
           "maker_argv", "runs_code", "shell_run", "unencodable"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"})
PYTHON = re.compile(r"(?:python|pypy)[0-9.]*w?\Z")
# Interpreters, and the options whose value is program text (a one-letter option may end
# a cluster, `-ne`, or have the text glued on, `-e'…'`).
INLINE_CODE = {"node": ("-e", "-p", "--eval", "--print"), "bun": ("-e", "--eval", "--print"),
               "deno": ("eval",), "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
               "lua": ("-e",), "luajit": ("-e",), "Rscript": ("-e",), "osascript": ("-e",)}
# Programs that run the command in their arguments; the appenders add arguments of
# their own to it.
WRAPPERS = frozenset({"env", "command", "builtin", "exec", "nohup", "nice", "ionice",
                      "timeout", "stdbuf", "setsid", "sudo", "doas", "runuser", "chronic",
                      "unbuffer", "taskset", "chrt", "flock", "watch", "strace", "ltrace",
                      "uv", "uvx", "poetry", "pipx", "pdm", "hatch", "conda", "npx",
                      "script", "su", "time", "ssh", "nsenter", "unshare", "firejail",
                      "systemd-run", "tmux", "screen", "entr", "faketime", "catchsegv",
                      "setpriv", "prlimit", "setarch", "pipenv", "direnv", "mise",
                      "eatmydata", "fakeroot", "valgrind", "xvfb-run", "numactl", "perf",
                      "hyperfine", "gdb", "coverage"})
APPENDERS = frozenset({"xargs", "parallel", "find"})
# Programs whose script (an argument) may name files it writes or programs it runs.
SCRIPTED = frozenset({"sed", "gsed", "awk", "gawk", "mawk", "nawk", "vim", "vi", "nvim",
                      "ex", "view", "ed"})
# Variables whose value names a program something runs: read as a command line.
PROGRAM_VARS = frozenset({
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER", "BASH_ENV", "ENV", "PROMPT_COMMAND"})
DECLARERS = frozenset({"export", "declare", "typeset", "readonly", "local"})
UNMODELLED = {"function": "defines a function", "trap": "sets a trap (code run later)",
              "alias": "defines an alias", "coproc": "starts a coprocess",
              **dict.fromkeys(("source", "."), "runs a file's commands here")}
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_OPTION_COMMAND = re.compile(r"(?i)(?:-o)?(?:Proxy|Local|KnownHosts|Remote)Command\s*[= ]"
                             r"\s*(.+)", re.S)


def shell_run(args: list[str]) -> tuple[str, str]:
    """What a shell given ``args`` runs: ``("line", text)`` (``-c``'s command string,
    wherever ``-c`` is among its options), ``("script", path)`` or ``("stdin", "")``.
    (``busybox sh …``: the applet's name first.)"""
    if args[:1] and args[0] in SHELLS:
        args = args[1:]
    line = stdin = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in _SHELL_VALUED:
            i += 2
            continue
        if len(arg) < 2 or arg[0] not in "-+":
            break
        if arg[0] == "-" and not arg.startswith("--"):
            line = line or "c" in arg[1:]
            stdin = stdin or "s" in arg[1:]
        i += 1
    first = args[i] if i < len(args) else None
    if line:
        return "line", first or ""
    return ("script", first) if first is not None and not stdin else ("stdin", "")


def python_run(args: list[str]) -> tuple[str, list[str]]:
    """What python given ``args`` runs: ``("module", [name, *args])``, ``("code",
    [text])``, ``("script", [])`` or ``("stdin", [])``; option clusters (``-Im``) and the
    options that take a value (``-W``, ``-X``) read as python reads them."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-":
            return "stdin", []
        if arg == "--" or not arg.startswith("-"):
            return "script", []
        if arg.startswith("--"):
            i += 1
            continue
        step = 1
        for j, letter in enumerate(arg[1:], start=2):
            if letter in "mcWX":
                glued = arg[j:]
                value = glued or (args[i + 1] if i + 1 < len(args) else "")
                step = 1 if glued else 2
                if letter == "m":
                    return "module", [value, *args[i + step:]]
                if letter == "c":
                    return "code", [value]
                break
        i += step
    return "stdin", []


def inline_code(name: str, args: list[str]) -> list[str]:
    """The program text an interpreter ``name`` (one of ``INLINE_CODE``) is given."""
    flags = INLINE_CODE[name]
    letters = "".join(f[1] for f in flags if len(f) == 2 and f[0] == "-")
    out = []
    for i, arg in enumerate(args):
        if arg in flags:
            out += args[i + 1:i + 2]
        elif arg.startswith("-") and not arg.startswith("--") and letters:
            at = next((j for j, c in enumerate(arg[1:], start=1) if c in letters), None)
            if at is not None:
                out += [arg[at + 1:]] if arg[at + 1:] else args[i + 1:i + 2]
    return out


def option_lines(name: str, args: list[str]) -> list[str]:
    """Command lines in a remote-shell program's options (ssh's ``ProxyCommand``,
    rsync's ``-e``), which run here."""
    out = []
    for i, arg in enumerate(args):
        if name in ("ssh", "scp", "sftp", "autossh"):
            found = _OPTION_COMMAND.fullmatch(arg)  # (`-oX=…`, or the word after `-o`)
            if found:
                out.append(found.group(1))
        elif name == "rsync":
            if arg in ("-e", "--rsh", "--rsync-path") and i + 1 < len(args):
                out.append(args[i + 1])
            elif arg.startswith(("--rsh=", "--rsync-path=")):
                out.append(arg.partition("=")[2])
    return out


def maker_argv(name: str, args: list[str]) -> list[str] | None:
    """maker's arguments when ``name args`` runs maker by its module (``-m maker``,
    wherever: ``python -m cProfile -m maker``, a launcher's ``-m maker``) or a shell runs
    maker's own script (``bash …/bin/maker``); None otherwise."""
    for i, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "m" in arg[1:]:
            glued = arg[arg.index("m", 1) + 1:]  # (`-mmaker`, `-Im maker`)
            module = glued or (args[i + 1] if i + 1 < len(args) else "")
            if module.partition(".")[0] == "maker":
                return args[i + (1 if glued else 2):]
    if name in SHELLS:
        kind, script = shell_run(args)
        if kind == "script" and PurePosixPath(script).name in ("maker", "maker.exe"):
            return args[args.index(script) + 1:]
    return None


def unencodable(text: str) -> bool:
    """Whether ``text`` holds what no command line can (a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def runs_code(word: str) -> bool:
    """Whether ``word`` names maker, ``eval``, a shell or an interpreter."""
    name = PurePosixPath(word).name
    return (name in ("maker", "maker.exe", "eval") or name in SHELLS
            or bool(PYTHON.match(name)) or name in INLINE_CODE)
