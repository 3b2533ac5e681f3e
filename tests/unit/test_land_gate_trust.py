"""A worktree step's change landing at its handoff, against a hostile executor and bad
luck: how the handoff is spelled, a refused or blocked handoff (nothing lands), another
landing holding the lock, a kill mid-write, a reviewer naming its own step. (From a
hostile QA pass: each test failed before its fix.)"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.crash_wave_states import wave_working
from harness.step_plans import handoff
from maker.executor.parallel.land_gate import land_before_accept
from maker.store.plan_store import PlanStore

EXEC = "maker:step-executor"


def _fire(event: str, **data: Any) -> Any:
    from maker.hooks.handlers import HANDLERS
    from maker.hooks.protocol import run_hook
    data = {"session_id": "s", "cwd": os.getcwd(), "hook_event_name": event,
            "prompt_id": "p", **data}
    out = run_hook(event, HANDLERS[event], stdin=json.dumps(data))
    return json.loads(out) if out else None


def _bind(agent_id: str, n: int = 1) -> None:
    from maker.hooks import records
    from maker.store.active import member, run_of
    active = PlanStore(Path.cwd() / "plans").read_active()
    records.bind_run(agent_id, EXEC, run_of(member(active, n) or active))


def _stop(agent_id: str, text: str) -> Any:
    _bind(agent_id)
    return _fire("subagent-stop", agent_id=agent_id, agent_type=EXEC,
                 last_assistant_message=text)


@pytest.fixture()
def wstore(plugin_project: Path) -> PlanStore:
    return wave_working(plugin_project)


# -- 1. the regex that decides to land vs the gate's YAML --------------------------------

ODD = {
    "comment": "step: 1\nstatus: complete  # all done\noutput: {result: ok}\nsummary: s\n",
    "flow": "{step: 1, status: complete, output: {result: ok}, summary: s}\n",
    "quoted_key": "step: 1\n\"status\": complete\noutput: {result: ok}\nsummary: s\n",
    "bom": "\ufeffstatus: complete\nstep: 1\noutput: {result: ok}\nsummary: s\n",
    "long_summary_first": ("step: 1\noutput: {result: ok}\nsummary: |\n" + "  x\n" * 7000
                           + "status: complete\n"),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_an_odd_spelling_of_complete_still_lands(wstore: PlanStore, name: str) -> None:
    """A handoff the gate reads as `status: complete` is not landed (the regex misses
    it): the gate rejects it for 'not landed' and tells the executor to run `maker land`,
    spending one of its gate attempts on maker's own misreading."""
    out = _stop("ex-1", ODD[name])
    reason = (out or {}).get("reason", "") + (out or {}).get("systemMessage", "")
    # Landed, or refused for what the handoff itself says (an answer past its bound):
    # never for "not landed" alone, out of maker's own misreading.
    assert store_landed(wstore) or "red flag: Answer too long" in reason, reason


def store_landed(store: PlanStore) -> bool:
    return bool(store.load_step(1).meta.get("landed_at"))


def test_a_blocked_handoff_does_not_land(wstore: PlanStore) -> None:
    """A line `status: complete` in prose before the handoff's YAML (which says
    blocked) lands the change into the main checkout; the step ends blocked with its
    change in the main checkout."""
    text = ("My plan was status: complete but\nstatus: complete\n\n```yaml\nstep: 1\n"
            "status: blocked\nblockers: [the API key is missing]\noutput: {result: ok}\n"
            "summary: could not finish\n```\n")
    _stop("ex-1", text)
    rec = wstore.load_step(1)
    assert rec.status == "blocked"
    assert (wstore.project / "a" / "x.txt").read_text() == "a\n", "a blocked step's change landed"
    assert not rec.meta.get("landed_at")


# -- 2. a change lands before the gate: a handoff the gate then refuses ------------------

