"""``maker.store.atomic.atomic_write`` without ``tempfile``: the file's mode, the
scratch file's name and mode, and nothing left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from maker.store import replace as replace_module
from maker.store.atomic import atomic_write


def test_a_new_file_gets_the_mode_a_plain_open_would_give(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "sub" / "new.md", "text")
    finally:
        os.umask(old)
    path = tmp_path / "sub" / "new.md"
    assert path.read_text() == "text"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(path.parent) == ["new.md"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text("old")
    path.chmod(0o604)
    atomic_write(path, "new", durable=False)
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert os.listdir(tmp_path) == ["plan.md"]


def test_the_scratch_file_is_hidden_private_and_never_one_that_exists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "step.md"
    path.write_text("old")
    taken = tmp_path / ".step.md.00000000.tmp"
    taken.write_text("someone else's")
    names = iter([bytes(4), b"\x01\x02\x03\x04"])
    monkeypatch.setattr(replace_module.os, "urandom", lambda n: next(names))
    seen: list[tuple[str, int]] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        seen.append((os.path.basename(src), stat.S_IMODE(os.stat(src).st_mode)))
        real_replace(src, dst)

    monkeypatch.setattr(replace_module.os, "replace", replace)
    path.chmod(0o600)
    atomic_write(path, "new")
    assert seen == [(".step.md.01020304.tmp", 0o600)]
    assert taken.read_text() == "someone else's"  # O_EXCL: never written over
    assert path.read_text() == "new"


def test_a_failed_write_leaves_the_old_file_and_no_scratch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "step.md"
    path.write_text("old")

    def fail(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(replace_module.os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["step.md"]
