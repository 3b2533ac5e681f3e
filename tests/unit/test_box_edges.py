"""The box's edges: what a step's Bash makes that runs code later, outside the box.

A file at the top of the step's folder that a tool or the client runs on its own later
(``.mcp.json``: the next non-interactive session starts its servers; ``.envrc``,
``.vscode/``, ``lefthook.yml``, …) is read-only in the box where it exists, and removed
when the command ends where the command made it, unless the plan's step names it in its
``writes``. Run for real, through both front ends' decisions.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from harness.boxed import FRONT_ENDS, env_path, kernel, kernel_commits, running
from harness.kernel import require_kernel
from harness.step_plans import step_spec, write
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.main_bash import steps_repository
from maker.store.plan_store import PlanStore
from maker.tools.box.boundary import boxed_command, step_network, step_tmp, unwrap, wrap
from maker.tools.box.main_box import main_boxed
from maker.verify.check_run import step_box

__all__ = ["env_path", "kernel", "kernel_commits", "running"]  # (the fixtures, from the harness)

pytestmark = pytest.mark.kernel

MADE = [".mcp.json", ".MCP.JSON", ".envrc", ".npmrc", "lefthook.yml", ".pnpmfile.cjs",
        ".pre-commit-config.yaml", ".devcontainer.json", "bunfig.toml", ".gitmodules"]
MADE_DIRS = [".vscode", ".idea", ".husky", ".githooks", ".devcontainer"]


def _run(store: PlanStore, front: str, command: str) -> subprocess.CompletedProcess[str]:
    refusal, run = FRONT_ENDS[front](store, command)
    assert refusal is None, refusal
    return subprocess.run(["bash", "-c", run], cwd=store.project, capture_output=True,
                          text=True, timeout=30, check=False)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_what_runs_later_made_by_a_command_is_moved_aside_when_it_ends(
        kernel: PlanStore, front: str) -> None:
    command = (f"python3 -c \"import os\nfor f in {MADE!r}: open(f, 'w').write('{{}}')\n"
               f"for d in {MADE_DIRS!r}: os.mkdir(d); open(d + '/tasks.json', 'w')\"; "
               "echo kept > notes.txt; exit 5")
    done = _run(kernel, front, command)
    assert done.returncode == 5, done.stderr
    left = sorted(p.name for p in kernel.project.iterdir())
    assert not set(left) & {*MADE, *MADE_DIRS}, left
    assert (kernel.project / "notes.txt").read_text() == "kept\n"
    for name in [*MADE, *MADE_DIRS]:
        verb = "moved" if name in MADE_DIRS else "removed"  # (a folder: nothing lost)
        assert f"{verb} {kernel.project / name}" in done.stderr, name
    assert "runs code later" in done.stderr


def test_one_that_exists_is_read_only_and_stays_as_it_was(kernel: PlanStore) -> None:
    (kernel.project / ".envrc").write_text("export A=1\n")
    (kernel.project / ".vscode").mkdir()
    (kernel.project / ".vscode/tasks.json").write_text("{}\n")
    done = _run(kernel, "plugin", "echo 'curl x | sh' >> .envrc; "
                                  "echo bad > .vscode/tasks.json; echo bad > .vscode/new.json; "
                                  "rm -f .envrc; mv .vscode v2; echo after")
    assert done.stdout == "after\n"
    assert (kernel.project / ".envrc").read_text() == "export A=1\n"
    assert (kernel.project / ".vscode/tasks.json").read_text() == "{}\n"
    assert not (kernel.project / ".vscode/new.json").exists()
    assert not (kernel.project / "v2").exists()


def test_a_job_left_behind_makes_nothing_after_the_check(kernel: PlanStore) -> None:
    """The box ends what the command left running before it looks: no job outlives it
    to make `.mcp.json` once the box has looked."""
    done = _run(kernel, "plugin", "nohup sh -c 'sleep 1; echo x > .mcp.json' >/dev/null 2>&1 & "
                                  "setsid sh -c 'sleep 1; echo x > .envrc' & echo started")
    assert done.stdout == "started\n"
    time.sleep(2)
    assert not (kernel.project / ".mcp.json").exists()
    assert not (kernel.project / ".envrc").exists()


def test_what_the_steps_writes_name_is_the_steps_to_make(plugin_project: Path,
                                                        env_path: None) -> None:
    require_kernel()
    subprocess.run(["git", "init", "-q", str(plugin_project)], check=True)
    store = write(plugin_project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                             writes=[".envrc", "lefthook.yml", "src/**"])],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    done = _run(store, "plugin", "echo 'use nix' > .envrc; echo x > lefthook.yml; "
                                 "echo x > lefthook-local.yml; echo '{}' > .mcp.json")
    assert done.returncode == 0, done.stderr
    assert (plugin_project / ".envrc").read_text() == "use nix\n"
    assert (plugin_project / "lefthook.yml").is_file()
    assert (plugin_project / "lefthook-local.yml").is_file()  # (the name's family, named)
    assert not (plugin_project / ".mcp.json").exists()


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_a_call_in_the_background_is_refused_with_the_fix(running: PlanStore, front: str) -> None:
    """Nothing of a step's acts between maker's checks and the file tools' writes (a
    background call swapping a symlink under a Write): its Bash runs in the foreground."""
    refusal, _ = FRONT_ENDS[front](running, "npm run dev", run_in_background=True)
    assert refusal is not None and "without run_in_background" in refusal
    assert FRONT_ENDS[front](running, "ls", run_in_background=False)[0] is None


def _boxed(store: PlanStore, command: str, *, step: int = 1, network: bool = True,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    refusal, run = boxed_command(store.root, step, command, network=network)
    assert refusal is None and run is not None, refusal
    return subprocess.run(["bash", "-c", run], cwd=cwd or store.project, capture_output=True,
                          text=True, timeout=30, check=False)


def test_the_steps_tmp_is_its_own_and_kept_between_its_calls(
        kernel: PlanStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program's files in /tmp are not there; what the step writes in /tmp stays
    for its next call and is not another step's; the project (here under /tmp) and the
    home folder are seen through it, the home folder read-only; TMPDIR is there, empty."""
    other = Path(tempfile.mkdtemp(prefix="someone-elses-", dir="/tmp"))
    (other / "secret").write_text("theirs\n")
    outside_tmp = Path(tempfile.mkdtemp(prefix="tmpdir-", dir="/tmp"))
    (outside_tmp / "shared").write_text("x\n")
    monkeypatch.setenv("TMPDIR", str(outside_tmp))
    home = Path(os.environ["HOME"])
    note = f"/tmp/{other.name}-note"  # (a name no one else has)
    first = _boxed(kernel, f"ls '{other}' 2>&1; echo mine > {note}; ls \"$TMPDIR\"; "
                           f"echo made > made.txt; echo bad >> '{home}/.bashrc'; echo done")
    assert first.stdout.endswith("done\n"), first.stderr
    assert "No such file" in first.stdout and "secret" not in first.stdout
    assert "shared" not in first.stdout
    assert not Path(note).exists()
    assert (kernel.project / "made.txt").read_text() == "made\n"
    assert "Read-only file system" in first.stderr and not (home / ".bashrc").exists()
    again = _boxed(kernel, f"cat {note}")
    assert again.stdout == "mine\n"
    another = _boxed(kernel, f"cat {note} 2>&1 || echo none", step=2)
    assert another.stdout.endswith("none\n")
    tmp, _ = step_tmp(kernel.root, 1)
    assert tmp is not None and (tmp / Path(note).name).read_text() == "mine\n"
    assert stat.S_IMODE(tmp.stat().st_mode) == 0o700


