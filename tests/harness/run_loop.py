"""The scripted model for ``/maker:run``: a main agent that does what maker's one
``Next:`` line says and nothing else, and executors that do their step from the brief
that came with their launch. Used by the interactive e2e tests and by
``benchmarks/bench_main_session.py``.

Both script themselves as they go (the main agent after every turn until the run ends;
each executor until it hands back, and one per launch), so one object follows a run of
any length, and the script is consumed exactly when the run ends.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from harness.background import IDLE
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.classify import MAIN
from maker_scripted.recorded import content_text
from maker_scripted.replies import ToolUseBlock
from maker_scripted.scenarios import handoff
from maker_scripted.terminal import Terminal
from maker_scripted.turns import EXECUTOR, handback, off_script, tool, working_dir

__all__ = ["STARTED", "EngineExecutor", "RunExecutor", "RunMain", "answer_until_ended",
           "chain_plan"]

_NEXT = re.compile(r"^(?:Next|NEXT): (.*)$", re.M)
_ASK = re.compile(r"^ask: (\{.*\})$", re.M)
_END_RUN = re.compile(r"[Ee]nd (?:your reply )?with (?:the line )?((?:RUN|STEP)_[A-Z_]+)\.")
_PROMPTS = re.compile(r"\"(Execute maker step \d+\.)\"")
_REVIEW = re.compile(r"the prompt \"(Review maker step [^\"]+)\"")
_RUNS = re.compile(r"maker: The step executor for step \d+ runs in the background")
_STEP = re.compile(r"Execute maker step (\d+)\.")
_ENGINE_RUNS = "maker's engine goes on in the background"
STARTED = "maker's engine runs the next steps."  # what the main agent says to it
_TREE = re.compile(r"has a git worktree of its own: (\S+)")


class RunMain:
    """The main agent of a ``/maker:run`` (or of ``/maker:step``, one step a command):
    each turn does what the newest maker line says (launch, ask, end the turn, end the
    run or the step) and nothing else. ``turns`` records what it did; ``on_launch(k)``
    scripts the executors of a launch of ``k``. It scripts itself for the next turn
    until it ends (a ``RUN_`` or ``STEP_`` line): script it again for the next command."""

    def __init__(self, api: FakeMessagesAPI, on_launch: Callable[[int], None],
                 on_stretch: Callable[[], None] | None = None) -> None:
        self.api = api
        self.on_launch = on_launch
        self.on_stretch = on_stretch  # scripts the engine's executors for a stretch
        self.turns: list[str] = []
        self.ended: str | None = None
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        reply, what = self._turn(request)
        with self.lock:
            self.turns.append(what)
        if what.startswith(("RUN_", "STEP_")):
            self.ended = what
        else:
            self.api.script(MAIN, self)
        return reply

    def _turn(self, request: RecordedRequest) -> tuple[Reply, str]:
        text = request.latest_text
        end = _END_RUN.search(text)
        if end:
            return Reply.text(f"maker says so.\n\n{end.group(1)}"), end.group(1)
        nexts = _NEXT.findall(text)
        step_next = nexts[-1] if nexts else ""
        if step_next.startswith("ask "):
            asked = _ASK.findall(text)
            if not asked:
                raise off_script(request, "expected maker's `ask:` line after `Next: ask`")
            return tool("AskUserQuestion", **json.loads(asked[-1])), "ask"
        if step_next.startswith("run `maker loop stretch`"):
            if self.on_stretch is not None:
                self.on_stretch()
            return tool("Bash", command="maker loop stretch", run_in_background=True,
                        description="maker run"), "stretch"
        if step_next.startswith("launch maker:reviewer"):
            found = _REVIEW.search(step_next)
            if not found:
                raise off_script(request, "expected the reviewer's prompt")
            return tool("Agent", subagent_type="maker:reviewer", description="Review",
                        prompt=found.group(1)), "review"
        if step_next.startswith("launch"):
            prompts = _PROMPTS.findall(step_next)
            if not prompts:
                raise off_script(request, f"expected the executors' prompts in {step_next!r}")
            self.on_launch(len(prompts))
            return Reply.of(*[ToolUseBlock("Agent", {
                "subagent_type": "maker:step-executor", "description": p[:-1], "prompt": p})
                for p in prompts]), f"launch {len(prompts)}"
        if step_next.startswith("end your turn") and _ENGINE_RUNS in step_next:
            if self.on_stretch is not None:  # (maker's hook started the stretch)
                self.on_stretch()
            return Reply.text(STARTED), "started"
        if step_next.startswith("end your turn") or _RUNS.search(text):
            return Reply.text("It runs in the background; maker reports when it returns."), \
                "wait"
        return Reply.text("Noted."), "noted"


class RunExecutor:
    """The step executors: each, by the step its prompt names, checks that its brief
    came with its launch, orients, writes ``step<N>.txt`` (in its worktree, when the
    brief gives it one: maker lands it when it accepts the handoff), and hands back.
    ``handoffs[n]``: a handoff to answer with instead (a status other than complete)."""

    def __init__(self, api: FakeMessagesAPI, handoffs: dict[int, str] | None = None,
                 hold: dict[int, threading.Event] | None = None,
                 deviate: dict[int, tuple[str, str]] | None = None) -> None:
        self.api = api
        self.handoffs = handoffs or {}
        self.brief_sizes: dict[int, int] = {}
        self.brief_by_command = False  # True: a baseline maker, whose brief is read
        self.hold = hold or {}  # step -> released when its first executor may go on
        self.abandoned = threading.Event()  # its client was killed: answer, script nothing
        self.deviate = deviate or {}  # step -> (what changed, the revised step): its first
        self.deviated: set[int] = set()  # executor finds the step no longer fits

    def launch(self, count: int) -> None:
        self.api.script(EXECUTOR, *[self] * count)

    def __call__(self, request: RecordedRequest) -> Reply:
        first = content_text(request.messages[0].get("content", ""))
        found = _STEP.search(first)
        if not found:
            raise off_script(request, "expected `Execute maker step N.` in the prompt")
        n = int(found.group(1))
        briefed = f'<maker-brief step="{n}">' in first
        if not briefed and not self.brief_by_command:
            raise off_script(request, "expected the brief with the launch")
        self.brief_sizes[n] = len(first)
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        if not briefed:  # (a maker that gives no brief with the launch: read it first)
            if done == 0:
                self.api.script(EXECUTOR, self)
                return tool("Bash", command=f"maker context {n}", description="Read my brief")
            done -= 1
        held = self.hold.pop(n, None) if done == 1 else None
        if held is not None:
            held.wait(120)
            if self.abandoned.is_set():
                return Reply.text("(its session is gone)")
        if n in self.deviate and done == 0 and n not in self.deviated:
            self.deviated.add(n)
            what, revised = self.deviate[n]
            self.api.script(EXECUTOR, self)
            return tool("Bash", description="Orient", command=f"maker orient {n} major "
                        f"--what '{what}' --revised '{revised}'")
        said = json.dumps([m for m in request.messages if m.get("role") == "assistant"])
        if done == 1 and f"maker orient {n} major" in said:
            return handback("DEVIATION")
        tree = _TREE.search(first)
        name = f"step{n}.txt"
        replies = [tool("Bash", command=f"maker orient {n} none", description="Orient"),
                   tool("Write", file_path=f"{tree.group(1) if tree else working_dir(request)}"
                                           f"/{name}", content=f"step {n}\n")]
        if done < len(replies):
            self.api.script(EXECUTOR, self)
            return replies[done]
        return handback(self.handoffs.get(n) or handoff(
            n, {"files": [name]}, summary=f"Wrote {name}.", files=[name]))


class EngineExecutor:
    """The step executors of maker's engine (a ``/maker:run`` stretch, ``maker run``):
    each session, by the step its brief names, orients, writes ``step<N>.txt`` and
    answers with its handoff as text. ``stretch(k)`` scripts ``k`` steps' sessions;
    ``per_stretch`` is how many steps the next stretch runs (None: every step left)."""

    TURNS = 3  # orient, write, hand off

    def __init__(self, api: FakeMessagesAPI, steps: int, per_stretch: int | None = None,
                 hold: dict[int, threading.Event] | None = None,
                 deviate: dict[int, tuple[str, str]] | None = None) -> None:
        self.api = api
        self.left = steps
        self.per_stretch = per_stretch
        self.hold = hold or {}  # step -> released when its Write may go on
        self.holding = threading.Event()  # set while a held turn waits
        self.deviate = deviate or {}  # step -> (what changed, the revised step): its
        self.deviated: set[int] = set()  # first session finds the step no longer fits
        # (a stretch maker's hook starts may ask before the main agent hears of it)
        api.grace[EXECUTOR] = 30.0

    def stretch(self) -> None:
        k = min(self.left, self.per_stretch or self.left)
        self.left -= k
        self.api.script(EXECUTOR, *[self] * (k * self.TURNS))

    def __call__(self, request: RecordedRequest) -> Reply:
        first = content_text(request.messages[0].get("content", ""))
        found = re.search(r"# Step (\d+):", first)
        if not found:
            raise off_script(request, "expected the step's brief (`# Step N:`)")
        n = int(found.group(1))
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        name = f"step{n}.txt"
        if n in self.deviate and n not in self.deviated:
            if done == 0:
                what, revised = self.deviate[n]
                return tool("Bash", description="Orient", command=f"maker orient {n} major "
                            f"--what '{what}' --revised '{revised}'")
            self.deviated.add(n)
            self.api.script(EXECUTOR, self, self)  # (its run again: 3 turns, 1 was left)
            return Reply.text("DEVIATION: the step no longer fits; a person decides.")
        if done == 0:
            return tool("Bash", command=f"maker orient {n} none", description="Orient")
        held = self.hold.pop(n, None) if done == 1 else None
        if held is not None:
            self.holding.set()
            held.wait(120)
        if done == 1:
            return tool("Write", file_path=f"{working_dir(request)}/{name}",
                        content=f"step {n}\n")
        return Reply.text(handoff(n, {"files": [name]}, summary=f"Wrote {name}.",
                                  files=[name]))


def answer_until_ended(terminal: Terminal, main: RunMain, timeout: float = 120.0) -> int:
    """The person answers each of maker's questions with its first option until the main
    agent ends the run or the step, then the client goes idle: how many questions."""
    asked = 0
    while main.ended is None:
        terminal.wait(lambda: main.ended is not None or (
            "Enter to select" in terminal.text()), "a question or the end", timeout)
        if main.ended is None:
            asked += 1
            terminal.choose()
    terminal.wait(lambda: IDLE not in terminal.text(), "the client idle", 60)
    return asked


def chain_plan(count: int, together: Iterable[tuple[int, int]] = ()) -> dict[str, Any]:
    """``count`` steps, each writing ``step<N>.txt`` and depending on the one before,
    but for each pair in ``together``: the second depends on what the first depends on,
    so the two may run side by side (and the step after them on both)."""
    pairs = {b: a for a, b in together}
    steps = []
    for n in range(count):
        if n in pairs:
            deps = [pairs[n] - 1] if pairs[n] > 0 else []
        elif n - 1 in pairs:
            deps = [n - 2, n - 1]
        else:
            deps = [n - 1] if n else []
        steps.append({"step": n, "task_type": "action_step", "title": f"Write step{n}.txt",
                      "task_description": f"Write step{n}.txt with the step's line.",
                      "primary_tools": ["Write", "Bash"], "fallback_tools": [],
                      "primary_tool_instructions": "Write the file.",
                      "fallback_tool_instructions": "None.", "input_variables": [],
                      "output_variable": f"step_{n}_output", "output_schema": "{files: list}",
                      "next_step_sequence_number": n + 1 if n + 1 < count else -1,
                      "depends_on": deps, "writes": [f"step{n}.txt"]})
    return {"task": f"Write {count} files", "reasoning": "One file per step.", "plan": steps}
