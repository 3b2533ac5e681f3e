"""The end of a transaction removes its folder (``plans/.maker/txn``) without
``shutil`` when it holds only files, and as ``shutil.rmtree`` did otherwise."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from maker.store.atomic import atomic_write, plan_lock
from maker.store.journal import TXN_DIR, _discard


def test_a_committed_change_leaves_no_transaction_folder(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    (plans / "steps").mkdir(parents=True)
    target = plans / "steps" / "00-a.md"
    target.write_text("old")
    with plan_lock(plans):
        atomic_write(target, "new")
        assert sorted(os.listdir(plans / TXN_DIR)) == ["b0", "journal.json"]
    assert target.read_text() == "new"
    assert not (plans / TXN_DIR).exists()


def test_a_rolled_back_change_leaves_no_transaction_folder(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    target = plans / "PLAN.md"
    target.write_text("old")
    try:
        with plan_lock(plans):
            atomic_write(target, "new")
            raise RuntimeError("cut short")
    except RuntimeError:
        pass
    assert target.read_text() == "old"
    assert not (plans / TXN_DIR).exists()


def test_a_folder_inside_is_removed_too(tmp_path: Path) -> None:
    txn = tmp_path / "txn"
    (txn / "staged" / "steps").mkdir(parents=True)
    (txn / "staged" / "steps" / "00-a.md").write_text("x")
    (txn / "b0").write_text("kept")
    _discard(txn)
    assert not txn.exists()


def test_files_only_need_no_shutil(tmp_path: Path) -> None:
    txn = tmp_path / "txn"
    txn.mkdir()
    for name in ("b0", "b1", "journal.json", ".journal.json.1234abcd.tmp"):
        (txn / name).write_text("x")
    shutil = sys.modules.pop("shutil", None)
    sys.modules["shutil"] = None  # type: ignore[assignment]  # an import would fail
    try:
        _discard(txn)
    finally:
        del sys.modules["shutil"]
        if shutil is not None:
            sys.modules["shutil"] = shutil
    assert not txn.exists()


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("x")
    link = tmp_path / "txn"
    link.symlink_to(elsewhere)
    _discard(link)
    assert (elsewhere / "precious").read_text() == "x"
    _discard(tmp_path / "missing")  # nothing there: nothing to do, no error