def _listener() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    return server, server.getsockname()[1]


REACH = ("python3 -c \"import socket; s = socket.socket(); s.settimeout(3); "
         "print('reached' if s.connect_ex(('127.0.0.1', {port})) == 0 else 'unreached')\"")
OWN_LOOPBACK = ("python3 -c \"import socket; a = socket.socket(); a.bind(('127.0.0.1', 0)); "
                "a.listen(); b = socket.socket(); b.connect(a.getsockname()); print('own')\"")


def test_without_the_network_only_the_boxs_own_loopback_answers(kernel: PlanStore) -> None:
    server, port = _listener()
    with server:
        shut = _boxed(kernel, REACH.format(port=port) + "; " + OWN_LOOPBACK, network=False)
        opened = _boxed(kernel, REACH.format(port=port), network=True)
    assert shut.stdout == "unreached\nown\n", shut.stderr
    assert opened.stdout == "reached\n", opened.stderr


@pytest.mark.parametrize(("setting", "tools", "network"), [
    ("auto", ["Read", "Write", "Bash"], True),
    ("auto", ["Read", "Grep", "Bash(git log:*)", "Bash(ls *)"], False),
    ("auto", ["Read", "Bash(npm install:*)"], True),
    ("auto", None, False),  # (maker verify's checks)
    ("on", ["Read"], True), ("on", None, True),
    ("off", ["Read", "Write", "Bash"], False),
])
def test_what_has_the_network(setting: str, tools: list[str] | None, network: bool) -> None:
    assert step_network(setting, tools) is network


