"""What a vote on a code step (``maker.engine.code_vote``) keeps apart and leaves behind,
its sessions scripted, the rest real (git's worktrees, the box): two samples of one step
each have a box and a ``/tmp`` of their own; a run stopped (Ctrl-C) while a session is at
work leaves no sample's worktree, scratch or ``/tmp``, and starts no other session; a
killed run's samples are removed when the step's vote starts again, and no other
worktree is."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from harness.code_votes import BASE, clamp_project
from harness.kernel import require_kernel
from harness.step_plans import step_spec, write
from maker.core.models import AgentResult
from maker.core.paths import forget_step_tmp, step_tmp_dir
from maker.engine.code_vote import CodeVote
from maker.engine.tool_limits import session_limits
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import worktree_of
from maker.tools.box.boundary import step_tmp, workspace_key
from maker.tools.box.box_spec import SPEC_DIR
from maker.tools.git.worktrees import WORKTREES, add_worktree

Draw = Callable[[StepRecord], Awaitable[AgentResult | None]]


@pytest.fixture(autouse=True)
def no_tmp_left(project: Path) -> Iterator[None]:
    """The steps' own /tmp folders (under the machine's /tmp) gone after each test."""
    yield
    for n in (0, 1, 10):
        forget_step_tmp(project / "plans", n)


def _store(project: Path, monkeypatch: pytest.MonkeyPatch, n: int = 0) -> PlanStore:
    """Step ``n`` (``votes: 2``) of a git project in progress, oriented; pytest its tests'
    command (a vote runs only where maker runs the tests with pytest)."""
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    clamp_project(project)
    store = write(project, [step_spec(n, -1, primary_tools=["Read", "Write", "Bash"],
                                      writes=["src/calc.py", "tests/"], votes=2)])
    start_step(store, n)
    record_orient(store, n, "none")
    return store


def _vote(store: PlanStore, draw: Draw, n: int = 0) -> CodeVote:
    return CodeVote(store, store.load_step(n), 2, RedFlagger(), draw)


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                          text=True).stdout


def _registered(project: Path) -> set[str]:
    """The worktrees git knows, the main checkout's included, by folder name."""
    return {Path(line.split(" ", 1)[1]).name for line in
            _git(project, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")}


def _folders(store: PlanStore) -> set[str]:
    folder = store.root / WORKTREES
    return {p.name for p in folder.iterdir() if p.name != ".gitignore"} \
        if folder.is_dir() else set()


def _own_tmp(store: PlanStore, folder: Path, n: int = 0) -> Path:
    """The ``/tmp`` of the box of the workspace ``folder`` of step ``n``, made as the box
    makes it on the workspace's first command."""
    tmp, why = step_tmp(store.root, n, workspace_key(folder))
    assert tmp is not None, why
    return tmp


@pytest.mark.kernel
def test_two_samples_of_a_step_each_have_a_box_and_a_tmp_of_their_own(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sample's Bash, as ``maker run``'s session hook boxes it: what one writes in
    its /tmp, the other neither sees nor reaches (by the /tmp path or by the folder
    outside the box that holds the first's), and each box is written from a spec of its
    own."""
    require_kernel()
    store = _store(project, monkeypatch)
    said: dict[int, list[str]] = {0: [], 1: []}  # (each sample's commands' output)
    boxes: dict[int, str] = {}  # (each sample's first command, as it ran: in its box)
    folders: list[Path] = []
    wrote, looked = asyncio.Event(), asyncio.Event()

    async def bash(i: int, sample: StepRecord, folder: Path, command: str) -> None:
        (hook,) = session_limits(store, sample)["hooks"]["PreToolUse"][0].hooks
        out = await hook({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": command}, "tool_use_id": "t",
                          "cwd": str(folder), "session_id": "s"}, "t", {"signal": None})
        decided = dict(out).get("hookSpecificOutput") or {}
        assert "updatedInput" in decided, decided  # (run in its box, not refused)
        run = str(decided["updatedInput"]["command"])
        boxes.setdefault(i, run)
        done = subprocess.run(["bash", "-c", run], cwd=folder, capture_output=True,
                              text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        said[i].append(done.stdout)

    async def draw(sample: StepRecord) -> AgentResult | None:
        folder = worktree_of(store, sample)
        assert folder is not None
        i = len(folders)
        folders.append(folder)
        if i == 0:
            await bash(0, sample, folder, "echo s1 > /tmp/note; echo ok")
            wrote.set()
            await looked.wait()
            await bash(0, sample, folder, "cat /tmp/note")
        elif i == 1:
            await wrote.wait()
            firsts = step_tmp_dir(store.root, 0, workspace_key(folders[0])) / "note"
            # (python's own calls: the guard reads no path in them, the box alone holds)
            probe = (f"import os\nfor p in ('/tmp/note', '{firsts}'):\n"
                     "    print(p, os.path.exists(p))\n"
                     f"try:\n    open('{firsts}', 'w').write('s2')\n    print('wrote')\n"
                     "except OSError as e:\n    print('refused')\n"
                     "open('/tmp/note', 'w').write('s2')\n")
            await bash(1, sample, folder, f"python3 -c \"{probe}\"")
            looked.set()
        return None  # (a session that failed: nothing is run against the others)

    vote = _vote(store, draw)
    try:
        winner, _ = asyncio.run(vote.run())
        assert winner is None
        tmps = [step_tmp_dir(store.root, 0, workspace_key(f)) for f in folders[:2]]
        assert tmps[0] != tmps[1]
        assert said[0] == ["ok\n", "s1\n"]  # (its /tmp kept between its calls, unspoilt)
        assert said[1] == [f"/tmp/note False\n{tmps[0] / 'note'} False\nrefused\n"]
        assert (tmps[0] / "note").read_text() == "s1\n"
        assert (tmps[1] / "note").read_text() == "s2"
        specs = [store.root / ".maker" / SPEC_DIR / f"step-0-{workspace_key(f)}.spec"
                 for f in folders[:2]]
        assert specs[0].name != specs[1].name
        assert [str(spec) in boxes[i].split("\n", 1)[0] for i, spec in enumerate(specs)] \
            == [True, True], boxes
        texts = [spec.read_text() for spec in specs]
        assert str(folders[0]) in texts[0] and str(folders[0]) not in texts[1]
        assert str(folders[1]) in texts[1] and str(folders[1]) not in texts[0]
    finally:
        vote.drop()


@pytest.mark.parametrize("how", ["cancelled", "flag"])
def test_a_run_stopped_while_a_session_works_leaves_nothing_of_the_vote(
        project: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Ctrl-C as ``maker run`` delivers it while the fourth sample's session is at work,
    the first three answered (two counted already): the run's stop flag set and its task
    cancelled, or (``flag``) the flag alone, the cancellation absorbed by the SDK's own
    task group, seen when the session returns (``EngineParts.check_stop``). Every
    sample's worktree is gone, and git's record of it, the vote's scratch, each sample's
    own /tmp; no session is asked for after; the step's own /tmp (it stays in progress)
    and the main checkout are as they were."""
    store = _store(project, monkeypatch)
    step_own = _own_tmp(store, store.project)
    (step_own / "kept").write_text("the step's\n")
    asked: list[Path] = []
    stopping = [False]  # (EngineParts.stopping: set by the signal handler)
    at_work, ends = asyncio.Event(), asyncio.Event()

    async def draw(sample: StepRecord) -> AgentResult | None:
        folder = worktree_of(store, sample)
        assert folder is not None
        asked.append(folder)
        if stopping[0]:
            raise AssertionError(f"a session asked for after the stop: {folder.name}")
        (folder / "src" / "calc.py").write_text("def clamp(x, lo, hi):\n    return lo\n")
        (_own_tmp(store, folder) / "work").write_text(folder.name)  # (as its box does)
        if len(asked) < 4:
            return None  # (answered: a failed session, flagged)
        at_work.set()
        await ends.wait()  # (at work until it is cut, or returns)
        if stopping[0]:  # (EngineParts.check_stop: what it said after the stop is not kept)
            raise asyncio.CancelledError("maker run was asked to stop")
        raise AssertionError("the session ended with no stop")

    vote = _vote(store, draw)

    async def stopped_midway() -> None:
        task = asyncio.create_task(vote.run())
        await asyncio.wait_for(at_work.wait(), 30)
        assert (store.state_dir / "votes" / "step-0").is_dir()  # (one count made it)
        assert len(_folders(store)) == 4
        stopping[0] = True
        if how == "cancelled":
            task.cancel()
        else:
            ends.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        await asyncio.sleep(0.1)  # (time to ask for another session, were it to)

    asyncio.run(stopped_midway())
    assert len(asked) == 4 and [f.name.split("-")[2] for f in asked] == ["s1", "s2", "s3",
                                                                           "s4"]
    assert vote.stopped.is_set()
    assert _folders(store) == set()
    assert not any(f.exists() for f in asked)
    assert _registered(project) == {project.name}
    assert not (project / ".git" / "worktrees").is_dir() or \
        not any((project / ".git" / "worktrees").iterdir())
    assert not (store.state_dir / "votes" / "step-0").exists()
    left = [f.name for f in asked
            if step_tmp_dir(store.root, 0, workspace_key(f)).exists()]
    assert left == [], f"the /tmp of {left} outlived the run"
    assert (step_own / "kept").read_text() == "the step's\n"
    assert (project / "src" / "calc.py").read_text() == BASE


def test_a_killed_runs_samples_go_when_the_vote_starts_again_and_nothing_else(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed mid-vote left step 1's samples (worktrees git still lists, one with
    a sample's edit in it), its scratch and its samples' /tmp: all gone before the next
    vote of step 1 asks for its first session. A worktree under the step's own name (a
    step run beside others), step 10's sample (its number begins with 1's), step 10's
    scratch, and the step's own worktree's /tmp stay, and stay after the vote."""
    store = _store(project, monkeypatch, n=1)
    head = _git(project, "rev-parse", "HEAD").strip()[:12]  # (a base no new vote cuts)
    made: dict[str, Path] = {}
    for name in ("step-1-s1", "step-1-s3", "step-1", "step-10-s1"):
        folder = store.root / WORKTREES / f"{name}-{head}"
        add_worktree(project, folder, "HEAD")  # (what the killed run did: git worktree add)
        made[name] = folder
    (made["step-1-s3"] / "src" / "calc.py").write_text("def clamp(x, lo, hi):\n    pass\n")
    (made["step-1-s3"] / "tests" / "test_calc.py").write_text("")
    stale_tmp = _own_tmp(store, made["step-1-s1"], n=1)
    own_tmp = _own_tmp(store, made["step-1"], n=1)
    scratch = store.state_dir / "votes" / "step-1" / "run-x" / "sample-s1"
    other_scratch = store.state_dir / "votes" / "step-10" / "run-y"
    for place in (scratch, other_scratch):
        place.mkdir(parents=True)
        (place / "calc.py").write_text(BASE)
    kept = {made["step-1"].name, made["step-10-s1"].name}
    seen: list[tuple[set[str], set[str], bool, bool]] = []

    async def draw(sample: StepRecord) -> AgentResult | None:
        if not seen:  # (the first session asked for: what the vote found by then)
            seen.append((_folders(store), _registered(project),
                         (store.state_dir / "votes" / "step-1").exists(), stale_tmp.exists()))
        return None

    vote = _vote(store, draw, n=1)
    winner, why = asyncio.run(vote.run())
    assert winner is None and "undecided" in why
    folders, registered, scratch_there, tmp_there = seen[0]
    assert folders == kept | {f"step-1-s1-{vote.commit[:12]}"}, folders
    assert registered == kept | {project.name, f"step-1-s1-{vote.commit[:12]}"}, registered
    assert vote.commit[:12] != head  # (so no new sample's own removal hid the stale ones)
    assert not scratch_there and not tmp_there, (scratch_there, tmp_there)
    vote.drop()  # (as the engine does when the vote is undecided)
    assert _folders(store) == kept and _registered(project) == kept | {project.name}
    assert (made["step-1"] / "src" / "calc.py").read_text() == BASE
    assert own_tmp.is_dir() and (other_scratch / "calc.py").read_text() == BASE
