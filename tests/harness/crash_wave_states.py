"""The parallel steps' starting states for the crash tests
(``test_crash_waves.py``) and ``benchmarks/crash_harness.py``, the state they compare
(the plans folder, the main checkout's files, maker's worktrees and git's list of them)
and what the next command does after a kill (``after_kill``)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from harness.crash_states import snapshot
from harness.step_plans import complete, make_step, write
from maker.executor.parallel.land import recover
from maker.executor.parallel.worktree_step import (
    ensure_worktree,
    prune_worktrees,
    start_in_worktree,
)
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of
from maker.tools.git.worktrees import WORKTREES

_COMMIT = re.compile(r"\b[0-9a-f]{40}\b")  # a base commit: its time is in its id
_NAMED = re.compile(r"(step-\d+-)[0-9a-f]{12}")  # a worktree folder, named by its base
_SCRATCH = re.compile(r"^\..*\.(tmp|maker-\d+)$")


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                          text=True).stdout


def _mask(text: str) -> str:
    return _NAMED.sub(r"\1<C>", _COMMIT.sub("<C>", text))


def wave_ready(project: Path, tools: list[str] | None = None) -> PlanStore:
    """A committed git project (a/x.txt, b/y.txt); step 0 complete; steps 1 (writes
    a/**) and 2 (writes b/**) ready, side by side (with ``tools``, if given)."""
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "a@b")
    _git(project, "config", "user.name", "a")
    for rel, text in (("a/x.txt", "a\n"), ("b/y.txt", "b\n")):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    steps = [make_step(0, 1)]
    for k, claim in ((1, "a/**"), (2, "b/**")):
        step = make_step(k, 2 if k == 1 else -1, depends_on=[0])
        object.__setattr__(step, "writes", [claim])
        if tools is not None:
            object.__setattr__(step, "primary_tools", tools)
        steps.append(step)
    store = write(project, steps)
    complete(store, 0)
    return store


def wave_working(project: Path) -> PlanStore:
    """As ``wave_ready``, with step 1 started in its worktree, where it changed a/x.txt
    and made a/new/y.txt (a file in a folder the main checkout does not have)."""
    store = wave_ready(project)
    start_in_worktree(store, 1, "s")
    tree = worktree_of(store, store.load_step(1))
    assert tree is not None
    (tree / "a" / "x.txt").write_text("one\n")
    (tree / "a" / "new").mkdir()
    (tree / "a" / "new" / "y.txt").write_text("new\n")
    return store


def wave_conflict(project: Path) -> PlanStore:
    """As ``wave_working``, with the person's own edit of a/x.txt in the main checkout:
    step 1's landing is a conflict, and the step runs again on a new base."""
    store = wave_working(project)
    (project / "a" / "x.txt").write_text("the person's\n")
    return store


def after_kill(store: PlanStore) -> None:
    """What the next command does first: a landing cut short put back (``recover``),
    the worktrees no step needs removed, the steps in progress given theirs whole."""
    recover(store)
    prune_worktrees(store)
    with store.lock():
        for record in store.load().steps:
            if record.status == "in-progress" and worktree_of(store, record) is not None:
                ensure_worktree(store, store.load_step(record.number))


def wave_snapshot(project: Path) -> dict[str, str]:
    """The plans folder (as ``snapshot``, with base commits and worktree names masked,
    and each worktree as its files), the main checkout's files (scratch files included),
    and git's list of worktrees."""
    plans = project / "plans"
    folder = plans / WORKTREES
    here = (str(project.resolve()), str(project))
    out = {f"plans/{k}": _mask(v.replace(here[0], "<P>").replace(here[1], "<P>"))
           for k, v in snapshot(plans).items()
           if not k.startswith(WORKTREES + os.sep) and k != os.path.join(".maker", "land.lock")}
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            name = _mask(entry.name)
            if entry.name == ".gitignore":  # (maker's marker: state only when not whole)
                if "*" not in entry.read_text().splitlines():
                    out["worktree .gitignore"] = entry.read_text()
                continue
            whole = (entry / ".git").is_file()
            files = _files(entry) if entry.is_dir() else {}
            out[f"worktree {name}"] = f"whole={whole} " + repr(sorted(files.items()))
    for rel, text in _files(project).items():
        out[f"main {rel}"] = text
    listed = _git(project, "worktree", "list", "--porcelain")
    out["git worktree list"] = _mask(listed.replace(here[0], "<P>").replace(here[1], "<P>"))
    return out


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` but git's and the plans folder, and every folder."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not (rel_dir == "." and d in (".git", "plans"))]
        for d in dirnames:
            out[os.path.normpath(os.path.join(rel_dir, d)) + "/"] = ""
        for name in filenames:
            if rel_dir == "." and name == ".git":
                continue
            out[os.path.normpath(os.path.join(rel_dir, name))] = Path(
                dirpath, name).read_text(errors="replace")
    return out


def scratch_left(project: Path) -> list[str]:
    """Scratch files of writes cut short, anywhere in the main checkout."""
    return [k for k in _files(project) if _SCRATCH.match(os.path.basename(k))]
