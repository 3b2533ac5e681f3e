"""Bringing a worktree step's change into the main checkout: one step at a time, checked
file by file, verified on the merged tree, undone when it does not hold (issue 17).

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
:func:`recover`) puts back every file the unfinished landing wrote, as it found it, so
the main checkout is as before the landing or as after it, never half.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from maker.core.clock import utc_now
from maker.errors import MakerError
from maker.store.atomic import atomic_write
from maker.store.workspace import LANDED_KEY, worktree_of
from maker.tools import worktrees
from maker.tools.git_tree import changed_paths, snapshot_tree

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["LANDING", "MAX_LAND_ATTEMPTS", "Landing", "land", "land_step", "recover"]

LANDING = os.path.join(".maker", "landing.json")
_LOCK = os.path.join(".maker", "land.lock")
MAX_LAND_ATTEMPTS = 3  # runs of a step on a new base after a conflict or a failed check
State = tuple[str, bytes] | None  # (git mode, bytes) of a file; None: no such file


@dataclass
class Landing:
    """How a landing went: ``landed``, ``conflict``, ``failed`` (the merged tree's
    verification) or ``nothing`` (not a worktree step, or already landed)."""

    kind: str
    step: int
    files: list[str] = field(default_factory=list)
    reason: str = ""
    end: str = ""  # the tree of the step's worktree (kept when the step runs again)
    again: str = ""  # the new worktree the step runs again in (after a conflict)
    failed: bool = False  # it ran on a new base too often: the step failed

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "step": self.step, "files": self.files,
                "reason": self.reason, "end": self.end, "again": self.again,
                "failed": self.failed}

    def text(self) -> str:
        """What the step's executor (or a person) reads of it."""
        n = self.step
        if self.kind == "landed":
            return (f"maker: step {n}'s change landed in the main checkout "
                    f"({len(self.files)} file(s): {', '.join(self.files[:20])}), and its "
                    "verification passed there. Nothing more is edited for this step: "
                    "hand off now.")
        if self.kind == "nothing":
            return f"maker: step {n} has no worktree change to land ({self.reason or 'none'})."
        if self.failed:
            return (f"maker: step {n}'s change could not land: {self.reason}. It ran on a "
                    f"new base {MAX_LAND_ATTEMPTS} times, and the step has failed: hand off "
                    "with status: failed and this reason in blockers.")
        return (f"maker: step {n}'s change could not land: {self.reason}. Nothing of it "
                f"was kept in the main checkout. maker cut a new worktree from the main "
                f"checkout as it is now: {self.again}. Do the step again there (the same "
                f"relative paths; the other change is in it), then `maker verify --step "
                f"{n}` and `maker land {n}` again.")


