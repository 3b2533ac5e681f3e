"""The main agent's Bash while a plan exists: a command that may change something runs in
the main agent's own box (plans/ and the key out of reach, the project and its git
writable), decided by the person's own Bash rules on the command as written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.boxed import env_path, kernel, running, state
from maker.core.paths import seal_key_path
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker.tools.box.main_box import MAIN_GIT_SPEC, MAIN_SPEC
from maker.tools.guards import person_rules

__all__ = ["env_path", "kernel", "running"]  # (the fixtures, from the harness)

pytestmark = pytest.mark.kernel


@pytest.fixture(autouse=True)
def no_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The person's rules only from the files each test writes (not this test run's own
    command line, nor the machine's settings)."""
    monkeypatch.setattr(person_rules, "client_flags", lambda: ({"allow": [], "deny": [],
                                                               "ask": []}, []))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-config"))


def main_call(store: PlanStore, command: str, mode: str = "default",
              cwd: Path | None = None) -> dict[str, Any]:
    raw = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps({
        "session_id": "sess-1", "cwd": str(cwd or store.project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command, "description": "d"},
        "tool_use_id": "t1", "permission_mode": mode}))
    return (json.loads(raw) if raw else {}).get("hookSpecificOutput") or {}


def run(store: PlanStore, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=store.project, capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)


def test_a_command_that_may_write_runs_in_the_main_agents_box(kernel: PlanStore) -> None:
    said = main_call(kernel, "python3 -c 'print(1)' > out.txt")
    boxed = said["updatedInput"]["command"]
    assert MAIN_SPEC in boxed and "permissionDecision" not in said  # (the mode decides)
    assert said["updatedInput"]["description"] == "d"
    # Sent again as the client asks (auto mode), it runs as sent.
    again = main_call(kernel, boxed)
    assert again["updatedInput"]["command"] == boxed


def test_in_the_box_the_plan_and_key_are_out_of_reach_and_git_works(kernel: PlanStore) -> None:
    before = state(kernel)
    key = seal_key_path()
    # (a script a step wrote: what the main agent's guard cannot read in the command)
    (kernel.project / "build.sh").write_text(
        f"echo x > plans/PWNED; echo x >> {kernel.root}/plan.yaml; cat {key} > stolen; "
        "echo x >> .git/config; echo x > ~/.bashrc; echo ok > made.txt; "
        "printf ../cm > .git/commondir; "
        "git add made.txt && git -c user.name=a -c user.email=a@b commit -qm made\n")
    boxed = main_call(kernel, "sh build.sh")["updatedInput"]["command"]
    assert MAIN_SPEC in boxed
    done = run(kernel, boxed)
    assert state(kernel) == before, done.stderr
    assert not (kernel.project / "plans" / "PWNED").exists()
    assert (kernel.project / "stolen").read_bytes() == b""  # (the key: hidden)
    rc = Path.home() / ".bashrc"
    assert not rc.exists() or "x" not in rc.read_text()
    assert (kernel.project / "made.txt").read_text() == "ok\n"
    # A command that runs no git itself (a script, a test run) has git's folder read-only:
    # no commondir a git of the person's would read while it runs, no commit.
    assert not (kernel.project / ".git" / "commondir").exists()
    assert run(kernel, "git log --format=%s -1").returncode != 0, done.stderr
    # The main agent's own git writes it: its commits work.
    command = "git add made.txt && git -c user.name=a -c user.email=a@b commit -qm made"
    boxed = main_call(kernel, command)["updatedInput"]["command"]
    assert MAIN_GIT_SPEC in boxed
    done = run(kernel, boxed)
    log = run(kernel, "git log --format=%s -1").stdout.strip()
    assert log == "made", done.stderr


MESSAGE = "git commit -m \"$(cat <<'EOF'\nfeat: a title\n\nits body, $(not run)\nEOF\n)\""


