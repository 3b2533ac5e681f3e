"""The parallel steps' state changes are all-or-nothing too: a kill at any moment of a wave
(starting steps in their worktrees, landing one, sending one to a new base) leaves, once
the next command has done what it does first (``after_kill``: a landing put back,
orphaned worktrees removed, a step's worktree made whole), the old state or the new one.

As ``test_crash.py``: each operation runs in a forked child that dies (``os._exit``)
just before its N-th rename, unlink, mkdir, rmdir or link, and here also just before
and just after each git call that changes the worktrees (``worktree add``, ``remove``,
``prune``), and once in the middle of ``worktree add`` (the folder made, its ``.git``
not yet), for N = 1, 2, … until the operation finishes. The state compared is the plans
folder, the main checkout's files (scratch files too), each worktree's files and git's
list of worktrees (``wave_snapshot``).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.crash import DIED, MUTATORS, run_killed
from harness.crash_wave_states import (
    after_kill,
    scratch_left,
    wave_conflict,
    wave_ready,
    wave_snapshot,
    wave_working,
)
from maker.executor.parallel.land import LANDING, land, land_step
from maker.executor.parallel.worktree_step import start_in_worktree
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of
from maker.tools.git import git_run, worktrees

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

_GIT_CHANGES = ("add", "remove", "prune")  # git worktree …
Op = Callable[[PlanStore], object]


def _die_at(n: int, at: str | None = None) -> None:
    """Die (as SIGKILL would: no cleanup) at the n-th moment a change begins (``at``: at
    the n-th one whose label (``os.unlink(PATH)``, ``git worktree remove``, ``git worktree
    remove done``) matches this regular expression)."""
    calls = [0]

    def tick(label: str = "") -> None:
        calls[0] += at is None or re.search(at, label) is not None
        if calls[0] == n:
            os._exit(DIED)

    def arm(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            tick(f"os.{name}({', '.join(map(str, args))})")
            return real(*args, **kwargs)
        return wrapped

    for name in MUTATORS:
        setattr(os, name, arm(name, getattr(os, name)))
    real_run = subprocess.run

    def run(args: list[str], *rest: Any, **kwargs: Any) -> Any:
        sub = [a for a in args if a in _GIT_CHANGES]
        if "worktree" not in args or not sub:
            return real_run(args, *rest, **kwargs)
        tick(f"git worktree {sub[0]}")
        done = real_run(args, *rest, **kwargs)
        if sub[0] == "add":  # the folder made, its .git not yet: half a worktree
            calls[0] += at is None  # (at: no such moment)
            if calls[0] == n and at is None:
                (Path(args[-2]) / ".git").unlink()
                os._exit(DIED)
        tick(f"git worktree {sub[0]} done")
        return done

    git_run.subprocess.run = run  # type: ignore[assignment]  (every git maker runs)


def _run_killed(ops: list[Op], store: PlanStore, n: int, at: str | None = None) -> bool:
    return run_killed(lambda s: [op(s) for op in ops], store, n,
                      lambda k: _die_at(k, at))


# name: (starting state, operations one after another: each is one state change)
OPERATIONS: dict[str, tuple[Callable[[Path], PlanStore], list[Op]]] = {
    "wave start": (wave_ready, [lambda s: start_in_worktree(s, 1, "s"),
                                lambda s: start_in_worktree(s, 2, "s")]),
    "land": (wave_working, [lambda s: land_step(s, 1)]),
    "land conflict, new base": (wave_conflict, [lambda s: land_step(s, 1)]),
}


def _fresh(tmp_path: Path, name: str, setup: Callable[[Path], PlanStore]) -> PlanStore:
    where = tmp_path / name
    where.mkdir()
    os.chdir(where)
    return setup(where)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_kill_at_any_moment_of_a_wave_leaves_the_old_state_or_the_new(
        name: str, tmp_path: Path) -> None:
    setup, ops = OPERATIONS[name]
    store = _fresh(tmp_path, "clean", setup)
    states = [wave_snapshot(store.project)]
    for op in ops:
        op(store)
        states.append(wave_snapshot(store.project))
    assert states[-1] != states[0], "the operation changed nothing: the test proves nothing"

    seen: set[int] = set()
    for n in range(1, 400):
        store = _fresh(tmp_path, f"kill-{n}", setup)
        assert wave_snapshot(store.project) == states[0]
        if not _run_killed(ops, store, n):
            assert wave_snapshot(store.project) == states[-1]
            break
        after_kill(PlanStore(store.root))
        after = wave_snapshot(store.project)
        if after not in states:
            keys = sorted(set(after).union(*states))
            unlike = [[k for k in keys if after.get(k) != s.get(k)][:4] for s in states]
            pytest.fail(f"{name}: killed at moment {n}, the next command sees a mixed "
                        f"state: unlike each accepted state in {unlike}")
        assert not scratch_left(store.project)
        seen.add(states.index(after))
        PlanStore(store.root).load()  # and it reads without an error
    else:
        pytest.fail(f"{name} did not finish within 400 moments")
    assert n > 5, f"{name}: only {n - 1} kill points: the test is not reaching it"
    assert 0 in seen


def test_a_landing_killed_after_its_step_file_is_committed_is_not_undone(
        project: Path) -> None:
    """The step records it landed, then the kill: the next command keeps the landing
    (its files stay as the step made them) and only forgets landing.json."""
    store = wave_working(project)
    assert land(store, 1).kind == "landed"
    new = wave_snapshot(project)
    (store.root / LANDING).write_text('{"step": 1, "base": "x", "end": "y", "files": []}')
    after_kill(store)
    assert wave_snapshot(project) == new


def test_a_landing_killed_between_its_step_file_and_its_commit_is_put_back(
        project: Path) -> None:
    """landing.json was removed inside the transaction that records the landing: a kill
    after that removal, before the commit, left the files landed and the step not."""
    store = wave_working(project)
    old = wave_snapshot(project)
    # Before the second commit (the first: the landing's verification record's).
    commit = r"^os\.unlink\(.*/txn/journal\.json\)$"
    assert _run_killed([lambda s: land(s, 1)], store, 2, at=commit)
    after_kill(PlanStore(store.root))
    after = wave_snapshot(project)
    landed = bool(store.load_step(1).meta.get("landed_at"))
    assert (project / "a" / "x.txt").read_text() == ("one\n" if landed else "a\n")
    assert landed or after == old


def test_a_new_base_killed_before_its_commit_keeps_the_steps_work(project: Path) -> None:
    """The old worktree was removed inside the transaction that gives the step its new
    base: a kill before the commit put the step file back, naming a worktree that was
    gone, and the step's work in it was lost (made again from the old base, empty)."""
    store = wave_conflict(project)
    assert _run_killed([lambda s: land_step(s, 1)], store, 1, at="^git worktree remove done$")
    after_kill(PlanStore(store.root))
    record = store.load_step(1)
    tree = worktree_of(store, record)
    assert tree is not None and (tree / ".git").is_file()
    kept = (tree / "a" / "x.txt").read_text() == "one\n"  # the old state, whole
    assert kept or record.meta.get("unlanded"), "the step's work is lost"
    assert len(wave_snapshot(project)["git worktree list"].split("worktree ")) == 3


def test_a_marker_cut_short_is_written_again(project: Path) -> None:
    """An empty .gitignore (a kill between its creation and its text) made maker's
    worktrees the project's files for git."""
    store = wave_ready(project)
    (store.root / worktrees.WORKTREES).mkdir(parents=True)
    (store.root / worktrees.WORKTREES / ".gitignore").write_text("")
    start_in_worktree(store, 1, "s")
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=project, check=True, capture_output=True, text=True).stdout
    assert ".maker/worktrees/step-" not in listed
