"""Is a shell command read-only? For agents that may look but must not touch.

A step that lists ``Grep`` or ``Glob`` may search with Bash: Claude Code 2.1.3xx
drops those tools from any agent that has Bash (search goes through Bash there), so
the step executor, which has Bash, never sees them. The planner's Bash, should it
ever be given one, is held to the same rule. A command passes only if every stage
of its pipeline is a known reader with no writing option, and it uses no
redirection, command substitution, chaining or background operator. Anything
unsure is refused: the agent can say what it needed instead.
"""

from __future__ import annotations

import re
import shlex

__all__ = ["is_read_only", "why_not_read_only"]

_READERS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "tree", "pwd",
    "file", "stat", "du", "sort", "uniq", "cut", "tr", "basename", "dirname", "realpath",
    "readlink", "diff", "cmp", "nl", "true", "echo", "which", "type",
})
_GIT_READERS = frozenset({"log", "show", "diff", "status", "ls-files", "grep", "blame",
                          "rev-parse", "describe", "shortlog", "ls-tree", "cat-file"})
_MAKER_READERS = frozenset({"status", "context", "next", "plan"})
# Options that make a reader write, delete or run other programs.
_FORBIDDEN_OPTIONS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls"),
    "rg": ("--pre",),
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "git": ("--output", "--ext-diff"),
}
_OPERATORS = re.compile(r"[;&><`\n\r]|\$\(|\$\{|\|\|")


def why_not_read_only(command: str) -> str | None:
    """None when ``command`` only reads; otherwise the reason it does not qualify."""
    if _OPERATORS.search(command):
        return ("it uses a shell operator (`;`, `&`, `&&`, `||`, `>`, `<`, backticks or "
                "`$(...)`); run one plain command or a `|` pipeline of readers")
    for stage in command.split("|"):
        try:
            words = shlex.split(stage)
        except ValueError as exc:
            return f"it cannot be parsed ({exc})"
        if not words:
            return "it has an empty pipeline stage"
        program = words[0].rsplit("/", 1)[-1]
        if program == "git":
            reason = _git_reason(words[1:])
            if reason:
                return reason
        elif program == "maker":
            if len(words) < 2 or words[1] not in _MAKER_READERS:
                return "only maker's read commands (status, context, next, plan show) may run"
            if words[1] == "plan" and words[2:3] != ["show"]:
                return "only `maker plan show` may run"
        elif program not in _READERS:
            return f"`{program}` is not a known read-only command"
        for option in _FORBIDDEN_OPTIONS.get(program, ()):
            if any(_is_option(w, option) for w in words[1:]):
                return f"`{program} {option}` can write or run programs"
    return None


def _git_reason(args: list[str]) -> str | None:
    """Why a git command line is not read-only, or None."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-C":  # run in another directory: takes a value
            i += 2
            continue
        if word.startswith("-c") or word.startswith("--config") or word == "--exec-path":
            return "`git -c` can set a program to run"
        if word.startswith("-"):
            i += 1
            continue
        if word not in _GIT_READERS:
            return f"`git {word}` is not a read-only git command"
        return None
    return "`git` needs a read-only subcommand (log, show, diff, status, ...)"


def _is_option(word: str, option: str) -> bool:
    if option.startswith("--"):
        return word == option or word.startswith(option + "=")
    if len(option) == 2:  # a short option, also when its value is attached (-ofile)
        return word.startswith(option)
    return word == option


def is_read_only(command: str) -> bool:
    return why_not_read_only(command) is None
