"""All-or-nothing state changes: an undo journal kept under the plan lock.

Every change to ``plans/`` happens while the plan lock is held, and the outermost hold
of the lock is one transaction. Before a file is created, replaced or removed, or a
path is moved, the change is recorded in ``plans/.maker/txn/journal.json`` (written
atomically and fsynced), with a hard link that keeps the old file. Then:

- the lock is released normally: the journal is deleted. That unlink is the commit;
- the lock is released by an exception: the recorded changes are undone at once;
- the process dies (SIGKILL, power loss): the journal stays, and whoever takes the lock
  next (every command and hook that reads the plan takes it first when a journal is
  there) undoes the changes before doing anything else.

Undo runs newest first and drops each entry from the journal once it is undone, so a
crash during the undo is itself repaired by the next undo. Each undo is idempotent:
restore the kept link over the path if the link is still there; delete a path that did
not exist before; move a moved path back if it has not been moved back yet.

A crash therefore leaves the whole old state (undone) or the whole new one (committed),
never a mixture. Scratch files (``.*.tmp`` from an interrupted atomic write, a staged
plan) are never seen as state: readers skip hidden files, and recovery removes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from maker.store.replace import replace_file

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Journal", "TXN_DIR", "active_journal", "journaled_move", "journaled_remove",
           "pending", "recover"]

# Relative to the plans directory.
TXN_DIR = Path(".maker") / "txn"
_JOURNAL = "journal.json"

# Open journals by absolute plans directory: normally none, or the one being changed.
_open: dict[str, Journal] = {}


class Journal:
    """The undo record of one transaction on one plans directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.dir = self.root / TXN_DIR
        self.entries: list[dict[str, Any]] = []
        self._seen: set[str] = set()

    # -- recording, always before the change ---------------------------------------

    def _rel(self, path: Path) -> str:
        return os.path.relpath(os.path.abspath(path), self.root)

    def _save(self) -> None:
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True)
        replace_file(self.dir / _JOURNAL, json.dumps(self.entries), durable=True)

    def _note_new_dirs(self, parent: Path) -> None:
        """Record the outermost missing directory above a new path, so undo removes it."""
        top: Path | None = None
        p = Path(os.path.abspath(parent))
        while p != self.root and self.root in p.parents and not p.exists():
            top, p = p, p.parent
        if top is not None:
            rel = self._rel(top)
            if "dir:" + rel not in self._seen:
                self._seen.add("dir:" + rel)
                self.entries.append({"kind": "mkdir", "path": rel})

    def before_write(self, path: Path) -> None:
        """``path`` (a file) is about to be created, replaced or removed."""
        rel = self._rel(path)
        if rel in self._seen:
            return
        self._seen.add(rel)
        self._note_new_dirs(path.parent)
        backup: str | None = None
        if os.path.lexists(path):
            self.dir.mkdir(parents=True, exist_ok=True)
            backup = f"b{len(self.entries)}"
            try:
                os.link(path, self.dir / backup, follow_symlinks=False)
            except OSError:  # a file system without hard links: a copy does as well
                import shutil

                shutil.copy2(path, self.dir / backup, follow_symlinks=False)
        self.entries.append({"kind": "file", "path": rel, "backup": backup})
        self._save()

    def before_move(self, src: Path, dst: Path) -> None:
        """``src`` (a file or a directory) is about to be renamed to ``dst`` (new)."""
        if os.path.lexists(dst):
            raise FileExistsError(f"{dst} already exists; a journaled move needs a new path")
        self._note_new_dirs(dst.parent)
        self._seen.add(self._rel(dst))
        self.entries.append({"kind": "move", "src": self._rel(src), "dst": self._rel(dst)})
        self._save()

    # -- the end of the transaction ------------------------------------------------

    def commit(self) -> None:
        if self.entries or self.dir.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.dir / _JOURNAL)  # the commit point
            _discard(self.dir)

    def rollback(self) -> None:
        _undo(self.root, self.entries)
        _discard(self.dir)


