"""Bringing a worktree step's change into the main checkout: one step at a time, checked
file by file, verified on the merged tree, undone when it does not hold.

    the step's files (its worktree against its base)
        │ for each: main still as the base had it? take the step's version
        │           main already as the step has it? nothing to do
        │           else: a CONFLICT ─▶ nothing is written; the step runs again on the
        ▼                              new base (``send_back``)
    written (under ``plans/.maker/landing.json``) ─▶ the project's verification, in the
        │                                            main checkout ─failed─▶ undone, and
        ▼                                            the step runs again on the new base
    landed (``landed_at``, ``landed_files``): the worktree is removed

A file both sides changed is never merged line by line: that is a conflict, and the step
runs again from the checkout as it now is (a fresh run sees the other change), at most
``MAX_LAND_ATTEMPTS`` times. Landings are serialised by their own lock
(``plans/.maker/land.lock``), not the plan lock, which a verification would hold for
minutes. A kill while files are written leaves ``landing.json``: the next landing (or
:func:`recover`) puts back every file the unfinished landing wrote, as it found it, and
removes the folders it made and its scratch files, so the main checkout is as before the
landing or as after it, never half. ``landing.json`` goes only once the step file that
records the landing is committed: a kill before that commit leaves the landing to be
put back, a kill after it a landing to keep.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from maker.core.clock import utc_now
from maker.errors import MakerError, StepError, WorktreeError
from maker.executor.parallel.land_files import (
    FOLDER,
    State,
    blocked,
    drop_scratch,
    folder_as_base,
    main_state,
    new_folders,
    put_back_evidence,
    step_evidence,
    tree_states,
    write,
)
from maker.store.atomic import atomic_write, exclusive_lock
from maker.store.workspace import LANDED_KEY, worktree_of
from maker.tools.git import worktrees
from maker.verify.check_run import TIMEOUT_EXIT_CODE
from maker.verify.detect import detect_commands

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["LANDING", "MAX_LAND_ATTEMPTS", "Landing", "land", "land_step", "recover"]

LANDING = os.path.join(".maker", "landing.json")
_LOCK = os.path.join(".maker", "land.lock")
MAX_LAND_ATTEMPTS = 3  # runs of a step on a new base after a conflict or a failed check


@dataclass
class Landing:
    """How a landing went: ``landed``, ``conflict``, ``failed`` (the merged tree's
    verification), ``slow`` (past the time it may wait: undone, not failed) or
    ``nothing`` (not a worktree step, or already landed)."""

    kind: str
    step: int
    files: list[str] = field(default_factory=list)
    reason: str = ""
    end: str = ""  # the tree of the step's worktree (kept when the step runs again)
    again: str = ""  # the new worktree the step runs again in (after a conflict)
    failed: bool = False  # it ran on a new base too often: the step failed
    tree: Path | None = None  # the worktree a landing leaves behind, to remove

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "step": self.step, "files": self.files,
                "reason": self.reason, "end": self.end, "again": self.again,
                "failed": self.failed}



class _Busy(Exception):
    """Another landing holds the lock past the time this one may wait."""


@contextlib.contextmanager
def _land_lock(store: PlanStore, wait_s: float | None = None) -> Iterator[None]:
    """The landings' lock: waited for as long as it takes, or at most ``wait_s``
    (then ``_Busy``)."""

    path = store.root / _LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if wait_s is None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        elif not exclusive_lock(handle, wait_s, poll=0.05):
            raise _Busy
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def land(store: PlanStore, n: int, wait_s: float | None = None) -> Landing:
    """Bring step ``n``'s change into the main checkout (see the module's docstring).
    ``wait_s``: at most this long for the project's checks on the merged tree, all told
    (a hook's time limit); past it the landing is undone and is ``slow``, not failed.
    Raises StepError for a step not in progress, ``WorktreeError`` when git
    cannot read the step's worktree or a file name is not UTF-8."""

    # The step's worktree is read before the lock (it is the step's alone, and its
    # session has answered): other landings wait only for the main checkout's part.
    read = _read_worktree(store, n)
    began = time.monotonic()
    try:
        with _land_lock(store, wait_s):
            landing = _land_locked(store, n, read, None if wait_s is None
                                   else max(1.0, wait_s - (time.monotonic() - began)))
    except _Busy:
        return Landing("slow", n, [], f"another step's landing was under way for longer "
                       f"than maker may wait here ({wait_s:g} s)")
    if landing.kind == "landed" and landing.tree is not None:
        # (after the landing lock: the step is landed, its worktree is no one's; a kill
        # before this leaves an orphan that ``prune_worktrees`` removes. Under the plan
        # lock, as every change to git's list of worktrees is: none races a `git
        # worktree add`.)
        with store.lock():
            worktrees.remove_worktree(store.project, landing.tree)
    return landing


def _land_locked(store: PlanStore, n: int, read: tuple[Path, str, str, list[str]] | None,
                 wait_s: float | None) -> Landing:
    """:func:`land`, under the landings' lock."""
    from maker.verify.runner import run_verification

    recover(store)
    record = store.load_step(n)
    path = worktree_of(store, record)
    base = record.meta.get("measured_from")
    if path is None or not isinstance(base, str) or record.meta.get(LANDED_KEY):
        return Landing("nothing", n)
    if record.status != "in-progress":
        raise StepError(f"step {n} is {record.status}: only a step in progress lands "
                        "its change", n)
    if read is None or read[:2] != (path, base):  # (it changed meanwhile: read again)
        read = _read_worktree(store, n)
    if read is None or read[:2] != (path, base):
        raise WorktreeError(f"maker cannot read step {n}'s worktree {path}")
    _, _, end, changed = read
    project = store.project
    before = tree_states(project, base, changed)
    after = tree_states(project, end, changed)
    writes: dict[str, State] = {}
    clashes = []
    for rel in changed:
        now = main_state(project, rel)
        if now == before[rel] or (now == FOLDER and before[rel] is None
                                  and folder_as_base(project, rel, before)):
            writes[rel] = after[rel]
        elif now != after[rel]:
            clashes.append(rel)
    clashes += [f"{rel} (its folder {link} is a symlink or a file)" for rel in writes
                if writes[rel] is not None and (link := blocked(project, rel, writes))]
    if clashes:
        shown = ", ".join(clashes[:10]) + (" …" if len(clashes) > 10 else "")
        return Landing("conflict", n, clashes, f"the main checkout changed {shown} "
                       f"since step {n} started, and so did the step", end)
    folders = new_folders(project, writes)
    evidence = step_evidence(store, n)
    atomic_write(store.root / LANDING, json.dumps(
        {"step": n, "base": base, "end": end, "files": sorted(writes),
         "folders": folders, "evidence": evidence}))
    try:
        for rel in sorted(writes, key=lambda r: writes[r] is not None):  # deletions 1st
            write(project, rel, writes[rel])
    except OSError as exc:
        _undo(store, base, end, sorted(writes), folders)
        return Landing("failed", n, sorted(writes), f"maker could not write step {n}'s "
                       f"change into the main checkout ({exc})", end)
    run = run_verification(store, project, step=n, timeout_s=_each(project, wait_s))
    if run.status == "failed":
        _undo(store, base, end, sorted(writes), folders)
        bad = run.failed_command
        if wait_s is not None and bad is not None and bad.exit_code == TIMEOUT_EXIT_CODE:
            put_back_evidence(store, n, evidence)  # (the step's own run stands)
            return Landing("slow", n, sorted(writes), f"the project's checks on the "
                           f"merged tree take longer than maker may wait here "
                           f"({wait_s:g} s)", end)
        what = f"`{bad.command}` exited with {bad.exit_code}" if bad else run.status
        return Landing("failed", n, sorted(writes), f"with step {n}'s change, the "
                       f"main checkout's verification fails: {what}", end)
    with store.lock():
        record = store.load_step(n)
        record.meta[LANDED_KEY] = utc_now()
        record.meta["landed_files"] = list(changed)
        store.save_step(record)
    # Only now, the step file committed (a kill before: the landing is put back).
    (store.root / LANDING).unlink()
    return Landing("landed", n, list(changed), end=end, tree=path)


def _read_worktree(store: PlanStore, n: int) -> tuple[Path, str, str, list[str]] | None:
    """``(worktree, base, end tree, changed files)`` of step ``n``, as its worktree is
    now (a plans folder in it left out: never the step's to land); None when it has
    none to land, or git cannot read it. Raises WorktreeError for a file name that is
    not UTF-8 (the step's record could not name it)."""
    from maker.executor.state.kept_work import plans_inside

    record = store.load_step(n)
    path = worktree_of(store, record)
    base = record.meta.get("measured_from")
    if path is None or not isinstance(base, str):
        return None
    rel = plans_inside(store)
    end = worktrees.snapshot(path, exclude=rel if rel != "." else None)
    changed = worktrees.changes(path, base, end) if end else None
    if end is None or changed is None:
        return None
    for name in changed:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise WorktreeError(
                f"step {n}'s worktree has a file whose name is not UTF-8 ({shown!r}): "
                "maker lands only UTF-8 names. Rename it in the worktree, then `maker "
                f"land {n}` again") from None
    return path, base, end, changed


def _each(project: Path, wait_s: float | None) -> float | None:
    """Each check's share of ``wait_s`` (None: each its usual timeout)."""
    if wait_s is None:
        return None

    return max(1.0, wait_s / max(1, len(detect_commands(project, dict(os.environ)))))


def land_step(store: PlanStore, n: int, wait_s: float | None = None) -> Landing:
    """:func:`land`, and when the change cannot land, the step's next run on a new base
    (``worktree_step.on_new_base``), or its failure past ``MAX_LAND_ATTEMPTS``. A
    ``slow`` landing (past ``wait_s``) is neither: ``maker land N`` lands it, unhurried."""
    from maker.executor.parallel.worktree_step import on_new_base

    landing = land(store, n, wait_s)
    if landing.kind in ("conflict", "failed"):
        record = on_new_base(store, n, landing.reason, landing.end, MAX_LAND_ATTEMPTS)
        landing.failed = record.status == "failed"
        landing.again = str(worktree_of(store, record) or "")
    return landing


def _undo(store: PlanStore, base: str, end: str, files: list[str],
          folders: list[str]) -> None:
    """Put back, as the base had them, the files a landing wrote (those the main
    checkout still holds as the step made them): first the ones it made, then the
    folders it made (those left empty), then the ones it deleted (a file where it made
    a folder among them); remove its scratch files; then forget the landing."""
    project = store.project
    before = tree_states(project, base, files)
    after = tree_states(project, end, files)
    for rel in files:
        drop_scratch(project / rel)
        if after[rel] is not None and main_state(project, rel) == after[rel]:
            write(project, rel, before[rel])
    for rel in folders:
        with contextlib.suppress(OSError):
            os.rmdir(project / rel)
    for rel in files:
        if after[rel] is None and main_state(project, rel) is None:
            write(project, rel, before[rel])
    with contextlib.suppress(FileNotFoundError):
        (store.root / LANDING).unlink()


def recover(store: PlanStore) -> None:
    """Finish what a killed landing left: done (the step records it landed) or undone."""
    path = store.root / LANDING
    _drop_scratch_of(path)  # (a kill while landing.json was written)
    try:
        data = json.loads(path.read_text())
        n, base, end, files = data["step"], data["base"], data["end"], data["files"]
        if not (isinstance(n, int) and not isinstance(n, bool) and isinstance(base, str)
                and isinstance(end, str) and isinstance(files, list)
                and all(isinstance(f, str) for f in files)):
            raise TypeError("not a landing record")
        folders = [str(f) for f in data.get("folders") or []]
        evidence = data.get("evidence", False)  # (False: not recorded, left as it is)
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        if path.is_dir() and not path.is_symlink():
            raise WorktreeError(
                f"{path} is a folder, where maker keeps the record of a landing in "
                "flight: not maker's. Move it away; no step lands until then.") from None
        path.unlink()  # (not a record maker can read: nothing to put back from it)
        return
    try:
        record = store.load_step(n)
        if record.meta.get(LANDED_KEY):
            path.unlink()
            return
        if evidence is None or isinstance(evidence, str):
            put_back_evidence(store, n, evidence)
        _undo(store, base, end, files, folders)
    except MakerError as exc:
        raise WorktreeError(
            f"{path} records a landing of step {n} that a kill left unfinished, and maker "
            f"cannot put it back ({exc}). Check the files it lists in the main checkout, "
            "then delete it; no step lands until then.") from None


def _drop_scratch_of(path: Path) -> None:
    """``atomic_write``'s scratch files of ``path`` (``.NAME.XXXXXXXX.tmp``)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(f".{path.name}.") and entry.name.endswith(".tmp"):
                os.unlink(entry.path)