@pytest.mark.parametrize(("command", "writable"), [
    ("git add -A && git commit -m x", True),
    (MESSAGE, True),  # (the client's own way to write a commit message)
    ("cd src && git add . && git status; echo done", True),
    ("git add . && pytest", False),  # (the project's code runs beside it)
    ("git -C docs status", False),  # (another repository's programs)
    ("cd docs && git commit -m x", False),
    ("git --git-dir=docs/.git log", False),
    ("GIT_DIR=docs/.git git status", False),
    ("git commit -m \"$(cat <<EOF\nx $(pytest)\nEOF\n)\"", False),  # (expanded)
    ("git commit -m \"$(cat <<'EOF'\nx\nEOF\npytest\nEOF\n)\"", False),  # (ends early)
    ("bash -c 'git commit -m x'", False),
    ("python3 -m pytest", False),
    ("git rebase -x 'python3 -m pytest' HEAD~1", False),  # (git runs a command itself)
    ("git bisect run python3 -m pytest", False),
    ("git submodule foreach make", False),
    ("git -c core.fsmonitor=./x.sh status", False),  # (an option that names a program)
    ("git -c user.name=a -c user.email=a@b commit -qm x", True),
    ("git --exec-path=./tools status", False),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x git status",
     False),
    ("GIT_AUTHOR_NAME=a git commit -m x", True),
    ("git config core.fsmonitor ./x.sh && git status", False),
    ("./git status", False),
    ("cd bare && git status", False),  # (a folder that looks like a repository of its own)
    ("git push -u origin feature && gh pr create --fill", True),  # (gh pushes with git)
    ("gh pr create --title t --body \"$(cat <<'EOF'\nthe body\nEOF\n)\"", True),
    ("gh pr create --fill && pytest", False),
])
def test_gits_folder_is_writable_to_a_command_that_is_gits_alone_in_the_project(
        kernel: PlanStore, command: str, writable: bool,
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """git's folder is writable only to a command that is git's alone (but builtins that
    run no code), in the project's own repository: beside the project's code (a test run)
    or in a repository a step left (docs/.git), a planted program could make a commondir
    that a git of the person's reads while the command runs."""
    tools = tmp_path_factory.mktemp("person-bin")  # (GitHub's gh, outside the project)
    (tools / "gh").write_text("#!/bin/sh\n")
    (tools / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{os.environ['PATH']}:{tools}")
    (kernel.project / "src").mkdir()
    (kernel.project / "docs").mkdir()
    (kernel.project / "docs" / ".git").write_text("gitdir: ../elsewhere\n")
    for part in ("objects", "refs"):
        (kernel.project / "bare" / part).mkdir(parents=True)
    (kernel.project / "bare" / "HEAD").write_text("ref: refs/heads/main\n")
    boxed = main_call(kernel, command, mode="bypassPermissions")["updatedInput"]["command"]
    assert f"/{MAIN_GIT_SPEC if writable else MAIN_SPEC} " in boxed


def test_the_folder_the_shell_is_in_decides_which_repository_git_runs_in(
        kernel: PlanStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's Bash keeps its folder between calls: a `cd docs` in one call and a
    `git status` in the next is `cd docs && git status`; and a git that the search path
    finds in the project (a step's `.venv/bin/git`) is not git."""
    (kernel.project / "docs").mkdir()
    (kernel.project / "docs" / ".git").write_text("gitdir: ../elsewhere\n")
    said = main_call(kernel, "git status", cwd=kernel.project / "docs")
    assert f"/{MAIN_SPEC} " in said["updatedInput"]["command"]
    planted = kernel.project / ".venv" / "bin"
    planted.mkdir(parents=True)
    (planted / "git").write_text("#!/bin/sh\n")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    said = main_call(kernel, "git status")
    assert f"/{MAIN_SPEC} " in said["updatedInput"]["command"]


def _nested(kernel: PlanStore, mark: Path, *, under: str = "vendor/x") -> Path:
    """A repository a step made in the project: its fsmonitor, a diff program and an ssh
    command each leave ``mark``, and try to write into the project's git folder."""
    sub = kernel.project / under
    sub.mkdir(parents=True)
    ident = ["-c", "user.name=s", "-c", "user.email=s@x"]
    plant = f"touch {mark}; touch {kernel.project}/.git/PLANTED; false #"
    for args in (["init", "-q"], [*ident, "commit", "-q", "--allow-empty", "-m", "n"],
                 ["config", "core.fsmonitor", plant], ["config", "diff.external", plant],
                 ["config", "core.sshCommand", plant]):
        subprocess.run(["git", "-C", str(sub), *args], check=True, capture_output=True)
    (sub / "f").write_text("dirty\n")
    return sub


@pytest.mark.parametrize("command", [
    "git add -A && git status",
    "git add -A && git add -A",  # (git add enters a gitlink whatever the config says)
    "git add -A && git status --ignore-submodules=none",
    "git add -A && git diff --cached --submodule=diff",
    "git add -A && git -c user.name=a -c user.email=a@b commit -qm s && "
    "git describe --dirty --always",
    "git add -A && git -c user.name=a -c user.email=a@b commit -qm wip",
])
def test_a_repository_of_a_steps_in_the_project_keeps_gits_folder_read_only(
        kernel: PlanStore, tmp_path: Path, command: str) -> None:
    """git enters a nested repository (its own config's programs run) in ways no setting
    stops; where git finds one, git's folder stays read-only to the main agent's git:
    nothing it runs writes there, and no gitlink reaches a commit (which the person's
    own `git reset` would bring back into the index, unboxed)."""
    mark = tmp_path / "ran"
    _nested(kernel, mark)
    said = main_call(kernel, command)["updatedInput"]["command"]
    assert f"/{MAIN_SPEC} " in said
    run(kernel, said)
    assert not (kernel.project / ".git" / "PLANTED").exists()
    tree = run(kernel, "git ls-tree -r HEAD").stdout
    assert "160000" not in tree, tree
    subprocess.run(["git", "reset", "-q"], cwd=kernel.project, check=False)
    mark.unlink(missing_ok=True)
    subprocess.run(["git", "status"], cwd=kernel.project, capture_output=True, check=False)
    assert not mark.exists(), "the person's own git status entered it"


def test_an_ignored_repository_is_not_added_by_force(kernel: PlanStore, tmp_path: Path) -> None:
    _nested(kernel, tmp_path / "ran", under="build/x")
    (kernel.project / ".gitignore").write_text("build/\n")
    assert f"/{MAIN_SPEC} " in main_call(kernel, "git add -f build/x")["updatedInput"][
        "command"]
    assert f"/{MAIN_GIT_SPEC} " in main_call(kernel, "git add -A")["updatedInput"]["command"]


@pytest.mark.parametrize("command", ["ls -la", "git log --oneline -3", "cat README.md",
                                     "maker  status"])  # (a lookalike of maker's own)
def test_a_read_only_command_runs_in_the_box_without_a_prompt(kernel: PlanStore,
                                                              command: str) -> None:
    said = main_call(kernel, command)
    assert said["permissionDecision"] == "allow"
    spec = MAIN_GIT_SPEC if command.startswith("git ") else MAIN_SPEC
    assert f"/{spec} " in said["updatedInput"]["command"]
    assert "bin/maker" not in said["updatedInput"]["command"]  # (not pinned as maker's)


def test_what_a_read_only_git_runs_runs_boxed(kernel: PlanStore, tmp_path: Path) -> None:
    """A `.git` file a step left in a folder names another repository, whose config names
    an fsmonitor: the main agent's `git -C docs status` runs it, in the box; the key,
    read by a read-only `cat`, is hidden there."""
    evil = tmp_path / "evil"
    subprocess.run(["git", "init", "-q", str(evil)], check=True)
    plant = (f"touch {kernel.project}/ran; touch {kernel.root}/PWNED; "
             f"cat {seal_key_path()} > {kernel.project}/stolen; false #")
    subprocess.run(["git", "-C", str(evil), "config", "core.fsmonitor", plant], check=True)
    (kernel.project / "docs").mkdir()
    subprocess.run(["git", "-C", str(evil), "config", "core.worktree",
                    str(kernel.project / "docs")], check=True)
    (kernel.project / "docs" / ".git").write_text(f"gitdir: {evil}/.git\n")
    for command in ("git -C docs status", f"cat {seal_key_path()}"):
        done = run(kernel, main_call(kernel, command)["updatedInput"]["command"])
        assert seal_key_path().read_bytes() not in done.stdout.encode()
    assert (kernel.project / "ran").exists()  # (it ran: in the box)
    assert not (kernel.root / "PWNED").exists()
    assert not (kernel.project / "stolen").exists() or \
        (kernel.project / "stolen").read_bytes() == b""


def test_the_persons_rules_decide_on_the_command_as_written(kernel: PlanStore) -> None:
    claude = kernel.project / ".claude"
    claude.mkdir(exist_ok=True)
    (claude / "settings.local.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash(make:*)"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]}}))
    allowed = main_call(kernel, "make build")
    assert allowed["permissionDecision"] == "allow"
    assert MAIN_SPEC in allowed["updatedInput"]["command"]
    denied = main_call(kernel, "make build && rm -rf src", mode="bypassPermissions")
    assert denied["permissionDecision"] == "deny"
    assert "Bash(rm:*)" in denied["permissionDecisionReason"]
    asked = main_call(kernel, "git push origin main", mode="bypassPermissions")
    assert asked["permissionDecision"] == "ask"
    assert MAIN_GIT_SPEC in asked["updatedInput"]["command"]
    bypass = main_call(kernel, "python3 x.py", mode="bypassPermissions")
    assert bypass["permissionDecision"] == "allow"


