"""The person's own Bash permission rules, read as the client reads them, for a command
maker runs in a box.

The client checks a call a hook changed against its rules as changed: a rule the person
wrote for the bare command (``Bash(npm test:*)``, ``Bash(rm:*)`` in ``deny``) no longer
matches it once maker wraps it in a box. So, for the main agent's boxed commands, maker
applies those rules itself, to the command as the agent wrote it:

- a ``deny`` rule that matches the whole command or any command in it refuses it (read
  widely: a rule meant to stop a command must not miss it inside ``a && b``);
- an ``ask`` rule that matches the same way asks the person;
- an ``allow`` rule allows it only when the command is one plain command (no operator,
  no expansion) that the rule matches as the client does: ``Bash`` or ``Bash(*)`` any,
  ``Bash(x:*)`` ``x`` or ``x …``, ``Bash(x)`` exactly, ``*`` in a rule any text.

Read from the files the client reads (managed, the person's, the project's and its local
one). A file that cannot be read or parsed makes every answer ``ask``: a deny rule that
cannot be seen must not be walked around. Rules granted for one session only live in
the client and are not seen here: such a command is asked again.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from maker.core.bounded import read_regular_file, read_text_file
from maker.errors import InputError
from maker.tools.command.command_walk import walk
from maker.tools.command.shell import Word, lexed

__all__ = ["person_rule", "settings_files"]

_LIMIT = 4 * 1024 * 1024
_ANCESTORS = 8
_FLAGS = {"--allowedTools": "allow", "--allowed-tools": "allow",
          "--disallowedTools": "deny", "--disallowed-tools": "deny", "--settings": "settings"}
_RULE = re.compile(r"Bash(?:\((?P<body>.*)\))?", re.DOTALL)


def settings_files(project: Path) -> list[Path]:
    """The settings files whose ``permissions`` the client applies, in its order."""
    managed = (Path("/Library/Application Support/ClaudeCode/managed-settings.json")
               if sys.platform == "darwin" else Path("/etc/claude-code/managed-settings.json"))
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    return [managed, config / "settings.json", project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json"]


def person_rule(command: str, project: Path) -> tuple[str, str] | None:
    """``(what, why)`` the person's rules say of ``command`` (``deny``, ``ask`` or
    ``allow``, and the rule or the reason in words); None when no rule speaks to it."""
    rules, unread = _rules(project)
    if unread:
        return "ask", f"maker could not read {unread}, which may hold a rule for this command"
    parts, hidden, single = _commands(command, project)
    for what in ("deny", "ask"):
        for rule in rules[what]:
            body = _body(rule)
            if body is None:
                continue
            if any(_matches(body, part, widely=True) for part in parts):
                return what, f"your rule {rule} in {what}"
            if hidden:  # (a part the walk could not follow)
                return "ask", (f"your rule {rule} in {what} may match a command this one "
                               "runs that maker cannot read")
    if single:
        for rule in rules["allow"]:
            body = _body(rule)
            if body is not None and _matches(body, parts[0], widely=False):
                return "allow", f"your rule {rule} in allow"
    return None


def _rules(project: Path) -> tuple[dict[str, list[str]], str]:
    found: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    flags, extra = client_flags()
    for what, given in flags.items():
        found[what] += given
    for source in [*settings_files(project), *extra]:
        if isinstance(source, Path) and not source.exists():
            continue
        try:
            text = source if isinstance(source, str) else read_text_file(source, _LIMIT)
            data = json.loads(text)
        except (OSError, InputError, ValueError):
            return found, "the settings given to claude --settings" \
                if isinstance(source, str) else str(source)
        permissions = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(permissions, dict):
            continue
        for what, rules in found.items():
            listed = permissions.get(what)
            if isinstance(listed, list):
                rules += [r for r in listed if isinstance(r, str)]
    return found, ""


def client_flags() -> tuple[dict[str, list[str]], list[str | Path]]:
    """The rules the client was started with (``--allowedTools``, ``--disallowedTools``)
    and the settings it was given (``--settings``: a file or JSON text), read from the
    first ancestor process whose command line names one of them (Linux's ``/proc``;
    none elsewhere)."""
    rules: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    extra: list[str | Path] = []
    pid = os.getppid()
    for _ in range(_ANCESTORS):
        try:
            argv = read_regular_file(f"/proc/{pid}/cmdline", _LIMIT).split(b"\0")
            status = read_text_file(f"/proc/{pid}/status", 64 * 1024, errors="replace")
        except (OSError, InputError):
            break
        words = [w.decode("utf-8", "replace") for w in argv]
        if any(w.split("=", 1)[0] in _FLAGS for w in words):
            for flag, value in _flag_values(words):
                if _FLAGS[flag] == "settings":
                    extra.append(value if value.lstrip().startswith("{") else Path(value))
                else:
                    rules[_FLAGS[flag]] += [r.strip() for r in _split_rules(value)]
            break
        parent = next((line.split()[1] for line in status.splitlines()
                       if line.startswith("PPid:") and len(line.split()) > 1), "0")
        if not parent.isdigit() or int(parent) <= 1:
            break
        pid = int(parent)
    return rules, extra


def _flag_values(words: list[str]) -> list[tuple[str, str]]:
    out, flag = [], ""
    for word in words:
        name, eq, value = word.partition("=")
        if name in _FLAGS:
            if eq:
                out.append((name, value))
                flag = ""
            else:
                flag = name
        elif flag and not word.startswith("--"):
            out.append((flag, word))
            if _FLAGS[flag] == "settings":
                flag = ""
        else:
            flag = ""
    return out


def _split_rules(value: str) -> list[str]:
    """A flag's rules: separated by commas or spaces, but not inside a rule's brackets."""
    rules, depth, current = [], 0, ""
    for char in value:
        depth += (char == "(") - (char == ")")
        if char in ", " and depth <= 0:
            rules.append(current)
            current = ""
        else:
            current += char
    return [r for r in (*rules, current) if r.strip()]


def _body(rule: str) -> str | None:
    """A Bash rule's text in its brackets ("" for ``Bash`` alone); None for other tools."""
    found = _RULE.fullmatch(rule.strip())
    return None if found is None else (found["body"] or "").strip()


