"""Projects as git repositories, for the tests of what a step changed and of steps run
side by side: a repository begun (``git_init``), files edited (``edit``), a shell line
run (``sh``), a committed project whose steps 1..n may run side by side
(``side_by_side``) and a file written in a step's worktree (``write_in_worktree``)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from harness.step_plans import complete, make_step, write
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of


def git_init(project: Path) -> None:
    """A git repository in ``project`` that ignores the plugin's data folder."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("plugin-data/\n")


def edit(project: Path, *names: str) -> list[str]:
    """Each of ``names`` written with new text (folders made); the names, as given."""
    for name in names:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(f"# {name} {time.monotonic_ns()}\n")
    return list(names)


def sh(project: Path, cmd: str) -> str:
    """``cmd``'s standard output, run by a shell in ``project`` (a failure raises)."""
    return subprocess.run(cmd, shell=True, cwd=project, check=True, capture_output=True,
                          text=True).stdout


def side_by_side(project: Path, w1: list[str] | None = None, w2: list[str] | None = None,
                 n: int = 2) -> PlanStore:
    """A committed git project; step 0, then steps 1..n that each depend on step 0 only."""
    sh(project, "git init -q && git config user.email a@b && git config user.name a")
    (project / "a").mkdir()
    (project / "b").mkdir()
    (project / "a" / "x.txt").write_text("a\n")
    (project / "b" / "y.txt").write_text("b\n")
    sh(project, "git add -A && git commit -qm base")
    writes = [w1 if w1 is not None else ["a/**"], w2 if w2 is not None else ["b/**"],
              ["c/**"], ["d/**"]]
    steps = [make_step(0, 1)]
    for k in range(1, n + 1):
        step = make_step(k, k + 1 if k < n else -1, depends_on=[0])
        object.__setattr__(step, "writes", writes[k - 1])
        steps.append(step)
    store = write(project, steps)
    complete(store, 0)
    return store


def write_in_worktree(store: PlanStore, n: int, rel: str, text: str) -> Path:
    """``rel`` written with ``text`` in step ``n``'s worktree; the worktree."""
    tree = worktree_of(store, store.load_step(n))
    assert tree is not None
    (tree / rel).parent.mkdir(parents=True, exist_ok=True)
    (tree / rel).write_text(text)
    return tree
