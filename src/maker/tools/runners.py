"""Programs that run other programs, as maker's command walk (``maker.tools.command_walk``)
knows them: the one table every guard reads through it.

A program missing here is not read for what it runs; where the OS allows, the kernel is
the boundary all the same (``maker.tools.boundary``).
"""

from __future__ import annotations

import re

__all__ = ["APPENDERS", "DECLARERS", "INLINE_CODE", "PROGRAM_VARS", "PYTHON", "SCRIPTED",
           "SHELLS", "UNMODELLED", "WRAPPERS"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"})
PYTHON = re.compile(r"(?:python|pypy)[0-9.]*w?\Z")
INLINE_CODE = {"node": "-e", "perl": "-e", "ruby": "-e", "php": "-r", "deno": "eval"}
# Programs that run the command in their arguments; the appenders add arguments of
# their own to it.
WRAPPERS = frozenset({"env", "command", "builtin", "exec", "nohup", "nice", "ionice",
                      "timeout", "stdbuf", "setsid", "sudo", "doas", "runuser", "chronic",
                      "unbuffer", "taskset", "chrt", "flock", "watch", "strace", "ltrace",
                      "uv", "uvx", "poetry", "pipx", "pdm", "hatch", "conda", "npx",
                      "script", "su", "time", "ssh", "nsenter", "unshare", "firejail",
                      "systemd-run", "tmux", "screen", "entr", "faketime", "catchsegv"})
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
