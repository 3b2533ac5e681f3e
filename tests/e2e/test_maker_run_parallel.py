"""`maker run --parallel 2` end to end: the real CLI command, the real SDK and
the bundled Claude Code CLI, against the scripted Messages API. Each step's executor is
scripted by what its own session sends (its brief names its step), so the scripts hold
whatever order the sessions' requests arrive in."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.maker_run import MAKER, parallel_plan, request_cwd, run_env
from harness.plugin import step, write_plan
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.classify import AGENT_MARKER
from maker_scripted.scenarios import handoff

pytestmark = pytest.mark.e2e

Turn = Callable[[RecordedRequest], Reply]


def by_step(request: RecordedRequest) -> str:
    """``step-N`` for step N's executor (its brief is its first message), else the
    agent the system prompt names."""
    match = AGENT_MARKER.search(request.system_text)
    agent = match.group(1) if match else "main"
    if agent == "step-executor" and request.messages:
        from maker_scripted.recorded import content_text

        first = content_text(request.messages[0].get("content", ""))
        for line in first.splitlines():
            if line.startswith("# Step ") and ":" in line:
                return f"step-{line[7:].split(':', 1)[0].strip()}"
    return agent


def orient(n: int) -> Turn:
    return lambda request: Reply.tool("Bash", {"command": f"maker orient {n} none",
                                               "description": "Record my orientation"})


def write(rel: str, text: str | Callable[[Path], str], wait: Callable[[], None] | None = None
          ) -> Turn:
    def turn(request: RecordedRequest) -> Reply:
        if wait is not None:
            wait()
        where = Path(request_cwd(request))
        body = text(where) if callable(text) else text
        # (Bash, not Write: the client's Write will not replace a file it has not read)
        return Reply.tool("Bash", {"command": f"mkdir -p {shlex.quote(str(Path(rel).parent))}"
                                   f" && printf %s {shlex.quote(body)} > {shlex.quote(rel)}",
                                   "description": f"Write {rel}"})
    return turn


def hand_off(n: int, files: list[str], wait: Callable[[], None] | None = None) -> Turn:
    def turn(request: RecordedRequest) -> Reply:
        if wait is not None:
            wait()
        return Reply.text(handoff(n, {"files": files}, files=files))
    return turn


def until(check: Callable[[], bool], timeout: float = 60.0) -> Callable[[], None]:
    def wait() -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, "waited too long"
            time.sleep(0.1)
    return wait


def run(api: FakeMessagesAPI, project: Path, home: Path, *args: str
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MAKER, "run", "--approve", "auto", *args], cwd=project,
                          env=run_env(api, home, {"TEST_CMD": "true"}), capture_output=True,
                          text=True, timeout=240, check=False)


def committed(project: Path) -> None:
    (project / "README.md").write_text("the project\n")
    (project / "a").mkdir()
    (project / "a" / "x.txt").write_text("a\n")
    for cmd in ("git config user.email a@b", "git config user.name a", "git add -A",
                "git commit -qm base"):
        subprocess.run(cmd, shell=True, cwd=project, check=True)


def first_and_last(api: FakeMessagesAPI, agent: str) -> tuple[int, int]:
    seen = [r.index for r in api.requests if r.agent == agent]
    return seen[0], seen[-1]


def test_two_independent_steps_run_at_once_and_both_land(project: Path,
                                                         claude_home: Path) -> None:
    committed(project)
    (project / "README.md").write_text("the project\nand the person's own line\n")
    (project / "notes.txt").write_text("the person's notes\n")  # uncommitted, untracked
    write_plan(project, parallel_plan((["left.txt"], ["right.txt"]), ("left.txt", "right.txt")))
    with FakeMessagesAPI(classifier=by_step) as api:
        def other_started(n: int) -> Callable[[], bool]:
            return lambda: any(r.agent == f"step-{1 - n}" for r in api.requests)
        for n, name in ((0, "left.txt"), (1, "right.txt")):
            # each writes only once the other session is under way: they run at once
            api.script(f"step-{n}", orient(n),
                       write(name, f"{name}\n", until(other_started(n))),
                       hand_off(n, [name]))
        done = run(api, project, claude_home, "--parallel", "2")
        api.assert_done()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "running in its worktree" in done.stderr
    assert (project / "left.txt").read_text() == "left.txt\n"
    assert (project / "right.txt").read_text() == "right.txt\n"
    assert (project / "README.md").read_text().endswith("the person's own line\n")
    assert (project / "notes.txt").read_text() == "the person's notes\n"
    for n, name in ((0, "left.txt"), (1, "right.txt")):
        record = step(project, n)
        assert record.status == "complete" and record.meta["landed_files"] == [name]
        first, last = first_and_last(api, f"step-{n}")
        other_first, _ = first_and_last(api, f"step-{1 - n}")
        assert other_first < last  # the other began before this one ended
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=project, text=True,
                               capture_output=True, check=True).stdout
    assert len(worktrees.strip().splitlines()) == 1  # none left behind
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-*"))
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=project, text=True, capture_output=True, check=True).stdout
    assert ".maker/worktrees" not in status


def test_two_steps_that_write_the_same_file_run_one_after_the_other(
        project: Path, claude_home: Path) -> None:
    committed(project)
    write_plan(project, parallel_plan((["same.txt"], ["same.txt"]), ("same.txt", "same.txt")))
    with FakeMessagesAPI(classifier=by_step) as api:
        api.script("step-0", orient(0), write("same.txt", "zero\n"), hand_off(0, ["same.txt"]))
        api.script("step-1", orient(1), write("same.txt", "one\n"), hand_off(1, ["same.txt"]))
        done = run(api, project, claude_home, "--parallel", "2")
        api.assert_done()
    assert done.returncode == 0, done.stderr[-3000:]
    _, last0 = first_and_last(api, "step-0")
    first1, _ = first_and_last(api, "step-1")
    assert last0 < first1  # step 1 began only after step 0 ended
    assert not step(project, 1).meta.get("worktree")  # each in the main checkout
    assert (project / "same.txt").read_text() == "one\n"


def test_a_merge_conflict_sends_the_second_step_back_and_it_lands_on_the_new_base(
        project: Path, claude_home: Path) -> None:
    committed(project)
    # Each claims its own file, yet step 1 also edits a/x.txt, which step 0 changes.
    write_plan(project, parallel_plan((["a/x.txt"], ["b.txt"]), ("a/x.txt", "b.txt")))

    def landed(n: int) -> Callable[[], bool]:
        return lambda: bool(PlanStore(project / "plans").load_step(n).meta.get("landed_at"))

    def on_top(_: Path) -> str:  # the second run: on the new base, step 0's line kept
        store = PlanStore(project / "plans")
        tree = worktree_of(store, store.load_step(1))
        assert tree is not None
        return (tree / "a" / "x.txt").read_text() + "step 1's line\n"

    with FakeMessagesAPI(classifier=by_step) as api:
        api.script("step-0", orient(0), write("a/x.txt", "a\nstep 0's line\n"),
                   hand_off(0, ["a/x.txt"]))
        api.script("step-1", orient(1), write("b.txt", "b\n"),
                   write("a/x.txt", "a\nstep 1's line\n"),
                   hand_off(1, ["a/x.txt", "b.txt"], wait=until(landed(0))),
                   # its second run, told why, in a new worktree (oriented already)
                   write("a/x.txt", on_top), write("b.txt", "b\n"),
                   hand_off(1, ["a/x.txt", "b.txt"]))
        done = run(api, project, claude_home, "--parallel", "2")
        api.assert_done()
    assert done.returncode == 0, done.stderr[-3000:]
    assert (project / "a" / "x.txt").read_text() == "a\nstep 0's line\nstep 1's line\n"
    assert (project / "b.txt").read_text() == "b\n"
    record = step(project, 1)
    assert record.status == "complete" and record.meta["land_attempts"] == 1
    assert "a/x.txt" in record.meta["land_failure"] and len(record.meta["unlanded"]) == 1
    retry = [r for r in api.requests if r.agent == "step-1"
             and "could not land" in r.last_user_text]
    assert retry  # the fresh session was told why


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGINT"])
def test_a_wave_stopped_midway_is_finished_by_the_next_run(
        project: Path, claude_home: Path, sig: str) -> None:
    """kill -9 (a crash) or Ctrl-C while both steps' sessions wait on the model: both
    stay in progress in their worktrees, and the next `maker run --parallel 2` finishes
    the plan from there, leaving no worktree behind."""
    import os
    import signal
    import threading

    committed(project)
    (project / "notes.txt").write_text("the person's notes\n")
    write_plan(project, parallel_plan((["left.txt"], ["right.txt"]), ("left.txt", "right.txt")))
    asked = {0: threading.Event(), 1: threading.Event()}

    def hangs(n: int) -> Turn:
        def turn(request: RecordedRequest) -> Reply:
            asked[n].set()
            time.sleep(20)
            return Reply.text("too late")
        return turn

    with FakeMessagesAPI(classifier=by_step) as api:
        for n in (0, 1):
            api.script(f"step-{n}", orient(n), hangs(n))
        proc = subprocess.Popen([*MAKER, "run", "--approve", "auto", "--parallel", "2"],
                                cwd=project, env=run_env(api, claude_home, {"TEST_CMD": "true"}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            assert asked[0].wait(90) and asked[1].wait(90), "the sessions never waited"
            os.killpg(proc.pid, getattr(signal, sig))
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
        if sig == "SIGINT":
            assert proc.returncode == 130 and "Traceback" not in err, err[-2000:]
            assert "steps 0, 1 are left in progress" in out + err
        for n in (0, 1):
            record = step(project, n)
            assert record.status == "in-progress" and record.meta.get("worktree")
        for n, name in ((0, "left.txt"), (1, "right.txt")):  # (oriented already)
            api.script(f"step-{n}", write(name, f"{name}\n"), hand_off(n, [name]))
        done = run(api, project, claude_home, "--parallel", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (project / "left.txt").read_text() == "left.txt\n"
    assert (project / "right.txt").read_text() == "right.txt\n"
    assert (project / "notes.txt").read_text() == "the person's notes\n"
    assert [step(project, n).status for n in (0, 1)] == ["complete", "complete"]
    listed = subprocess.run(["git", "worktree", "list"], cwd=project, text=True,
                            capture_output=True, check=True).stdout
    assert len(listed.strip().splitlines()) == 1
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-*"))