@contextlib.contextmanager
def _land_lock(store: PlanStore) -> Iterator[None]:
    path = store.root / _LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _main_state(root: Path, rel: str) -> State:
    path = root / rel
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(info.st_mode):
        return "120000", os.fsencode(os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return "dir", b""  # a folder where the file was: never equal to a file
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return mode, path.read_bytes()


def _tree_states(project: Path, tree: str, paths: list[str]) -> dict[str, State]:
    entries = worktrees.read_entries(project, tree, paths)
    return {p: ((entries[p][0], worktrees.blob(project, entries[p][1])) if p in entries
                else None) for p in paths}


def _write(root: Path, rel: str, state: State) -> None:
    path = root / rel
    if state is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    mode, data = state
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.symlink(os.fsdecode(data), path)
        return
    if path.is_symlink():
        path.unlink()
    scratch = path.with_name(f".{path.name}.maker-{os.getpid()}")
    with open(scratch, "wb") as handle:  # (whole, then renamed over: never half a file)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(scratch, 0o755 if mode == "100755" else 0o644)
    os.replace(scratch, path)


def land(store: PlanStore, n: int) -> Landing:
    """Bring step ``n``'s change into the main checkout (see the module's docstring).
    Raises ``worktrees.WorktreeError`` when git cannot read the step's worktree."""
    from maker.verify.runner import run_verification

    with _land_lock(store):
        recover(store)
        record = store.load_step(n)
        path = worktree_of(store, record)
        base = record.meta.get("measured_from")
        if path is None or not isinstance(base, str):
            return Landing("nothing", n)
        end = snapshot_tree(path, timeout=worktrees.TIMEOUT_S)
        changed = changed_paths(path, base, end, timeout=worktrees.TIMEOUT_S) if end else None
        if end is None or changed is None:
            raise worktrees.WorktreeError(f"maker cannot read step {n}'s worktree {path}")
        project = store.project
        before = _tree_states(project, base, changed)
        after = _tree_states(project, end, changed)
        writes: dict[str, State] = {}
        clashes = []
        for rel in changed:
            now = _main_state(project, rel)
            if now == before[rel]:
                writes[rel] = after[rel]
            elif now != after[rel]:
                clashes.append(rel)
        if clashes:
            shown = ", ".join(clashes[:10]) + (" …" if len(clashes) > 10 else "")
            return Landing("conflict", n, clashes, f"the main checkout changed {shown} "
                           f"since step {n} started, and so did the step", end)
        atomic_write(store.root / LANDING, json.dumps(
            {"step": n, "base": base, "end": end, "files": sorted(writes)}))
        for rel, state in writes.items():
            _write(project, rel, state)
        run = run_verification(store, project, step=n)
        if run.status == "failed":
            _undo(store, n, base, end, sorted(writes))
            bad = run.failed_command
            what = f"`{bad.command}` exited with {bad.exit_code}" if bad else run.status
            return Landing("failed", n, sorted(writes), f"with step {n}'s change, the "
                           f"main checkout's verification fails: {what}", end)
        with store.lock():
            record = store.load_step(n)
            record.meta[LANDED_KEY] = utc_now()
            record.meta["landed_files"] = list(changed)
            store.save_step(record)
            (store.root / LANDING).unlink()
        worktrees.remove_worktree(project, path)
        return Landing("landed", n, list(changed), end=end)


def land_step(store: PlanStore, n: int) -> Landing:
    """:func:`land`, and when the change cannot land, the step's next run on a new base
    (``worktree_step.on_new_base``), or its failure past ``MAX_LAND_ATTEMPTS``."""
    from maker.executor.worktree_step import on_new_base

    landing = land(store, n)
    if landing.kind in ("conflict", "failed"):
        record = on_new_base(store, n, landing.reason, landing.end, MAX_LAND_ATTEMPTS)
        landing.failed = record.status == "failed"
        landing.again = str(worktree_of(store, record) or "")
    return landing


def _undo(store: PlanStore, n: int, base: str, end: str, files: list[str]) -> None:
    """Put back, as the base had them, the files a landing wrote (those the main
    checkout still holds as the step made them); then forget the landing."""
    project = store.project
    before = _tree_states(project, base, files)
    after = _tree_states(project, end, files)
    for rel in files:
        if _main_state(project, rel) == after[rel]:
            _write(project, rel, before[rel])
    with contextlib.suppress(FileNotFoundError):
        (store.root / LANDING).unlink()


def recover(store: PlanStore) -> None:
    """Finish what a killed landing left: done (the step records it landed) or undone."""
    path = store.root / LANDING
    try:
        data = json.loads(path.read_text())
        n, base, end, files = data["step"], data["base"], data["end"], data["files"]
        if not (isinstance(n, int) and not isinstance(n, bool) and isinstance(base, str)
                and isinstance(end, str) and isinstance(files, list)
                and all(isinstance(f, str) for f in files)):
            raise TypeError("not a landing record")
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        path.unlink()  # (not a record maker can read: nothing to put back from it)
        return
    try:
        record = store.load_step(n)
        if record.meta.get(LANDED_KEY):
            path.unlink()
            return
        _undo(store, n, base, end, files)
    except MakerError as exc:
        raise worktrees.WorktreeError(
            f"{path} records a landing of step {n} that a kill left unfinished, and maker "
            f"cannot put it back ({exc}). Check the files it lists in the main checkout, "
            "then delete it; no step lands until then.") from None