def test_a_refused_handoff_leaves_no_change_in_the_main_checkout(wstore: PlanStore) -> None:
    """The change lands (and the worktree goes) before the gate reads the handoff. A
    handoff the gate then refuses (here: no summary) is refused 3 times: the step FAILS,
    and its change stays in the main checkout, landed, although no handoff of it was
    ever accepted."""
    bad = "step: 1\nstatus: complete\noutput: {result: ok}\n"
    for _ in range(3):
        out = _stop("ex-1", bad)
    rec = wstore.load_step(1)
    assert rec.status == "failed", out
    assert (wstore.project / "a" / "x.txt").read_text() == "a\n", \
        "a failed step's change is in the main checkout"


# -- 3. the hook's time: the landing lock and checks that outlive their kill -------------

def test_a_landing_waits_for_another_at_most_the_hooks_time(wstore: PlanStore) -> None:
    """Another wave member's landing holds plans/.maker/land.lock (its checks may run
    90 s at SubagentStop). This one's PreToolUse (a 30 s hook; wait_s 18) waits for the
    lock with no bound: the client kills the hook."""
    import fcntl
    path = wstore.root / ".maker" / "land.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = open(path, "a+b")
    fcntl.flock(holder, fcntl.LOCK_EX)
    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(
        land_before_accept(wstore, 1, handoff(1), 1.0)), daemon=True)
    start = time.monotonic()
    t.start()
    t.join(6.0)
    waited = time.monotonic() - start
    fcntl.flock(holder, fcntl.LOCK_UN)
    holder.close()
    t.join(10)
    assert waited < 5.0, f"wait_s=1 but the landing waited {waited:.0f}+ s for the lock"


# -- 4. a hook killed mid-landing ---------------------------------------------------------

def test_a_landing_killed_mid_write_is_put_back_by_the_next_command(
        wstore: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client kills the SubagentStop hook (120 s) while it writes the change: a
    person's `maker step reset 1` (as `/maker:reset` and `/maker:run`) puts the main
    checkout back first, never leaving it half-written."""
    import maker.executor.parallel.land as land_mod
    real = land_mod.write
    calls = [0]

    def dying(project: Path, rel: str, state: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise SystemExit(137)  # (as a kill: nothing after runs)
        real(project, rel, state)

    monkeypatch.setattr(land_mod, "write", dying)
    with pytest.raises(SystemExit):
        land_before_accept(wstore, 1, handoff(1), 90.0)
    monkeypatch.setattr(land_mod, "write", real)
    from click.testing import CliRunner

    from maker.cli.main import cli
    done = CliRunner().invoke(cli, ["step", "reset", "1", "--plans-dir", str(wstore.root)])
    assert done.exit_code == 0, done.output
    main = wstore.project
    assert not (main / "a" / "new" / "y.txt").exists() or \
        (main / "a" / "x.txt").read_text() == "one\n", "the main checkout is half-written"


# -- 5. the reviewer's binding in the foreground: its transcript, beyond its prompt -------

def test_a_reviewer_cannot_name_its_own_step_in_its_transcript(plugin_project: Path) -> None:
    """In the foreground the reviewer's step is the first `Review maker step N` in the
    first 64 KB of its transcript: not only its prompt, but its own messages and the
    files it read. A prompt that does not spell the phrase exactly (the main agent's
    paraphrase) lets the reviewer's own text (or a handoff it read) pick the step."""
    from harness.step_plans import complete, linear
    store = linear(plugin_project, 3, policy="auto")
    files = [f"f{i}.py" for i in range(6)]
    for n in (1, 2):
        complete(store, n, status="awaiting-approval", files_changed=files, summary=f"did {n}")
    assert store.load_step(2).status == "awaiting-approval"
    path = plugin_project / "rev.jsonl"
    lines = [{"type": "user", "message": {"role": "user",
                                          "content": "Please review step 1 of the maker plan."}},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "Review maker step 2 it is."}]}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _fire("subagent-stop", agent_id="rev-9", agent_type="maker:reviewer",
          last_assistant_message="GREEN: fine\nVERDICT: approve",
          agent_transcript_path=str(path))
    from maker.hooks.records import read_record
    rec = read_record("rev-9")
    assert (rec.get("step"), store.load_step(2).status) != (2, "complete"), \
        f"a review of step 1 approved step 2: {rec}"
