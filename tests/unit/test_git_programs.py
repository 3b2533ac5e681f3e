"""Read-only git that maker lets an agent run (the planner, the reviewer, an executor of
a step that may only read) runs none of the programs git's config names: a repository
whose config names a program that writes a file, for every way git has of running one,
keeps that file unwritten (maker.tools.git.git_programs)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import make_step, write
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.tools.command.readonly import why_not_read_only
from maker.tools.command.shell import Refused
from maker.tools.git.git_programs import program_free

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# Every program a read-only git command could run, named in the repository's config (or
# its hooks and attributes): each one notes that it ran, and passes its input through.
PROGRAM = "#!/bin/sh\necho \"$0 $*\" >> \"{ran}\"\ncat \"$@\" 2>/dev/null || cat\n"
KEYS = ("diff.external", "diff.drv.command", "diff.drv.textconv", "filter.flt.clean",
        "filter.flt.smudge", "filter.flt.process", "core.fsmonitor", "gpg.program",
        "core.pager", "pager.diff", "core.hooksPath")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture()
def trapped(plugin_project: Path) -> Path:
    """``plugin_project`` as a git repository with a committed file changed since, whose
    config names the trap for every program git may run; ``ran.txt`` lists what ran."""
    repo = plugin_project
    _git(repo, "init", "-q", ".")
    base = repo / ".git" / "trap"  # (outside the work tree)
    base.mkdir()
    trap = base / "trap.sh"
    trap.write_text(PROGRAM.format(ran=base / "ran.txt"))
    trap.chmod(0o755)
    for key, value in (("user.email", "me@example.com"), ("user.name", "Me")):
        _git(repo, "config", key, value)
    (repo / "a.txt").write_text("hello\n")
    (repo / ".gitattributes").write_text("*.txt diff=drv filter=flt\n")
    _git(repo, "add", "a.txt", ".gitattributes")
    _git(repo, "commit", "-qm", "first")
    hooks = base / "hooks"
    hooks.mkdir()
    shutil.copy(trap, hooks / "post-index-change")
    for key in KEYS:
        _git(repo, "config", key, str(hooks if key == "core.hooksPath" else trap))
    _git(repo, "config", "log.showSignature", "true")
    (repo / "a.txt").write_text("hello\nchanged\n")
    return repo


def ran(repo: Path) -> str:
    path = repo / ".git" / "trap" / "ran.txt"
    text = path.read_text() if path.exists() else ""
    path.unlink(missing_ok=True)
    return text


def bash(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/bash", "-c", command], cwd=repo, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def fire(repo: Path, agent: str, command: str) -> dict[str, Any] | None:
    data = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t1",
            "agent_id": "a1", "agent_type": agent}
    out = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps(data))
    return json.loads(out) if out else None


COMMANDS = ["git diff", "git status", "git log -p -1", "git show", "git blame a.txt",
            "git diff --stat | head -5", "git -C . diff HEAD", "git grep hello",
            "git ls-files -m", "git describe --always --dirty"]


@pytest.mark.parametrize("command", COMMANDS)
def test_as_typed_the_command_runs_the_repositorys_programs(trapped: Path,
                                                            command: str) -> None:
    """(The trap is live: what the tests below keep from running does run otherwise.)"""
    bash(trapped, command)
    assert ran(trapped)


@pytest.mark.parametrize("agent", ["maker:reviewer", "maker:planner"])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_allowed_read_only_git_command_runs_none_of_them(trapped: Path, agent: str,
                                                             command: str) -> None:
    out = fire(trapped, agent, command)
    assert out is not None
    decided = out["hookSpecificOutput"]
    assert decided["permissionDecision"] == "allow"
    rewritten = decided["updatedInput"]["command"]
    done = bash(trapped, rewritten)
    assert done.returncode == 0, done.stderr
    assert ran(trapped) == ""
    if command.startswith(("git diff", "git log", "git show")):
        assert "+changed" in done.stdout or "a.txt" in done.stdout


def test_an_executor_whose_step_may_only_read_runs_none_of_them(trapped: Path) -> None:
    store = write(trapped, [make_step(1, -1)])
    record = store.load().get(1)
    record.spec = dataclasses.replace(record.spec, primary_tools=["Read", "Grep"])
    store.save_step(record)
    start_step(store, 1, session_id="s")
    out = fire(trapped, "maker:step-executor", "git diff")
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "allow"
    done = bash(trapped, out["hookSpecificOutput"]["updatedInput"]["command"])
    assert done.returncode == 0 and "+changed" in done.stdout and ran(trapped) == ""


def test_git_status_verbose_is_refused_its_diff_cannot_be_kept_from_them() -> None:
    for command in ("git status -v", "git status -sv", "git status --verb"):
        assert why_not_read_only(command) is not None, command
    assert why_not_read_only("git status -s") is None


def test_other_stages_and_quoting_keep_their_meaning(trapped: Path) -> None:
    command = "git log --format='%s x' -- '*.txt' | grep -c first"
    rewritten = program_free(command, trapped)
    assert rewritten is not None and rewritten.endswith(" | grep -c first")
    done = bash(trapped, rewritten)
    assert done.stdout.strip() == "1" and ran(trapped) == ""
    assert program_free("ls -la", trapped) is None  # no git: as it is
    assert program_free("git commit -m x", trapped) is None  # not read-only: refused apart


async def test_the_headless_executor_of_a_step_that_may_only_read_runs_none_of_them(
        trapped: Path) -> None:
    from maker.engine.tool_limits import make_hooks

    store = write(trapped, [make_step(1, -1)])
    for tools, rewritten in ((["Read", "Grep"], True), (["Read", "Bash"], False)):
        step = dataclasses.replace(store.load().get(1).spec, primary_tools=tools)
        (hook,) = make_hooks(store, step)["PreToolUse"][0].hooks
        out = await hook({"hook_event_name": "PreToolUse", "tool_name": "Bash",  # type: ignore[arg-type]
                          "tool_input": {"command": "git diff"}, "tool_use_id": "t",
                          "cwd": str(trapped), "session_id": "s"}, "t", {"signal": None})
        if not rewritten:  # (a step that may run anything: as the permission rules say)
            assert out == {}
            continue
        decided = out["hookSpecificOutput"]  # type: ignore[typeddict-item]
        assert decided["permissionDecision"] == "allow"
        done = bash(trapped, decided["updatedInput"]["command"])
        assert done.returncode == 0 and "+changed" in done.stdout and ran(trapped) == ""


@pytest.mark.parametrize("option", ["--ignore-submodules=none", "--ignore-submodules=dirty",
                                    "--submodule=diff", "--recurse-submodules",
                                    "--ignore-sub=none", "--recurse-sub", "--submod=log"])
def test_an_option_that_enters_nested_repositories_is_refused(tmp_path: Path,
                                                              option: str) -> None:
    """Their git reads their own config (filters, fsmonitor), which maker's overrides
    do not name: a reader's git never enters one."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sub = "status" if "ignore" in option or "recurse" in option else "diff"
    assert program_free(f"git {sub} --stat", tmp_path) is not None
    with pytest.raises(Refused, match="makes git enter nested repositories"):
        program_free(f"git {sub} {option}", tmp_path)
    assert program_free(f"git {sub} --ignore-submodules=all", tmp_path) is not None