def test_a_person_may_turn_it_off(kernel: PlanStore) -> None:
    (kernel.root / "settings.yaml").write_text("main_boundary: off\n")
    assert main_call(kernel, "python3 x.py > out.txt") == {}


def test_a_person_s_decision_is_still_refused(kernel: PlanStore) -> None:
    said = main_call(kernel, "maker step approve 1")
    assert said["permissionDecision"] == "deny"


def test_the_ssh_agent_in_the_users_runtime_folder_stays_reachable(
        kernel: PlanStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A desktop's agent lives in the runtime folder the box hides (/run/user/UID, beside
    the session bus): in the main agent's box everything there is hidden but the agent's
    socket (a `git push` signs; the bus would run commands outside the box)."""
    import socket

    from maker.tools.box import box_spec

    runtime = tmp_path / "run-user"
    (runtime / "keyring").mkdir(parents=True)
    listeners = []
    for path in (runtime / "keyring" / "ssh", runtime / "keyring" / "control", runtime / "bus"):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(4)
        listeners.append(server)
    monkeypatch.setattr(box_spec, "_sockets", lambda: [str(runtime)])
    monkeypatch.setenv("SSH_AUTH_SOCK", str(runtime / "keyring" / "ssh"))
    probe = ("import socket, sys\n"
             "for path in sys.argv[1:]:\n"
             "    s = socket.socket(socket.AF_UNIX)\n"
             "    try:\n"
             "        s.connect(path)\n"
             "        print('REACHED', path)\n"
             "    except OSError:\n"
             "        print('HIDDEN', path)\n")
    (kernel.project / "probe.py").write_text(probe)
    command = f"python3 probe.py {runtime}/keyring/ssh {runtime}/keyring/control {runtime}/bus"
    done = run(kernel, main_call(kernel, command)["updatedInput"]["command"])
    assert done.stdout.split("\n")[:3] == [f"REACHED {runtime}/keyring/ssh",
                                           f"HIDDEN {runtime}/keyring/control",
                                           f"HIDDEN {runtime}/bus"], done.stdout + done.stderr
    for server in listeners:
        server.close()


def test_a_command_that_fails_in_the_box_says_what_held_it(kernel: PlanStore) -> None:
    (kernel.project / "cfg.sh").write_text("echo x > ~/.npmrc\n")
    done = run(kernel, main_call(kernel, "sh cfg.sh")["updatedInput"]["command"])
    assert done.returncode != 0
    assert "maker's box for the main agent" in done.stderr and "main_boundary: off" in done.stderr
    wrapped = main_call(kernel, "python3 -c 'print(2)' > two.txt")["updatedInput"]["command"]
    fine = run(kernel, wrapped)
    assert fine.returncode == 0 and "maker-box" not in fine.stderr


def test_a_path_it_cannot_protect_refuses_rather_than_unboxes(kernel: PlanStore) -> None:
    """A line break in a path the box must protect (a step can make one under
    .git/modules) cannot be written into its spec: the command is refused with the fix,
    never run unboxed."""
    module = kernel.project / ".git" / "modules" / "a\nb"
    module.mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    said = main_call(kernel, "python3 -m pytest -q")
    assert said["permissionDecision"] == "deny", said
    assert "line break" in said["permissionDecisionReason"]
    assert "main_boundary: off" in said["permissionDecisionReason"]