def _commands(command: str, cwd: Path) -> tuple[list[str], bool, bool]:
    """The whole command and every program it runs, as maker's walk finds them (through
    ``&&``, pipes, ``$(…)``, ``bash -c``, ``env``, ``sudo`` and the other wrappers it
    knows); whether the walk could not follow some of it; and whether it is one plain
    command (no operator, redirection or expansion), the only kind an allow rule allows."""
    whole = command.strip()
    found = walk(command, cwd)
    parts = [whole, *(" ".join(run.argv) for run in found.runs)]
    tokens = lexed(command)
    single = not isinstance(tokens, str) and all(
        isinstance(t, Word) and not t.hazards and not t.braces for t in tokens)
    return [p for p in dict.fromkeys(parts) if p], bool(found.unknowns), single


def _matches(body: str, command: str, *, widely: bool) -> bool:
    """Whether a rule's ``body`` matches ``command``; ``widely`` (deny and ask): a rule
    matches a command that starts with it, at a word's end for an exact rule."""
    if body in ("", "*"):
        return True
    if body.endswith(":*"):
        prefix = body[:-2].strip()
        if widely:
            return command.startswith(prefix)
        return command == prefix or command.startswith(prefix + " ")
    if "*" in body:
        return _glob(body.split("*"), command)
    if widely:
        return command == body or command.startswith(body + " ")
    return command == body


def _glob(pieces: list[str], text: str) -> bool:
    """Whether ``text`` is ``pieces`` joined by any text each: the first a prefix, the
    last a suffix, the others found in order (leftmost is enough: linear, never a
    pattern's backtracking)."""
    first, *middle, last = pieces
    if len(text) < len(first) + len(last) or not text.startswith(first) \
            or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True
