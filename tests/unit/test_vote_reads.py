"""The plugin's vote is read once per event: maker's verdict on one
executor of a voting step opens what one event needs, not every file again for each
question it answers (it opened 42 files, the step's ballots 8 times and active.json 11).

Counted with an audit hook in a fresh interpreter (every ``open`` of a file, read or
written, under the project), around the PostToolUse hook of the Agent call that returned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]  # the folder that holds harness/

_SCRIPT = r'''
import json, os, sys
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from harness.step_plans import handoff, make_step, write
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook

project, votes = Path(sys.argv[1]), int(sys.argv[2])
steps = [make_step(0, -2, conditional=True, votes=votes), make_step(1, -1), make_step(2, -1)]
start_step(write(project, steps), 0, session_id="s")

def hook(event, name, **data):
    data = {"session_id": "s", "cwd": str(project), "hook_event_name": name,
            "transcript_path": str(project / "t.jsonl"), **data}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else {}

agent = {"subagent_type": "maker:step-executor", "prompt": "Execute maker step 0.",
         "description": "step 0"}
for i in (1, 2):
    hook("agent-launch", "PreToolUse", tool_name="Agent", tool_input=agent,
         tool_use_id=f"t{i}", prompt_id="p")
answer = handoff(0, output={"next_step": 2, "reason": "seen"})
hook("subagent-stop", "SubagentStop", agent_id="a1", agent_type="maker:step-executor",
     stop_hook_active=False, agent_transcript_path=str(project / "a.jsonl"),
     last_assistant_message=answer)
opened = []
def audit(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.path.abspath(os.fsdecode(args[0])))
sys.addaudithook(audit)
out = hook("agent-return", "PostToolUse", tool_name="Agent", tool_input=agent,
           tool_use_id="t1", tool_response={"agentId": "a1", "status": "completed",
                                            "content": [{"type": "text", "text": answer}]})
mine = [os.path.relpath(p, project) for p in opened
        if p.startswith(str(project) + os.sep) and not p.endswith((".py", ".pyc"))]
print(json.dumps({"opened": mine, "verdict": out}))
'''


def _verdict_opens(project: Path, votes: int) -> tuple[Counter[str], str]:
    env = {"CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_DATA": str(project / "data"),
           "MAKER_VERIFY": "off", "HOME": str(project), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", _SCRIPT, str(project), str(votes), str(TESTS)],
                         cwd=project, env=env, capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(run.stdout.splitlines()[-1])
    context = data["verdict"]["hookSpecificOutput"]["additionalContext"]
    # Scratch files of atomic writes have random names: count them by what they replace.
    names = [("tmp:" + Path(p).name.split(".")[1]) if Path(p).name.endswith(".tmp") else p
             for p in data["opened"]]
    return Counter(names), context


@pytest.mark.parametrize("votes", [3, 1])
def test_a_verdict_reads_the_run_the_step_and_the_marker_at_most_twice(
        tmp_path: Path, votes: int) -> None:
    opened, verdict = _verdict_opens(tmp_path, votes)
    if votes == 3:
        assert "recorded as a vote" in verdict and "Votes so far: 1 for" in verdict
    else:
        assert "handoff accepted" in verdict
    step_file = next(p for p in opened if p.startswith("plans/steps/"))
    for path in ("plans/.maker/active.json", "plans/.maker/runs/step-00.json", step_file):
        assert opened[path] <= 2, (path, opened)
    assert sum(opened.values()) <= 20, opened
