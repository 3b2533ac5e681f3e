"""The person's Bash rules as maker applies them to a command it runs in a box (the
client matches them to the wrapped command, which no rule of theirs names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maker.tools.guards import person_rules
from maker.tools.guards.person_rules import person_rule

RULES = {"allow": ["Bash(npm test:*)", "Bash(git * main)", "Bash(make)"],
         "deny": ["Bash(rm:*)", "Read(./secret)"], "ask": ["Bash(git push:*)"]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(person_rules, "client_flags", lambda: ({"allow": [], "deny": [],
                                                               "ask": []}, []))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": RULES}))
    return tmp_path


@pytest.mark.parametrize(("command", "what"), [
    ("npm test", "allow"), ("npm test -- -x", "allow"), ("git merge main", "allow"),
    ("make", "allow"),
    ("npm tests", None), ("make all", None), ("python x.py", None),
    ("npm test > out.txt", None),  # (not one plain command: the person's mode decides)
    ("ls; npm test", None), ("npm test $X", "ask"),  # ($X could be a denied command)
    ("rm -rf build", "deny"), ("cd a && rm -rf b", "deny"), ("bash -c 'rm x'", "deny"),
    ("sudo rm x", "deny"), ("env A=1 rm x", "deny"), ("FOO=1 rm x", "deny"),
    ("cat <(rm x)", "deny"), ("a=$(rm x)", "deny"), ("npm test && rm x", "deny"),
    ("git push origin main", "ask"), ("make && git push", "ask"),
    ("echo `whoami`", "ask"),  # (the walk cannot read it: a deny rule could hide there)
])
def test_rules_decide_on_the_command_as_written(project: Path, command: str,
                                                what: str | None) -> None:
    said = person_rule(command, project)
    assert (said[0] if said else None) == what, said
    if said:
        assert "your rule" in said[1]


def test_every_settings_file_the_client_reads_counts(project: Path, tmp_path: Path) -> None:
    (tmp_path / ".claude" / "settings.json").unlink()
    assert person_rule("rm x", project) is None
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    assert person_rule("rm x", project) == ("deny", "your rule Bash(rm:*) in deny")
    (tmp_path / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(python x.py)"]}}))
    assert person_rule("python x.py", project) == ("allow", "your rule Bash(python x.py) in allow")


def test_a_file_that_cannot_be_read_asks(project: Path, tmp_path: Path) -> None:
    (tmp_path / ".claude" / "settings.local.json").write_text("{not json")
    said = person_rule("npm test", project)
    assert said is not None and said[0] == "ask" and "settings.local.json" in said[1]


def test_rules_given_on_the_clients_command_line_count(project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(person_rules, "client_flags", lambda: (
        {"allow": [], "deny": ["Bash(curl:*)"], "ask": []},
        ['{"permissions": {"deny": ["Bash(wget:*)"]}}']))
    assert person_rule("curl x | sh", project) == ("deny", "your rule Bash(curl:*) in deny")
    assert person_rule("wget x", project) == ("deny", "your rule Bash(wget:*) in deny")


@pytest.mark.parametrize(("argv", "deny", "settings"), [
    (["claude", "-p", "hi", "--disallowedTools", "Bash(rm:*) Edit"], ["Bash(rm:*)", "Edit"], []),
    (["claude", "--disallowed-tools=Bash(git push:*),Bash(rm:*)"],
     ["Bash(git push:*)", "Bash(rm:*)"], []),
    (["claude", "--disallowedTools", "Bash(a)", "Bash(b)", "--model", "x"],
     ["Bash(a)", "Bash(b)"], []),
    (["claude", "--settings", '{"a": 1}', "--disallowedTools", "Bash(x)"], ["Bash(x)"],
     ['{"a": 1}']),
])
def test_the_clients_flags_are_read_from_its_command_line(
        argv: list[str], deny: list[str], settings: list[str]) -> None:
    words = argv
    flags = person_rules._flag_values(words)
    found = [r for flag, value in flags if person_rules._FLAGS[flag] == "deny"
             for r in person_rules._split_rules(value)]
    assert found == deny
    assert [v for f, v in flags if person_rules._FLAGS[f] == "settings"] == settings


def test_a_glob_rule_is_matched_in_linear_time() -> None:
    text = "a" * 200_000 + "x"
    assert not person_rules._glob("a*b*c*d*e*f".split("*"), text)
    assert person_rules._glob(["git ", " main"], "git merge main")
    assert not person_rules._glob(["ab", "ba"], "aba")  # (the two pieces may not overlap)


def test_the_flags_are_read_from_the_clients_own_command_line() -> None:
    """The hook runs under the client (through a shell): the first ancestor whose command
    line names a flag is read, on Linux, from /proc."""
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("read from /proc: Linux only")
    probe = "from maker.tools.guards.person_rules import client_flags; print(client_flags())"
    out = subprocess.run(["sh", "-c", f"{sys.executable} -c '{probe}'", "claude",
                          "--disallowedTools", "Bash(rm:*) Edit", "--settings", '{"a": 1}'],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == ("({'allow': [], 'deny': ['Bash(rm:*)', 'Edit'], 'ask': []}, "
                           "['{\"a\": 1}'])")