def test_a_reading_steps_bash_and_maker_verifys_checks_reach_no_listener(
        kernel: PlanStore) -> None:
    """The box the front end makes for a step whose tools only read, and maker verify's,
    have no network; `network: on` in the person's settings opens both."""
    server, port = _listener()
    reader = kernel.load_step(1)
    reader.spec.primary_tools[:] = ["Read", "Grep"]
    reader.spec.fallback_tools[:] = []
    kernel.save_step(reader)
    spec = kernel.root / ".maker/box/step-1.spec"
    with server:
        for network, said in (("auto", "unreached\n"), ("on", "reached\n")):
            (kernel.root / "settings.yaml").write_text(f"network: {network}\n")
            refusal, run = FRONT_ENDS["plugin"](kernel, "ls")
            assert refusal is None and unwrap(run, kernel.root, 1) == "ls", refusal
            done = subprocess.run(["bash", "-c", wrap(REACH.format(port=port), spec)],
                                  cwd=kernel.project, text=True, capture_output=True,
                                  timeout=30, check=False)
            assert done.stdout == said, (network, done.stderr)
            box = step_box(kernel, 1, kernel.project)
            assert box is not None
            _, checked = box(REACH.format(port=port))
            done = subprocess.run(["bash", "-c", checked or ""], cwd=kernel.project,
                                  text=True, capture_output=True, timeout=30, check=False)
            assert done.stdout == said, (network, done.stderr)


def test_a_folder_the_writes_name_a_file_in_is_the_steps_to_make() -> None:
    from maker.tools.box.runs_later import at_the_top

    names = at_the_top(Path("/nowhere"), [".vscode/tasks.json", "src/**"])
    assert ".vscode" not in names and ".envrc" in names and ".mcp.json" in names
    assert ".envrc" not in at_the_top(Path("/nowhere"), ["./.envrc"])


def test_the_steps_tmp_goes_when_the_step_is_no_longer_worked_on(kernel: PlanStore) -> None:
    from harness.step_plans import handoff
    from maker.executor.acceptance.accept import accept_handoff

    _boxed(kernel, "echo kept > /tmp/left-by-the-step; echo x > made.txt")
    tmp, _ = step_tmp(kernel.root, 1)
    assert tmp is not None and (tmp / "left-by-the-step").is_file()
    accept_handoff(kernel, handoff(1, files_changed=["made.txt"]))
    assert kernel.load_step(1).status != "in-progress"
    assert not tmp.exists()


NESTED = ("git init -q {d} && echo a > {d}/f && git -C {d} add f && "
          "git -C {d} -c user.name=a -c user.email=a@b commit -qm f && ")


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_gits_own_folder_is_read_only_to_a_step_that_does_not_commit(kernel: PlanStore,
                                                                      front: str) -> None:
    """No commondir, gitlink, ref or index a git outside the box would read while the
    command still runs: a step whose writes do not name `.git` reads git's state only
    (maker measures its files, a person commits them); `git status` and `git diff` work."""
    project = kernel.project
    (project / "a.txt").write_text("a\n")
    (project / "t.sh").write_text("printf ../cm > .git/commondir; git add a.txt; "
                                  "git -c user.name=a -c user.email=a@b commit -qm x; "
                                  "git branch planted; git status --short a.txt; echo tried\n")
    done = _run(kernel, front, "sh t.sh")  # (a script: the guard cannot read it; the box holds)
    assert done.stdout.endswith("?? a.txt\ntried\n"), done.stdout + done.stderr
    assert "Read-only file system" in done.stderr
    git = project / ".git"
    assert not (git / "commondir").exists() and not (git / "index").exists()
    assert not list((git / "refs" / "heads").iterdir())


