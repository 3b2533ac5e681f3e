"""The executor's Bash inside the OS boundary, run for real.

Each spelling below tries to move the plan's state, write maker's files or the
repository's config, or read the sealing key. It goes through a front end's own decision
(the plugin's PreToolUse hook, or ``maker run``'s), and whatever that decision lets run
runs as the client runs an allowed call (``bash -c``, the decision's ``updatedInput`` in
place of the command). With the kernel boundary, none may change a thing; with the
boundary forced off (``boundary: off``), the table's last column says which the command
guard alone still stops: the rest are the holes the kernel closes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.boxed import (
    FRONT_ENDS,
    attempt,
    env_path,
    kernel,
    kernel_commits,
    plugin_call,
    running,
    state,
)
from maker.core.paths import seal_key_path
from maker.store.plan_store import PlanStore
from maker.tools.box.boundary import unwrap, wrap

__all__ = ["env_path", "kernel", "kernel_commits", "running"]  # (the fixtures, from the harness)

pytestmark = pytest.mark.kernel

RESET = "maker step reset 1"

# (what it tries, the command, whether the guard alone stops it)
SPELLINGS: list[tuple[str, str, bool]] = [
    ("the command itself", RESET, True),
    ("env -S", f"env -S '{RESET}'", True),
    ("script -c", f"script -qc '{RESET}' /dev/null", True),
    ("a function (keyword)", f"function f {{ {RESET}; }}; f", True),
    ("a function (parens)", f"f() {{ {RESET}; }}; f", True),
    ("trap on exit", f"trap '{RESET}' EXIT; true", True),
    ("bash -c", f"bash -c '{RESET}'", True),
    ("the name in a variable", "m=maker; $m step reset 1", True),
    ("eval of a substitution", f"eval \"$(echo '{RESET}')\"", True),
    ("base64 into sh", "echo bWFrZXIgc3RlcCByZXNldCAx | base64 -d | sh", True),
    ("xargs", f"echo '{RESET}' | xargs -I{{}} sh -c '{{}}'", True),
    ("find -exec", "find . -maxdepth 0 -exec maker step reset 1 \\;", True),
    ("process substitution sourced", f"source <(echo '{RESET}')", True),
    ("coproc", f"coproc {RESET}; wait", True),
    ("a script written, then run", "printf 'mak%s step reset 1\\n' er > s.sh && sh s.sh", False),
    ("python builds the name plans/",
     "python3 -c \"import os; open(os.path.join('pla'+'ns','PWNED'),'w').write('x')\"", False),
    ("python runs maker", "python3 -c \"import subprocess as s; s.run(['mak'+'er','step',"
     "'reset','1'])\"", False),
    ("perl writes plans/", "perl -e 'open(F, \">\" . \"pla\" . \"ns/PWNED\")'", False),
    ("awk writes plans/", "awk 'BEGIN{print \"x\" > (\"pla\" \"ns/PWNED\")}'", False),
    ("tee into plans/", "echo x | tee plans/PWNED", True),
    ("a subshell cd", "(cd plans && touch PWNED)", True),
    ("a symlink to plans/", "ln -s plans p2 && touch p2/PWNED", True),
    ("a hard link to a step file",
     "ln plans/steps/01-*.md h.md; echo 'status: complete' >> h.md", True),
    ("copy out, edit, copy back",
     "cp -r plans /tmp/pl.$$ && sed -i 's/in-progress/pending/' /tmp/pl.$$/steps/*.md && "
     "cp -r /tmp/pl.$$/. plans/", True),
    ("tar into plans/", "mkdir -p t && touch t/PWNED && tar -cf - -C t . | tar -xf - -C plans",
     True),
    ("rename plans/ away", "mv plans plans.old && mkdir plans", True),
    ("delete the in-progress marker", "rm -f plans/.maker/active.json", True),
    ("dd over NOTES.md", "dd if=/dev/zero of=plans/NOTES.md count=1 2>/dev/null", True),
    ("remount writable", "mount -o remount,rw plans && touch plans/PWNED", True),
    ("a namespace of its own", "unshare -rm sh -c 'umount plans; touch plans/PWNED'", True),
    ("git config through git", "git config core.hooksPath /tmp/hooks", True),
    ("a git hook written", "printf '#!/bin/sh\\n' > .git/hooks/pre-commit", True),
    ("git config by python",
     "python3 -c \"open('.gi'+'t/config','a').write('[core]\\\\n\\\\tfsmonitor=x\\\\n')\"", False),
    ("a background job outliving the call",
     f"nohup sh -c 'sleep 1; {RESET}' >/dev/null 2>&1 &", True),
    ("setsid, detached", "setsid sh -c 'sleep 1; touch plans/PWNED' >/dev/null 2>&1 &", True),
    ("the project renamed away and copied back",
     "p=$PWD; cd / && mv \"$p\" \"$p.old\" && cp -a \"$p.old\" \"$p\" && "
     "touch \"$p/plans/PWNED\"", True),
    (".git renamed away and made again",
     "python3 -c \"import os, shutil; os.rename('.gi'+'t', 'g2'); shutil.copytree('g2', "
     "'.gi'+'t'); open('.gi'+'t/config', 'a').write('[core]\\n\\tfsmonitor = x\\n')\"", False),
    ("a project file run later",
     "printf 'import os\\nos.system(\"mak\" + \"er step reset 1\")\\n' > conftest.py && "
     "python3 -c 'import conftest'", False),
]


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize(("what", "command", "guard_alone"), SPELLINGS,
                         ids=[s[0] for s in SPELLINGS])
def test_with_the_boundary_no_spelling_moves_thestate(
        kernel: PlanStore, front: str, what: str, command: str, guard_alone: bool) -> None:
    running = kernel
    refusal, changed = attempt(running, front, command)
    assert not changed, f"{what}: `{command}` changed {sorted(changed)} ({front})"
    assert running.load_step(1).status == "in-progress"
    if refusal is None:  # (what ran, ran in the box)
        assert unwrap(FRONT_ENDS[front](running, command)[1], running.root, 1) == command


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize(("what", "command", "guard_alone"), SPELLINGS,
                         ids=[s[0] for s in SPELLINGS])
def test_without_the_boundary_the_table_says_what_the_guard_alone_stops(
        running: PlanStore, front: str, what: str, command: str, guard_alone: bool) -> None:
    (running.root / "settings.yaml").write_text("boundary: off\n")
    refusal, changed = attempt(running, front, command)
    if guard_alone:
        assert refusal is not None and not changed, f"{what}: the guard let it through"
    else:  # (a hole of the guard's: it ran, and nothing but the kernel would stop it)
        assert refusal is None, f"{what}: the guard stops it now: mark it True in the table"


def test_the_sealing_key_cannot_be_read_in_the_box(kernel: PlanStore) -> None:
    running = kernel
    refusal, run = plugin_call(running, "cat \"$HOME/.local/share/maker/seal.key\" > stolen")
    if refusal is None:  # (the guard reads the path; a spelling it misses: the box)
        subprocess.run(["bash", "-c", run], cwd=running.project, check=False,
                       capture_output=True, timeout=30)
    spelled = "python3 -c \"import os; print(open(os.path.expanduser('~/.local/share/ma'+" \
              "'ker/seal.key')).read())\" > stolen2"
    assert plugin_call(running, spelled)[0] is None
    subprocess.run(["bash", "-c", plugin_call(running, spelled)[1]], cwd=running.project,
                   check=False, capture_output=True, timeout=30)
    assert seal_key_path().read_bytes()  # (there is a key)
    assert (running.project / "stolen2").read_bytes() in (b"", b"\n")


def test_the_steps_own_work_and_temp_files_stay_writable(kernel: PlanStore,
                                                        tmp_path: Path) -> None:
    running = kernel
    scratch = tmp_path / "outside-scratch"
    command = (f"mkdir -p src && echo hi > src/a.txt && echo t > {scratch} && "
               "git status --short >/dev/null && id -u")
    refusal, run = plugin_call(running, command)
    assert refusal is None
    done = subprocess.run(["bash", "-c", run], cwd=running.project, capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert (running.project / "src/a.txt").read_text() == "hi\n" and scratch.is_file()
    assert done.stdout.strip() == str(os.getuid())  # (the person's own user id)


def test_a_write_into_plans_is_a_read_only_error_and_the_exit_code_is_kept(
        kernel: PlanStore) -> None:
    running = kernel
    spelled = "python3 -c \"open('pla'+'ns/x','w')\"; echo after; exit 7"
    _, run = plugin_call(running, spelled)
    done = subprocess.run(["bash", "-c", run], cwd=running.project, capture_output=True,
                          text=True, timeout=30, check=False)
    assert "Read-only file system" in done.stderr and done.stdout == "after\n"
    assert done.returncode == 7


def test_a_command_is_wrapped_as_written_and_unwrapped_only_when_exact(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    spec = plans / ".maker/box/step-1.spec"
    for command in ["ls", "cat <<'MAKER_BOX'\nx\nMAKER_BOX", "echo 'a\nb'\n", ""]:
        wrapped = wrap(command, spec)
        first, rest = wrapped.split("\n", 1)
        assert first.startswith("/bin/sh ") and "maker-box" in first
        assert rest.startswith(command)  # (what a person reads: the command as written)
        assert unwrap(wrapped, plans, 1) == command
        assert unwrap(wrapped, plans, 2) is None  # another step's box
        assert unwrap(wrapped + "; touch x", plans, 1) is None
    assert unwrap("ls", plans, 1) is None


def test_a_step_beside_others_writes_only_in_its_own_worktree(kernel: PlanStore) -> None:
    """Its worktree under plans/ stays writable (but for its copy of plans/ and its .git
    file); the main checkout, plans/ and another step's worktree are read-only."""
    from maker.tools.box.boundary import boxed_command

    project, trees = kernel.project, kernel.root / ".maker" / "worktrees"
    own, other = trees / "step-1-abc", trees / "step-2-abc"
    for tree in (own, other):
        (tree / "plans").mkdir(parents=True)
        (tree / ".git").write_text("gitdir: /nowhere\n")
    tries = {"own": own / "a.txt", "own plans copy": own / "plans" / "x",
             "own .git": own / ".git", "main": project / "main.txt",
             "plans": kernel.root / "x", "other": other / "b.txt"}
    command = "; ".join(f"echo x >> '{path}'" for path in tries.values())
    refusal, run = boxed_command(kernel.root, 1, command, workspace=own)
    assert refusal is None and run is not None
    done = subprocess.run(["bash", "-c", run], cwd=own, capture_output=True, timeout=30,
                          check=False, text=True)
    assert done.returncode == 0 or "Read-only" in done.stderr, done.stderr
    wrote = {what for what, path in tries.items()
             if path.is_file() and path.read_text().endswith("x\n")}
    assert wrote == {"own"}