def _discard(folder: Path) -> None:
    """Delete the transaction's folder, errors ignored (``shutil.rmtree(ignore_errors=
    True)``). It usually holds only files (the kept links): those are unlinked here, and
    ``shutil`` (whose imports cost every hook more than this) is loaded only for a
    folder inside it, a staged plan. A symlink is left alone, as rmtree leaves it."""
    if os.path.islink(folder):
        return
    try:
        with os.scandir(folder) as entries:
            names = [(entry.path, entry.is_dir(follow_symlinks=False)) for entry in entries]
    except OSError:
        return
    if any(is_dir for _, is_dir in names):
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        return
    for path, _ in names:
        with contextlib.suppress(OSError):
            os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _undo(root: Path, entries: list[dict[str, Any]]) -> None:
    """Undo ``entries`` newest first, dropping each from the journal once undone."""
    txn = root / TXN_DIR
    while entries:
        entry = entries[-1]
        kind = entry.get("kind")
        if kind == "file":
            path = root / str(entry["path"])
            backup = entry.get("backup")
            if backup is None:
                if not os.path.isdir(path) or os.path.islink(path):  # files only
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
            elif os.path.lexists(txn / str(backup)):
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(txn / str(backup), path)
        elif kind == "move":
            src, dst = root / str(entry["src"]), root / str(entry["dst"])
            if os.path.lexists(dst) and not os.path.lexists(src):
                src.parent.mkdir(parents=True, exist_ok=True)
                os.replace(dst, src)
        elif kind == "mkdir":
            _remove(root / str(entry["path"]))
        entries.pop()
        if entries:
            replace_file(txn / _JOURNAL, json.dumps(entries), durable=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(txn / _JOURNAL)


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        import shutil

        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def recover(root: Path) -> bool:
    """Undo an interrupted transaction on ``root``, if one was left; the caller holds
    the lock. Returns whether anything was left behind."""
    root = Path(os.path.abspath(root))
    txn = root / TXN_DIR
    if not os.path.lexists(txn):
        return False
    try:
        entries = json.loads((txn / _JOURNAL).read_text(encoding="utf-8"))
    except FileNotFoundError:
        entries = []  # committed, or interrupted before its first change
    except (OSError, ValueError) as exc:
        from maker.errors import StateError

        raise StateError(
            f"{txn / _JOURNAL} is unreadable ({exc}); an interrupted change to the plan "
            "cannot be undone automatically. Inspect plans/ (nothing else was lost: the "
            f"old files are kept in {txn}), then delete {txn}") from None
    if not isinstance(entries, list):
        entries = []
    bad = [e for e in entries if not _valid_entry(root, e)]
    if bad:
        from maker.errors import StateError

        raise StateError(
            f"{txn / _JOURNAL} records a change maker did not make ({str(bad[0])[:200]}): "
            "every path in it must be inside plans/. Nothing was undone. Inspect plans/, "
            f"then delete {txn}") from None
    _undo(root, entries)
    _remove_temp_files(root)  # before txn/ goes: while it is there, a crash repeats this
    _discard(txn)
    return True


_BACKUP = re.compile(r"b\d{1,9}")


def _valid_entry(root: Path, entry: Any) -> bool:
    """An entry maker could have written: its kind, and every path inside ``root`` and
    outside the transaction's own folder; a backup named as maker names them."""
    if not isinstance(entry, dict) or entry.get("kind") not in ("file", "move", "mkdir"):
        return False
    keys = ("src", "dst") if entry["kind"] == "move" else ("path",)
    txn = str(root / TXN_DIR)
    for key in keys:
        rel = entry.get(key)
        if not isinstance(rel, str) or not rel or os.path.isabs(rel) or "\x00" in rel:
            return False
        full = os.path.normpath(os.path.join(root, rel))
        if not full.startswith(str(root) + os.sep):
            return False
        # Only a staged plan moves out of the transaction's folder.
        if (full == txn or full.startswith(txn + os.sep)) and key != "src":
            return False
        # maker never creates these in a transaction (steps/ arrives by a move).
        if entry["kind"] == "mkdir" and os.path.relpath(full, root) in ("steps", ".maker"):
            return False
    backup = entry.get("backup")
    return entry["kind"] != "file" or backup is None or (
        isinstance(backup, str) and _BACKUP.fullmatch(backup) is not None)


def _remove_temp_files(root: Path) -> None:
    """Scratch files of atomic writes cut short by the crash."""
    for folder in (root, root / "steps", root / "handoffs", root / ".maker"):
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                if entry.name.startswith(".") and entry.name.endswith(".tmp") \
                        and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


# -- the journal in force ---------------------------------------------------------

def open_journal(root: Path) -> Journal:
    journal = Journal(root)
    _open[str(journal.root)] = journal
    return journal


def close_journal(journal: Journal) -> None:
    _open.pop(str(journal.root), None)


def pending(root: str) -> list[dict[str, Any]]:
    """The entries of this process's open transaction on the plans directory ``root``
    (absolute): what it has changed so far."""
    journal = _open.get(root)
    return journal.entries if journal is not None else []


def active_journal(path: Path) -> Journal | None:
    """The open journal whose plans directory holds ``path`` (not its own files)."""
    if not _open:
        return None
    absolute = os.path.abspath(path)
    for root, journal in _open.items():
        if absolute.startswith(root + os.sep) and not absolute.startswith(
                str(journal.dir) + os.sep):
            return journal
    return None


def journaled_move(src: Path, dst: Path) -> None:
    """Rename ``src`` to the new path ``dst`` (parents created), inside the transaction."""
    journal = active_journal(dst)
    if journal is not None:
        journal.before_move(src, dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)


def journaled_remove(path: Path) -> None:
    """Delete the file ``path`` if it exists, inside the transaction."""
    if not os.path.lexists(path):
        return
    journal = active_journal(path)
    if journal is not None:
        journal.before_write(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