def test_a_step_whose_writes_name_git_may_commit(kernel_commits: PlanStore) -> None:
    project = kernel_commits.project
    (project / "a.txt").write_text("a\n")
    done = _run(kernel_commits, "plugin", "git add a.txt && "
                                          "git -c user.name=a -c user.email=a@b commit -qm x")
    assert done.returncode == 0, done.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=project, capture_output=True,
                         text=True, check=True).stdout
    assert log == "x\n"


@pytest.mark.parametrize("how", ["link", "file"])
def test_a_git_folder_named_by_a_link_or_a_file_is_read_only_too(kernel: PlanStore,
                                                                 how: str) -> None:
    """The person's `.git` may be a link, or a file (`gitdir: .gitdata`), to a folder in
    the project: that folder is git's, held as `.git` itself is."""
    project = kernel.project
    os.rename(project / ".git", project / ".gitdata")
    if how == "link":
        os.symlink(".gitdata", project / ".git")
    else:
        (project / ".git").write_text("gitdir: .gitdata\n")
    (project / "t.sh").write_text("printf ../cm > .gitdata/commondir; echo tried\n")
    done = _run(kernel, "plugin", "sh t.sh")
    assert done.stdout == "tried\n" and "Read-only file system" in done.stderr, done.stderr
    assert not (project / ".gitdata" / "commondir").exists()


def _submodule(project: Path, tmp_path: Path, where: str, *, initialised: bool) -> None:
    """The person's submodule at ``where``, committed; not ``initialised``: left as a
    clone without ``--recurse-submodules`` leaves it, an empty folder."""
    ids = ["-c", "user.name=a", "-c", "user.email=a@b"]
    source = tmp_path / "source"
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    subprocess.run(["git", *ids, "-C", str(source), "commit", "-q", "--allow-empty", "-m", "s"],
                   check=True)
    subprocess.run(["git", *ids, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                    str(source), where], cwd=project, check=True, capture_output=True)
    subprocess.run(["git", *ids, "commit", "-qm", "the person's submodule"], cwd=project,
                   check=True, capture_output=True)
    if not initialised:
        subprocess.run(["git", "submodule", "--quiet", "deinit", "-f", where], cwd=project,
                       check=True, capture_output=True)


@pytest.mark.parametrize("where", ["lib", "vendor/lib"])
@pytest.mark.parametrize("attempt", [
    "printf 'gitdir: ../evil/.git\\n' > {w}/.git",  # (rewritten in place)
    "mv {w} moved && mkdir -p {w} && printf 'gitdir: ../evil/.git\\n' > {w}/.git",
    "mv {top} moved && mkdir -p {w} && printf 'gitdir: ../evil/.git\\n' > {w}/.git",
], ids=["rewrite", "rename-it", "rename-its-top"])
@pytest.mark.parametrize("initialised", [True, False], ids=["initialised", "uninitialised"])
def test_a_submodules_git_file_names_no_other_repository(kernel: PlanStore, tmp_path: Path,
                                                         where: str, attempt: str,
                                                         initialised: bool) -> None:
    """The person's `git status` enters a submodule and runs what the repository its `.git`
    names has in its config: a step can neither rewrite that file (nor put one in an
    uninitialised submodule's empty folder) nor move its folder (or a folder above it)
    away to put another in its place."""
    project = kernel.project
    _submodule(project, tmp_path, where, initialised=initialised)
    if not initialised:
        assert (project / where).is_dir() and not any((project / where).iterdir())
    mark = tmp_path / "ran"
    (project / "evil.sh").write_text(
        f"git init -q evil && git -C evil config core.fsmonitor 'touch {mark}; false #'\n"
        + attempt.format(w=where, top=where.split("/")[0]) + "\n")
    _run(kernel, "plugin", "sh evil.sh")
    subprocess.run(["git", "status"], cwd=project, capture_output=True, check=False)
    assert not mark.exists()
    if not initialised:
        assert not os.path.lexists(project / where / ".git")
        return
    assert (project / where / ".git").read_text().startswith("gitdir: ")
    assert "evil" not in (project / where / ".git").read_text()