def test_makers_own_program_and_the_rest_of_the_machine_are_read_only(
        kernel: PlanStore) -> None:
    """A box that could rewrite itself, or the interpreter that runs it, would be a box
    for one call only (run only with the boundary: without it, this would rewrite them)."""
    spelled = ("python3 -c \"import importlib; b = importlib.import_module('mak'+'er.tools."
               "box.box_install'); open(b.BOX, 'a').write('exit 0')\"")
    before = state(kernel)
    refusal, run = plugin_call(kernel, spelled)
    assert refusal is None  # (the guard cannot read it: the kernel holds)
    done = subprocess.run(["bash", "-c", run], cwd=kernel.project, capture_output=True,
                          text=True, timeout=30, check=False)
    assert "Read-only file system" in done.stderr
    assert state(kernel) == before


def test_a_commondir_made_in_the_git_folder_is_removed_and_one_found_refuses(
        kernel_commits: PlanStore) -> None:
    """Through `.git/commondir` git outside the box would read a step's own config and
    hooks (a `core.fsmonitor` run by the person's next `git status`). A step whose writes
    name `.git` may make one (the folder is writable to it): removed when its command
    ends."""
    made = ("python3 -c \"open('.gi' + 't/commondir', 'w').write('/tmp/elsewhere')\"; "
            "sleep 30 & exit 3")
    refusal, run = plugin_call(kernel_commits, made)
    assert refusal is None  # (the guard cannot read it: the box holds)
    done = subprocess.run(["bash", "-c", run], cwd=kernel_commits.project,
                          capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 3 and "removed" in done.stderr  # (and `sleep 30` ended)
    assert not (kernel_commits.project / ".git/commondir").exists()
    for signal in (2, 15, 1):  # (the box's first process is the command's user's to signal)
        stopped = ("python3 -c \"import os; open('.gi' + 't/commondir', 'w').write('/x'); "
                   f"os.kill(1, {signal})\"; sleep 1")
        _, run = plugin_call(kernel_commits, stopped)
        subprocess.run(["bash", "-c", run], cwd=kernel_commits.project,
                       capture_output=True, timeout=20, check=False)
        assert not (kernel_commits.project / ".git/commondir").exists(), signal
    left = kernel_commits.project / ".git/commondir"
    left.write_text("/tmp/elsewhere\n")  # (a kill left one)
    _, run = plugin_call(kernel_commits, "echo ran")
    done = subprocess.run(["bash", "-c", run], cwd=kernel_commits.project,
                          capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 126 and "ran" not in done.stdout and "commondir" in done.stderr


def test_programs_planted_on_path_are_not_what_the_box_runs(
        kernel: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project folder on PATH (an activated .venv/bin) is the step's to write: the box
    runs `unshare` and its own files by absolute path."""
    planted = kernel.project / ".venv/bin"
    planted.mkdir(parents=True)
    for name in ("unshare", "dirname", "python3", "sh"):
        (planted / name).write_text("#!/bin/sh\ntouch \"$PWD/plans/PWNED\"\n")
        (planted / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    _, run = plugin_call(kernel, "echo hello")
    done = subprocess.run(["bash", "-c", run], cwd=kernel.project, capture_output=True,
                          text=True, timeout=20, check=False, env=dict(os.environ))
    assert done.stdout == "hello\n" and not (kernel.root / "PWNED").exists()


# A string that only names a maker command is text in the box: the kernel holds maker's
# state and key, so the guard need not refuse a grep pattern or a commit message for it.
TEXTS = [
    "grep -rn 'maker step reset' . || true",
    "git log --oneline --grep 'maker step approve' || true",
    "echo 'maker step reset 1' > notes.txt",
]


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize("command", TEXTS)
def test_in_the_box_a_string_naming_a_maker_command_is_text(
        kernel: PlanStore, front: str, command: str) -> None:
    refusal, run = FRONT_ENDS[front](kernel, command)
    assert refusal is None, refusal
    assert unwrap(run, kernel.root, 1) == command  # (it runs, and in the box)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize("command", TEXTS)
def test_without_the_box_the_guard_still_refuses_it(
        running: PlanStore, front: str, command: str) -> None:
    (running.root / "settings.yaml").write_text("boundary: off\n")
    refusal, _ = FRONT_ENDS[front](running, command)
    assert refusal is not None and "does not move the plan's state" in refusal, refusal


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_in_the_box_running_a_maker_command_is_still_refused(
        kernel: PlanStore, front: str) -> None:
    for command in ("maker step approve 1", "sh -c 'maker step reset 1'"):
        refusal, _ = FRONT_ENDS[front](kernel, command)
        assert refusal is not None, command
