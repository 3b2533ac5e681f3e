"""Seed 002's context fields (docs/architecture.md#the-seeds) from the planner and the
reviewer, end to end, with the real
client against the scripted Messages API.

- ``maker run`` (the real command, claude-agent-sdk and the bundled CLI): the planner's
  plan carries a decision, the reviewer of the large step 0 a discovery (after one
  refusal of its malformed fields, answered in the same session, resumed); both reach
  step 1's brief, as the scripted API received it.
- ``/maker:step`` in the plugin (``-p``): the reviewer's discovery, recorded by maker's
  SubagentStop hook, lands in NOTES.md tagged with the step and reaches the next step's
  brief.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.maker_run import EXECUTOR, oriented_then, orients, request_cwd, run_maker
from harness.plugin import PLUGIN_ROOT, Run, step, write_plan
from harness.scenarios import (
    MAIN,
    executor_flow,
    main_launches_executor,
    main_reports_outcome,
    main_runs_outcome,
    plugin_env,
    tool,
)
from maker.engine.ledger import Ledger
from maker.store.notes import read_notes
from maker.store.plan_store import PlanStore
from maker_scripted import FakeMessagesAPI, RecordedRequest, Reply, ToolUseBlock
from maker_scripted.scenarios import GREETING_TASK, greeting_plan, handoff, to_yaml
from maker_scripted.turns import hook_feedback, working_dir

pytestmark = pytest.mark.e2e

FILES = ["hello.txt", "a.txt", "b.txt", "c.txt", "d.txt"]  # five: the reviewer's due
DECIDED = "Every greeting file holds one line, lower case."
FOUND = "The project has no test runner yet: checks read the files back."


def review(discoveries: object) -> str:
    return (f"GREEN: the five files say hello.\nVERDICT: approve\n\n"
            f"{to_yaml({'summary': 'Sound.', 'discoveries': discoveries})}")


def test_maker_run_carries_the_planners_and_the_reviewers_facts_to_the_next_brief(
        fake_api: FakeMessagesAPI, project: Path, claude_home: Path) -> None:
    def writes_five(request: RecordedRequest) -> Reply:
        root = Path(request_cwd(request))
        return Reply.of(*(ToolUseBlock("Write", {"file_path": str(root / name),
                                                 "content": "hello\n"}) for name in FILES))

    def corrects(request: RecordedRequest) -> Reply:
        said = request.last_user_text
        assert "maker refused your review (answer 1 of 2)" in said, said
        assert "discoveries: must be a list of texts, got a text" in said
        assert any("VERDICT: approve" in str(m.get("content")) for m in request.messages
                   if m.get("role") == "assistant"), "not its own session, resumed"
        return Reply.text(review([FOUND]))

    def checks(request: RecordedRequest) -> Reply:
        brief = request.last_user_text
        assert "# Step 1:" in brief, brief[:300]
        assert f"- {DECIDED}" in brief, brief  # the planner's, plan-wide
        assert f"- {FOUND} (step 0)" in brief, brief  # the reviewer's, tagged
        return Reply.text(handoff(1, {"ok": True}))

    fake_api.script("planner", Reply.text(to_yaml({**greeting_plan(), "decisions": [DECIDED]})))
    fake_api.script(EXECUTOR, orients(0), oriented_then(writes_five),
                    Reply.text(handoff(0, {"files": FILES}, files=FILES)), checks)
    fake_api.script("reviewer", Reply.text(review(FOUND)), corrects)

    run = run_maker(fake_api, project, claude_home, GREETING_TASK, "--approve", "auto")

    assert run.returncode == 0, run.stderr[-2000:]
    fake_api.assert_done()
    assert step(project, 0).meta["approved_by"] == "policy:auto (reviewer approved)"
    store = PlanStore(project / "plans")
    notes = read_notes(store.notes_path)
    assert notes["Decisions"] == [DECIDED]
    assert notes["Discoveries"] == [f"{FOUND} (step 0)"]
    calls = [(c.kind, c.step) for c in Ledger(store).calls()]
    assert calls == [("planner", None), ("executor", 0), ("reviewer", 0), ("reviewer", 0),
                     ("executor", 1)]


# -- /maker:step ----------------------------------------------------------------------


def writes_five(request: RecordedRequest) -> Reply:
    assert any("# Step 0" in r.text for r in request.tool_results), "expected the brief"
    return Reply.of(*(ToolUseBlock("Write", {"file_path": str(working_dir(request) / name),
                                             "content": "hello\n"}) for name in FILES))


def main_launches_reviewer(request: RecordedRequest) -> Reply:
    assert "launch maker:reviewer" in request.tool_results[0].text
    return tool("Agent", subagent_type="maker:reviewer", description="Review step 0",
                prompt="Review maker step 0.", run_in_background=False)


def main_ends_complete(request: RecordedRequest) -> Reply:
    assert "end your reply with the line STEP_COMPLETE" in request.all_text
    return Reply.text("The reviewer approved it.\n\nSTEP_COMPLETE")


def test_the_plugins_reviewer_leaves_a_discovery_for_the_next_step(
        fake_api: FakeMessagesAPI, run_claude: Run, project: Path) -> None:
    write_plan(project)  # policy auto: the reviewer decides the large step

    def corrects(request: RecordedRequest) -> Reply:
        said = hook_feedback(request.last_user_text) or ""
        assert "maker refused your review (answer 1 of 2)" in said, request.last_user_text
        assert "discoveries: must be a list of texts, got a text" in said
        return Reply.text(review([FOUND]))

    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(),
                    main_launches_reviewer, main_ends_complete)
    executor_flow(fake_api, [writes_five], handoff(0, {"files": FILES}, files=FILES))
    fake_api.script("reviewer", Reply.text(review(FOUND)), corrects)

    run = run_claude("/maker:step 0", plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("STEP_COMPLETE"), run.result
    assert step(project, 0).meta["approved_by"] == "policy:auto (reviewer approved)"
    store = PlanStore(project / "plans")
    assert read_notes(store.notes_path)["Discoveries"] == [f"{FOUND} (step 0)"]

    # The next step's executor reads it in its brief.
    fake_api.script(MAIN, main_launches_executor(), main_runs_outcome(),
                    main_reports_outcome())
    executor_flow(fake_api, [], handoff(1, {"ok": True}))
    run = run_claude("/maker:step 1", plugin_dirs=[PLUGIN_ROOT], env=plugin_env())

    fake_api.assert_done()
    assert run.result is not None and run.result.endswith("STEP_COMPLETE"), run.result
    brief = fake_api.requests_for(EXECUTOR)[-1].tool_results[0].text
    assert "# Step 1:" in brief and f"- {FOUND} (step 0)" in brief, brief
