"""Which shell commands count as read-only (the planner's Bash, a searching step's Bash)."""

from __future__ import annotations

import pytest

from maker.tools.readonly import is_read_only, why_not_read_only


@pytest.mark.parametrize("command", [
    "ls -la src",
    "rg -n 'def parse_plan' src",
    "grep -rn TODO . | head -20",
    "find . -name '*.py' -not -path './.venv/*'",
    "git log --oneline -5",
    "git -C sub diff HEAD~1",
    "cat README.md | wc -l",
    "maker status",
    "maker plan show --json",
    "/usr/bin/head -n 5 pyproject.toml",
    "sort names.txt | uniq -c",
])
def test_readers_pass(command: str) -> None:
    assert is_read_only(command), why_not_read_only(command)


@pytest.mark.parametrize(("command", "reason"), [
    ("rm -rf build", "`rm` is not a known read-only command"),
    ("ls > files.txt", "shell operator"),
    ("cat a; rm b", "shell operator"),
    ("ls && touch x", "shell operator"),
    ("ls || touch x", "shell operator"),
    ("echo $(touch x)", "shell operator"),
    ("echo `touch x`", "shell operator"),
    ("cat <<EOF", "shell operator"),
    ("sleep 100 &", "shell operator"),
    ("find . -name x -delete", "`find -delete` can write"),
    ("find . -exec rm {} ;", "shell operator"),
    ("find . -exec rm {} +", "`find -exec` can write"),
    ("rg --pre ./evil x", "`rg --pre` can write"),
    ("sort -o out.txt in.txt", "`sort -o` can write"),
    ("sort -oout.txt in.txt", "`sort -o` can write"),
    ("git commit -am x", "`git commit` is not a read-only git command"),
    ("git push", "`git push` is not a read-only git command"),
    ("git -c core.pager=evil log", "`git -c` can set a program"),
    ("git diff --ext-diff", "`git --ext-diff` can write"),
    ("git --version", "needs a read-only subcommand"),
    ("cat x | sh", "`sh` is not a known read-only command"),
    ("cat x | python3 -", "`python3` is not a known read-only command"),
    ("maker step start 3", "only maker's read commands"),
    ("maker plan write -", "only `maker plan show`"),
    ("ls 'unclosed", "cannot be parsed"),
    ("ls |", "empty pipeline stage"),
    ("sed -i s/a/b/ f", "`sed` is not a known read-only command"),
])
def test_writers_and_operators_are_refused(command: str, reason: str) -> None:
    why = why_not_read_only(command)
    assert why is not None and reason in why
