"""Steps run at once in an interactive session: the real Claude Code CLI in a
pseudo-terminal with its defaults (auto mode; every subagent in the background,
delivering through SubagentHandback). `/maker:step` starts the ready steps that may run
together, each in a worktree maker made; the main agent launches an executor for each
in one message; each works in its own worktree, lands its change with `maker land N`
and hands back; maker's verdict on each decides that step."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.background import finished, verdicts_in
from harness.claude_fixtures import StartInteractive
from harness.maker_run import parallel_plan
from harness.plugin import step, write_plan
from harness.queries import RecordingAPI
from harness.scenarios import EXECUTOR, MAIN, handback, handoff, tool
from maker.store.plan_store import PlanStore
from maker_scripted import RecordedRequest, Reply
from maker_scripted.recorded import content_text
from maker_scripted.replies import ToolUseBlock

pytestmark = pytest.mark.e2e

_LAUNCH = re.compile(r"launch (\d+) maker:step-executor subagents at once")
_PROMPTS = re.compile(r"\"(Execute maker step \d+\.)\"")
_LAUNCHED = re.compile(r"maker: The step executor for step (\d+) was launched and runs in "
                       r"the background \(agent ([\w-]+)\)")
_END_WITH = re.compile(r"End your reply with the line (STEP_[A-Z_]+)\.")
_TREE = re.compile(r"has a git worktree of its own: (\S+)")


def two_steps(files: tuple[str, str], writes: tuple[list[str], list[str]]) -> dict[str, Any]:
    """Two independent steps, each writing one file (the headless tests' plan)."""
    return parallel_plan(writes, files)


class WaveMain:
    """The main agent: launches as many executors at once as maker says (each its own
    prompt), waits, and once every one it launched has maker's verdict, ends with the
    line the last names."""

    def __init__(self, api: RecordingAPI) -> None:
        self.api = api
        self.launched: dict[str, int] = {}  # agent id -> step
        self.verdicts: dict[str, str] = {}
        self.batches: list[int] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        text = request.latest_text
        for n, agent in _LAUNCHED.findall(text):
            self.launched[agent] = int(n)
        for agent_type, agent, verdict in verdicts_in(request):
            if agent_type == "maker:step-executor":
                self.verdicts[agent] = verdict
        reply = self._turn(text)
        if reply.tool_calls:
            self.batches.append(len(reply.tool_calls))
        if reply.tool_calls or set(self.launched) - set(self.verdicts):
            self.api.script(MAIN, self)
        return reply

    def _turn(self, text: str) -> Reply:
        launch = _LAUNCH.search(text)
        if launch and not self.launched:
            # (the prompts maker's line names: not an example in an agent's description)
            end = text.find("\n\n", launch.start())
            line = text[launch.start():end if end >= 0 else None]
            return Reply.of(*[ToolUseBlock("Agent", {
                "subagent_type": "maker:step-executor", "description": prompt[:-1],
                "prompt": prompt}) for prompt in _PROMPTS.findall(line)])
        if set(self.launched) - set(self.verdicts) or not self.verdicts:
            return Reply.text("The executors run in the background; maker reports.")
        last = list(self.verdicts.values())[-1]
        end = _END_WITH.search(last)
        return Reply.text(f"maker says: {last}" + (f"\n\n{end.group(1)}" if end else ""))


def executors(work: dict[int, list[tuple[str, str]]]) -> list[Any]:
    """Each executor, by the step its prompt names: reads its brief and orients, writes
    its files in its worktree (``work[n]``: (relative path, content)), lands its change
    and hands back. Their requests interleave: each is answered by what it asks."""
    lock = threading.Lock()
    trees: dict[int, str] = {}

    def turn(request: RecordedRequest) -> Reply:
        first = content_text(request.messages[0].get("content", ""))
        n = int(re.search(r"Execute maker step (\d+)\.", first).group(1))  # type: ignore[union-attr]
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        files = work[n]
        if done == 0:
            return reads_brief_and_orients(n)
        if done == 1:
            found = _TREE.search(request.all_text)
            assert found, request.last_user_text[-1500:]
            with lock:
                trees[n] = found.group(1)
        if done <= len(files):
            rel, content = files[done - 1]
            return tool("Write", file_path=f"{trees[n]}/{rel}", content=content)
        if done == len(files) + 1:
            return tool("Bash", command=f"maker land {n}", description="Land my change")
        assert "landed in the main checkout" in request.last_user_text, request.last_user_text
        return handback(handoff(n, {"files": [f for f, _ in files]},
                                files=[f for f, _ in files]))

    return [turn] * sum(len(files) + 3 for files in work.values())


def reads_brief_and_orients(n: int) -> Reply:
    """An executor's first turn: its brief and its orientation, in one message."""
    return Reply.of(ToolUseBlock("Bash", {"command": f"maker context {n}",
                                          "description": "Read my brief"}),
                    ToolUseBlock("Bash", {"command": f"maker orient {n} none",
                                          "description": "Orient"}))


def committed(project: Path) -> None:
    (project / "README.md").write_text("the project\n")
    for cmd in ("git config user.email a@b", "git config user.name a", "git add -A",
                "git commit -qm base"):
        subprocess.run(cmd, shell=True, cwd=project, check=True)


def test_two_independent_steps_run_at_once_in_the_background_and_both_land(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    committed(project)
    (project / "README.md").write_text("the project\nthe person's own line\n")
    write_plan(project, two_steps(("left.txt", "right.txt"), (["left.txt"], ["right.txt"])))
    main = WaveMain(fake_api)
    fake_api.script(MAIN, main)
    fake_api.script(EXECUTOR, *executors({0: [("left.txt", "left\n")],
                                          1: [("right.txt", "right\n")]}))
    terminal = interactive()
    terminal.submit("/maker:step")

    screen = finished(terminal, fake_api, "STEP_COMPLETE", timeout=120)
    assert main.batches == [2]  # both launched in one message
    assert sorted(main.launched.values()) == [0, 1]
    assert all("handoff accepted; status: complete" in v for v in main.verdicts.values())
    assert (project / "left.txt").read_text() == "left\n"
    assert (project / "right.txt").read_text() == "right\n"
    assert (project / "README.md").read_text() == "the project\nthe person's own line\n"
    for n, name in ((0, "left.txt"), (1, "right.txt")):
        record = step(project, n)
        assert record.status == "complete" and record.meta["landed_files"] == [name]
    runs = [r for r in fake_api.requests if r.agent == EXECUTOR]
    starts = {}
    for r in runs:  # each executor's requests: the two overlap in time
        n = int(re.search(r"step (\d+)\.", content_text(  # type: ignore[union-attr]
            r.messages[0].get("content", ""))).group(1))
        starts.setdefault(n, []).append(r.index)
    assert min(starts[1]) < max(starts[0]) and min(starts[0]) < max(starts[1])
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-*"))
    assert "STEP_COMPLETE" in screen
    assert PlanStore(project / "plans").read_active() is None


def test_two_steps_that_write_the_same_file_are_not_run_together(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    from harness.background import main_follows_notification
    from harness.scenarios import executor_reads_brief, executor_writes, main_waits
    from maker_scripted.turns import main_launches_executor

    committed(project)
    write_plan(project, two_steps(("same.txt", "same.txt"), (["same.txt"], ["same.txt"])))
    fake_api.script(MAIN, main_launches_executor(), main_waits(),
                    main_follows_notification())
    fake_api.script(EXECUTOR, executor_reads_brief(), executor_writes("same.txt", "zero\n"),
                    handback(handoff(0, {"files": ["same.txt"]}, files=["same.txt"])))
    terminal = interactive()
    terminal.submit("/maker:step")

    finished(terminal, fake_api, "STEP_COMPLETE")
    launches = [r for r in fake_api.requests if r.agent == EXECUTOR
                and not any(m.get("role") == "assistant" for m in r.messages)]
    assert len(launches) == 1  # one executor: step 0 alone, in the main checkout
    assert step(project, 0).status == "complete" and not step(project, 0).meta.get("worktree")
    assert step(project, 1).status == "pending"
    assert (project / "same.txt").read_text() == "zero\n"


def test_a_merge_conflict_sends_the_second_step_back_and_it_lands_on_the_new_base(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    committed(project)
    (project / "a.txt").write_text("a\n")
    subprocess.run("git add -A && git commit -qm a", shell=True, cwd=project, check=True)
    # Each claims its own file, yet step 1 also edits a.txt, which step 0 changes.
    write_plan(project, two_steps(("a.txt", "b.txt"), (["a.txt"], ["b.txt"])))
    store = PlanStore(project / "plans")
    main = WaveMain(fake_api)
    fake_api.script(MAIN, main)
    fake_api.script(EXECUTOR, *conflicting_executors(store))
    terminal = interactive()
    terminal.submit("/maker:step")

    finished(terminal, fake_api, "STEP_COMPLETE", timeout=120)
    assert (project / "a.txt").read_text() == "a\nstep 0's line\nstep 1's line\n"
    assert (project / "b.txt").read_text() == "b\n"
    record = step(project, 1)
    assert record.status == "complete" and record.meta["land_attempts"] == 1
    assert "a.txt" in record.meta["land_failure"] and len(record.meta["unlanded"]) == 1
    assert step(project, 0).status == "complete"
    assert not list((project / "plans" / ".maker" / "worktrees").glob("step-*"))


def conflicting_executors(store: PlanStore) -> list[Any]:
    """Step 0 writes a.txt and lands. Step 1 writes b.txt and a.txt, waits for step 0
    to land, and its landing is refused (a conflict): in the new worktree maker gives
    it, it writes a.txt on top of step 0's line and b.txt again, and lands."""
    import time

    def tree(n: int) -> str:
        record = store.load_step(n)
        return str(store.root / record.meta["worktree"])

    def turn(request: RecordedRequest) -> Reply:
        first = content_text(request.messages[0].get("content", ""))
        n = int(re.search(r"Execute maker step (\d+)\.", first).group(1))  # type: ignore[union-attr]
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        last = request.last_user_text
        if done == 0:
            return reads_brief_and_orients(n)
        if n == 0:
            return [tool("Write", file_path=f"{tree(0)}/a.txt", content="a\nstep 0's line\n"),
                    tool("Bash", command="maker land 0", description="Land"),
                    handback(handoff(0, {"files": ["a.txt"]}, files=["a.txt"]))][done - 1]
        if done == 1:
            return tool("Write", file_path=f"{tree(1)}/b.txt", content="b\n")
        if done == 2:
            return tool("Write", file_path=f"{tree(1)}/a.txt", content="a\nstep 1's line\n")
        if done == 3:
            deadline = time.monotonic() + 60
            while not store.load_step(0).meta.get("landed_at"):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            return tool("Bash", command="maker land 1", description="Land")
        if done == 4:
            assert "could not land" in last and "a.txt" in last, last
            base = Path(tree(1), "a.txt").read_text()
            return tool("Write", file_path=f"{tree(1)}/a.txt", content=base + "step 1's line\n")
        if done == 5:
            return tool("Write", file_path=f"{tree(1)}/b.txt", content="b\n")
        if done == 6:
            return tool("Bash", command="maker land 1", description="Land")
        assert "landed in the main checkout" in last, last
        return handback(handoff(1, {"files": ["a.txt", "b.txt"]}, files=["a.txt", "b.txt"]))

    return [turn] * (4 + 8)