@pytest.mark.parametrize("written", [
    "quoted", "key-case", "comment", "no-entry", "folder-missing"])
def test_an_uninitialised_submodule_is_held_however_git_knows_it(
        kernel: PlanStore, tmp_path: Path, written: str) -> None:
    """git reads `.gitmodules` as its config (a quoted value, a key in any case, a
    comment after it), and a gitlink with no entry there (a repository committed by
    mistake) is entered all the same: however git knows the folder, no step puts a `.git`
    in it for the person's `git status` to follow."""
    project = kernel.project
    _submodule(project, tmp_path, "lib", initialised=False)
    modules = project / ".gitmodules"
    text = modules.read_text()
    modules.write_text({"quoted": text.replace("path = lib", 'path = "lib"'),
                        "key-case": text.replace("path = lib", "Path = lib"),
                        "comment": text.replace("path = lib", "path = lib ; vendored"),
                        "no-entry": "", "folder-missing": text}[written])
    if written == "folder-missing":
        (project / "lib").rmdir()
    mark = tmp_path / "ran"
    (project / "evil.sh").write_text(
        f"git init -q evil && git -C evil config core.fsmonitor 'touch {mark}; false #'\n"
        "mkdir -p lib; printf 'gitdir: ../evil/.git\\n' > lib/.git\n")
    _run(kernel, "plugin", "sh evil.sh")
    subprocess.run(["git", "status"], cwd=project, capture_output=True, check=False)
    assert not mark.exists()
    assert not os.path.lexists(project / "lib" / ".git")


def test_the_main_agents_git_may_remove_or_move_an_uninitialised_submodule(
        kernel: PlanStore, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where git alone runs, the empty folder is git's to remove or move."""
    project = kernel.project
    _submodule(project, tmp_path_factory.mktemp("one"), "lib", initialised=False)
    _submodule(project, tmp_path_factory.mktemp("two"), "other", initialised=False)
    for command in ("git rm -q lib", "git mv other moved"):
        refusal, boxed = main_boxed(kernel.root, command, nested=steps_repository)
        assert refusal is None and boxed is not None and "main-git.spec" in boxed
        done = subprocess.run(["bash", "-c", boxed], cwd=project, capture_output=True,
                              text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
    assert not (project / "lib").exists() and (project / "moved").is_dir()


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_a_gitlink_the_command_adds_is_taken_out_of_the_index(kernel_commits: PlanStore,
                                                               front: str) -> None:
    """A nested repository added to the index (which the person's own git status would
    enter, running its filters) is taken out when the command ends, committed or not; its
    files stay, untracked. One the index held before the command stays."""
    project = kernel_commits.project
    ids = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["bash", "-c", NESTED.format(d="old") + "git add old"], cwd=project,
                   check=True, capture_output=True)
    subprocess.run(["git", *ids, "commit", "-qm", "the person's submodule"], cwd=project,
                   check=True, capture_output=True)
    done = _run(kernel_commits, front, NESTED.format(d="sub") + NESTED.format(d="two") +
                "git add sub two && git -c user.name=a -c user.email=a@b commit -qm add "
                "&& echo added")
    assert done.stdout.strip().endswith("added"), done.stderr
    for name in ("sub", "two"):
        assert f"took the nested repository {name} out of git's index" in done.stderr
        assert (project / name / "f").read_text() == "a\n"
    staged = subprocess.run(["git", "ls-files", "--stage"], cwd=project, capture_output=True,
                            text=True, check=True).stdout
    assert [line.split()[-1] for line in staged.splitlines()
            if line.startswith("160000")] == ["old"]


def test_a_step_whose_writes_name_gitmodules_may_add_a_submodule(plugin_project: Path,
                                                                 env_path: None) -> None:
    require_kernel()
    subprocess.run(["git", "init", "-q", str(plugin_project)], check=True)
    store = write(plugin_project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                             writes=[".gitmodules", "sub/**"])],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    done = _run(store, "plugin", NESTED.format(d="sub") + "git add sub && echo added")
    assert done.stdout.strip().endswith("added"), done.stderr
    assert "took the nested repository" not in done.stderr
    staged = subprocess.run(["git", "ls-files", "--stage", "sub"], cwd=plugin_project,
                            capture_output=True, text=True, check=True).stdout
    assert staged.startswith("160000"), staged


