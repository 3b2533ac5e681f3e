"""/maker:step on a voting step, with the real Claude Code CLI and the real plugin; only
the model is scripted.

The main agent launches several isolated executors at once (parallel Agent calls);
maker's SubagentStop hook records each final message as a ballot, never accepting one
on its own; maker's verdict after the Agent calls tells the main agent how many more to
launch; once one answer leads by K the gate accepts it, with the vote's record.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from harness.plugin import Run, branching_plan, run_maker, step, write_plan
from harness.queries import tool_uses
from harness.scenarios import EXECUTOR, MAIN, handoff, tool
from maker.executor.state.schedule import next_steps
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply
from maker_scripted.replies import ToolUseBlock

pytestmark = pytest.mark.e2e

_LAUNCH = re.compile(r"launch (\d+) maker:step-executor subagents? at once")
_VERDICT = re.compile(r"maker's verdict: (.*?)(?=maker's verdict: |\Z)", re.S)


def verdicts(request: RecordedRequest) -> list[str]:
    """maker's verdicts on the Agent calls that just returned, in order."""
    return [v.strip() for v in _VERDICT.findall(request.latest_text)]


def launches(n: int) -> Reply:
    """n executors for step 0 at once: n Agent calls in one message."""
    return Reply.of(*[ToolUseBlock("Agent", {
        "subagent_type": "maker:step-executor", "description": "Execute maker step 0",
        "prompt": "Execute maker step 0.", "run_in_background": False}) for _ in range(n)])


def executors(answers: list[str]) -> list[Any]:
    """Each executor reads its brief, then answers the next of ``answers``: the executors
    run at once, so their requests interleave; each is answered by what it asks."""
    queue, lock = deque(answers), threading.Lock()

    def turn(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            assert 'Execute maker step 0.\n\n<maker-brief step="0">' in request.last_user_text
            return tool("Bash", command="maker context 0", description="Read my brief")
        assert "# Step 0: Decide" in request.tool_results[0].text
        with lock:
            return Reply.text(queue.popleft())

    return [turn] * (2 * len(answers))


def chose(n: int, reason: str) -> str:
    return handoff(0, {"next_step": n, "reason": reason}, summary=f"Step {n} is next.")


def test_a_conditional_step_with_votes_3_is_decided_by_parallel_executors(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project, branching_plan(votes=3))
    seen: dict[str, Any] = {}

    def first_batch(request: RecordedRequest) -> Reply:
        started = request.last_user_text
        assert "STARTED: step 0" in started
        match = _LAUNCH.search(started)
        assert match and match.group(1) == "3", started[-800:]
        return launches(3)

    def second_batch(request: RecordedRequest) -> Reply:
        said = verdicts(request)
        seen["first"] = said
        assert len(said) == 3
        # The verdict computed once all three had answered says to launch the 3 the
        # leader still lacks. One computed before: to wait for those still running, or,
        # when the client had not yet started the others (it may start the calls of one
        # message one by one), what the votes in so far ask for, never more than 3.
        told = [_LAUNCH.search(v) for v in said]
        numbers = {m.group(1) for m in told if m}
        assert "3" in numbers and numbers <= {"1", "2", "3"}, said
        assert all("Next: wait: " in v for v, m in zip(said, told, strict=True) if not m)
        assert step(project, 0).status == "in-progress"
        return launches(3)

    def ends(request: RecordedRequest) -> Reply:
        said = verdicts(request)
        seen["second"] = said
        ends = {m.group(1) for v in said
                for m in [re.search(r"End your reply with the line (STEP_[A-Z_]+)\.", v)] if m}
        assert ends == {"STEP_COMPLETE"}, said
        return Reply.text(f"maker says: {said[-1]}\n\nSTEP_COMPLETE")

    fake_api.script(MAIN, first_batch, second_batch, ends)
    fake_api.script(EXECUTOR, *executors([
        # Three isolated executors at once: they disagree, and one answers no handoff.
        chose(2, "docs are missing"), chose(1, "tests are missing"),
        "Probably docs, I would say.",
        # Three more (the lead the leader lacks): all for docs. 4 to 1: docs lead by 3.
        chose(2, "no README"), chose(2, "docs/ is empty"), chose(2, "docs, clearly")]))

    run = run_maker(run_claude, "/maker:step 0")

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("\nSTEP_COMPLETE")
    agents = [t for t in tool_uses(run) if t.name == "Agent"]
    assert len(agents) == 6 and all(t.input["run_in_background"] is False for t in agents)
    # The first batch: no verdict accepted anything; one answer was flagged.
    first = "\n".join(seen["first"])
    assert "flagged and does not vote" in first and "handoff accepted" not in first
    assert "Votes so far: 1 for " in first
    # The vote decided: the winner accepted through the gate, with the vote's record. (A
    # verdict computed before the last executor had started may ask to launch it, naming
    # the vote in its instruction: only the deciding verdict says how the vote ended.)
    decided = [v for v in seen["second"] if ", decided by a vote (the answer " in v]
    assert decided and all("handoff accepted; status: complete" in v for v in decided)
    assert all('led by 3; votes: 4 for ["complete", 2], 1 for ["complete", 1]; 6 executors, '
               "1 flagged" in v for v in decided)
    store = PlanStore(project / "plans")
    kept = store.read_handoff(0)
    vote = kept["vote"]
    assert (vote["k"], vote["samples"], vote["flagged"], vote["margin"]) == (3, 6, 1, 3)
    assert [t["votes"] for t in vote["tally"]] == [4, 1]
    assert len(set(vote["ballots"])) == 6  # six executors, one ballot each
    assert kept["output"] == {"next_step": 2, "reason": "docs are missing"}  # the first for 2
    # The branch chosen is the winner's: step 2 runs next, step 1 does not.
    assert step(project, 0).status == "complete"
    assert [r.number for r in next_steps(store.load(), store)] == [2]