KNOBS = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger",
         "/sys/kernel/uevent_helper", "/sys/fs/cgroup/cgroup.procs",
         "/proc/irq/default_smp_affinity", "/dev/maker-made-node"]


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_the_kernels_knobs_are_read_only_in_the_box(kernel: PlanStore, front: str) -> None:
    """A person who is root is root in the box: a core pattern, a modprobe path or a
    uevent helper written there would run a program as root outside it, and a node made
    in /dev (a /dev/null replaced) is the machine's. Each is opened for writing (nothing
    is written), and each refuses."""
    probe = ("import os, sys\n"
             f"for knob in {KNOBS!r}:\n"
             "    if not os.path.exists(knob) and not knob.startswith('/dev/'):\n"
             "        continue\n"
             "    try:\n"
             "        os.close(os.open(knob, os.O_WRONLY | os.O_CREAT))\n"
             "        os.path.isfile(knob) and knob.startswith('/dev/') and os.unlink(knob)\n"
             "        print('OPEN', knob)\n"
             "    except OSError as exc:\n"
             "        print('HELD', knob, exc.strerror)\n")
    (kernel.project / "knobs.py").write_text(probe)
    done = _run(kernel, front, "python3 knobs.py")
    assert "OPEN" not in done.stdout and "HELD" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_a_submodules_config_and_hooks_are_read_only_in_the_box(kernel: PlanStore,
                                                                 front: str,
                                                                 tmp_path: Path) -> None:
    """The person's git status enters a submodule and runs what `.git/modules/NAME/config`
    names; its hooks run at the person's next checkout there."""
    source = tmp_path / "libsrc"
    ids = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    subprocess.run(["git", "-C", str(source), *ids, "commit", "-q", "--allow-empty", "-m", "l"],
                   check=True)
    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                    str(source), "lib"], cwd=kernel.project, check=True, capture_output=True)
    module = kernel.project / ".git" / "modules" / "lib"
    config = module.joinpath("config").read_bytes()
    (kernel.project / "plant.sh").write_text(  # (a script: what the guard cannot read)
        "git -C lib config core.fsmonitor 'touch /tmp/x'\n"
        "echo 'touch /tmp/x' > .git/modules/lib/hooks/post-checkout\n"
        "echo evil > .git/modules/lib/info/attributes\necho done\n")
    done = _run(kernel, front, "sh plant.sh")
    assert done.stdout.strip().endswith("done"), done.stderr
    assert module.joinpath("config").read_bytes() == config
    assert not module.joinpath("hooks", "post-checkout").exists()
    assert not module.joinpath("info", "attributes").exists()


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_exec_lines_written_into_a_rebases_plan_are_taken_out(kernel_commits: PlanStore,
                                                               front: str) -> None:
    """git runs a rebase's `exec` lines at the person's next `git rebase --continue`,
    outside the box: a command that writes them has them taken out when it ends."""
    git = kernel_commits.project / ".git"
    (kernel_commits.project / "plant.sh").write_text(  # (a script: what the guard cannot read)
        "mkdir -p .git/rebase-merge .git/sequencer\n"
        "printf 'pick 0000000 x\\nexec touch /tmp/ran\\nx touch /tmp/ran\\n' "
        "> .git/rebase-merge/git-rebase-todo\n"
        "printf 'exec\\ttouch /tmp/ran\\npick 0000000 y\\n' > .git/sequencer/todo\necho done\n")
    done = _run(kernel_commits, front, "sh plant.sh")
    assert done.stdout.strip() == "done", done.stderr
    assert (git / "rebase-merge" / "git-rebase-todo").read_text() == "pick 0000000 x\n"
    assert (git / "sequencer" / "todo").read_text() == "pick 0000000 y\n"
    assert done.stderr.count("took the exec lines out of") == 2


def test_an_abstract_socket_outside_is_out_of_a_writing_steps_reach(kernel: PlanStore) -> None:
    """A writing step shares the machine's network namespace, and with it the abstract
    unix sockets (an X server's, a bus's), which no folder holds: Landlock scopes them
    to the box's own (Linux 6.12; skipped before). The box's own still answer."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1) < 6:
        pytest.skip("this kernel's Landlock does not scope abstract sockets (Linux 6.12)")
    name = f"maker-test-{os.getpid()}"
    outside = socket.socket(socket.AF_UNIX)
    outside.bind("\0" + name)
    outside.listen(4)
    probe = ("import socket, sys\n"
             "inner = socket.socket(socket.AF_UNIX)\n"
             "inner.bind('\\0' + sys.argv[1] + '-inner'); inner.listen(1)\n"
             "for target in (sys.argv[1], sys.argv[1] + '-inner'):\n"
             "    s = socket.socket(socket.AF_UNIX)\n"
             "    try:\n"
             "        s.connect('\\0' + target)\n"
             "        print('REACHED', target)\n"
             "    except OSError as exc:\n"
             "        print('HELD', target, exc.strerror)\n")
    (kernel.project / "probe.py").write_text(probe)
    done = _run(kernel, "plugin", f"python3 probe.py {name}")
    outside.close()
    assert done.stdout.splitlines()[:2] == [
        f"HELD {name} Operation not permitted", f"REACHED {name}-inner"], done.stdout + done.stderr


INSTALL = """\
import base64, hashlib, os

S = ".venv/lib/python3.11/site-packages"


def put(name, text):  # (as an installer does: the file, and its RECORD line with its hash)
    open(f"{S}/{name}", "w").write(text)
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
    os.makedirs(f"{S}/{name[:-4]}-1.0.dist-info")
    with open(f"{S}/{name[:-4]}-1.0.dist-info/RECORD", "w") as record:
        record.write(f"{name},sha256={digest.decode()},{len(text)}\\n")


put("editable.pth", "import pkg_finder\\n")
put("changed.pth", "import a\\n")
open(f"{S}/changed.pth", "a").write("import os\\n")  # (changed after it was recorded)
open(f"{S}/zz.pth", "w").write("import os\\n")
open(f"{S}/sitecustomize.py", "w").write("import os\\n")
os.makedirs(".v2/lib/python3.11/site-packages")  # (a venv the command makes)
open(".v2/pyvenv.cfg", "w").write("home = /usr\\n")
open(".v2/lib/python3.11/site-packages/zz.pth", "w").write("import os\\n")
print("installed")
"""


def test_a_pth_an_installer_records_stays_and_a_planted_one_goes(kernel: PlanStore) -> None:
    """Python runs a venv's `.pth` files at every start. One an installer wrote is listed
    with its hash in its package's RECORD (pip's, an editable install's) and stays; one a
    command wrote by hand, or changed after it was recorded, or wrote into a venv it made,
    is removed when the command ends; one there before is left as it was."""
    site = kernel.project / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (kernel.project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    (kernel.project / "install.py").write_text(INSTALL)  # (what the guard cannot read)
    done = _run(kernel, "plugin", "python3 install.py")
    assert done.stdout.strip() == "installed", done.stderr
    assert sorted(p.name for p in site.iterdir() if p.suffix == ".pth") == [
        "_virtualenv.pth", "editable.pth"]
    for gone in (site / "zz.pth", site / "sitecustomize.py", site / "changed.pth",
                 kernel.project / ".v2/lib/python3.11/site-packages/zz.pth"):
        assert f"removed {gone}" in done.stderr, gone
        assert not gone.exists()


def test_the_installed_box_runs_its_compiled_python(kernel: PlanStore, tmp_path: Path) -> None:
    """Each boxed call would compile the box's Python anew (a quarter of its cost): the
    copy in maker's data dir holds it compiled for the interpreter that runs it, and runs
    that, its sources gone."""
    import shutil

    from maker.tools.box.box_install import installed_box

    refusal, run = boxed_command(kernel.root, 1, "echo hi")
    assert refusal is None and run is not None
    home = installed_box().parent
    assert (home / "box_setup.pyc").is_file() and (home / "box_after.pyc").is_file()
    copy = tmp_path / "box"
    shutil.copytree(home, copy)
    for source in ("box_setup.py", "box_after.py"):
        (copy / source).unlink()
    done = subprocess.run(["bash", "-c", run.replace(str(home), str(copy))],
                          cwd=kernel.project, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr


SUB = ("git init -q sub && echo a > sub/f && git -C sub add f && "
       "git -C sub -c user.name=a -c user.email=a@b commit -qm f\n")
ID = "-c user.name=a -c user.email=a@b"


@pytest.mark.parametrize(("plant", "check"), [
    ("mkdir -p .git/rebase-merge && mkfifo .git/rebase-merge/git-rebase-todo\n",
     lambda git: not (git / "rebase-merge" / "git-rebase-todo").exists()),
    ("rm -f .git/index && mkfifo .git/index\n", lambda git: True),
    ("mkdir .git/commondir\n", lambda git: not (git / "commondir").exists()),
    ("mkdir -p .git/rebase-merge && truncate -s 8T .git/rebase-merge/git-rebase-todo\n",
     lambda git: not (git / "rebase-merge" / "git-rebase-todo").exists()),
    (SUB + "git add sub && git update-index --split-index\n",  # (entries in a shared index)
     lambda git: "sub" not in _gitlinks(git.parent)),
    (SUB + f"git add sub && git {ID} commit -qm s\n",  # (no index before: made by it)
     lambda git: "sub" not in _gitlinks(git.parent)),
], ids=["fifo-plan", "fifo-index", "commondir-folder", "8T-plan", "split-index",
        "index-made-and-committed"])
def test_what_a_command_leaves_never_holds_or_stops_the_undo(kernel_commits: PlanStore, plant: str,
                                                             check: Any) -> None:
    """Whatever the command leaves in git's folder, the box's first process ends within
    the call (nothing there is waited on: a FIFO is not read; nothing is read whole: a
    sparse 8 TB plan is not), each part of the undo runs (the .mcp.json made beside it is
    removed), and what it found is undone."""
    (kernel_commits.project / "plant.sh").write_text(plant + "echo '{}' > .mcp.json\necho done\n")
    began = time.monotonic()
    done = _run(kernel_commits, "plugin", "sh plant.sh")
    assert time.monotonic() - began < 25, "the undo waited"
    assert done.stdout.strip().endswith("done"), done.stderr
    assert not (kernel_commits.project / ".mcp.json").exists(), done.stderr
    assert check(kernel_commits.project / ".git"), done.stderr


def test_a_plan_rewritten_with_its_stat_put_back_is_still_read(kernel_commits: PlanStore) -> None:
    """A stat can be put back as it was (same size, same inode, mtime restored): the plan
    is compared by its content."""
    plan = kernel_commits.project / ".git" / "rebase-merge" / "git-rebase-todo"
    plan.parent.mkdir()
    plan.write_text("pick 0000000 abcdefghijklmnopq\n")
    (kernel_commits.project / "plant.sh").write_text(
        "T=.git/rebase-merge/git-rebase-todo\ntouch -r $T ref\n"
        "printf 'exec touch /tmp/zzran\\n' | dd of=$T conv=notrunc status=none\n"
        "touch -r ref $T && rm ref && echo done\n")
    done = _run(kernel_commits, "plugin", "sh plant.sh")
    assert done.stdout.strip() == "done", done.stderr
    assert "exec" not in plan.read_text()


def _gitlinks(project: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--stage"], cwd=project, capture_output=True,
                         text=True, check=False).stdout
    return [line.split("\t")[-1] for line in out.splitlines() if line.startswith("160000")]
