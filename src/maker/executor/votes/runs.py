"""Who is working on the step in progress: its owner session, its turns, its executors.

A step is started by one Claude Code session (``active.json``'s ``session_id``). This
module keeps what the hooks need on top of that, per run of the step (its
``started_at``), in ``plans/.maker/runs/step-NN.json``:

- ``turns``: the prompts (``prompt_id``, one per user prompt) that work on the step:
  the ``/maker:step`` prompt that began it, and every turn that launched its executor.
  The Stop hook blocks only those turns, never an unrelated later one.
- ``launches``: each ``maker:step-executor`` launch and whether it has returned. One
  executor runs a step at a time (a step decided by a vote: as many as the vote can
  still use); a further launch is refused while they run. A launch that a crash cut
  off is void once its session starts again (SessionStart ``resume``) or another
  session takes the step over.
- ``ballots``: on a step decided by a vote, each executor's answer
  (``maker.executor.votes.ballots``).

One file holds the whole run (``maker.executor.votes.run_record``), and an event reads it
once: the executors, their answers and the vote are never reconciled across files.

**Background launches.** In an interactive session the client runs every subagent in
the background: the Agent call returns at once with the agent's id
(``launched_in_background``), and the executor runs on until its SubagentStop
(``end_agent``). Such a launch counts as running until then, or until the client
shows it gone: a Stop whose ``background_tasks`` does not list it as running, or a
notification that it ended otherwise (``end_agent``); no SubagentStop fires for an
agent stopped with TaskStop. While one runs, the Stop hook lets the main agent's
turns end (``background_running``).

**When an owner is gone**, another session may take the step over:
``maker.executor.state.owner``.

These records are bookkeeping for the hooks, never the plan's state: a missing or
broken one reads as empty (a vote in progress then starts again).
"""

from __future__ import annotations

import time

from maker.errors import MakerError
from maker.executor.votes.run_record import load_run, read_record

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

    from maker.store.plan_store import PlanStore
    from maker.store.state import StateDir

__all__ = [
    "add_turn",
    "background_running",
    "end_agent",
    "end_launches",
    "executor_attempts",
    "forget_session_launches",
    "running_note",
    "launched_in_background",
    "start_launch",
    "turn_runs_step",
]

# -- turns ---------------------------------------------------------------------------


def add_turn(store: PlanStore, step: int, session_id: str, prompt_id: str) -> None:
    """Record that prompt ``prompt_id`` of ``session_id`` works on step ``step``."""
    if not prompt_id:
        return
    with store.lock():
        run = load_run(store, step)
        if run is None:
            return
        turn = [session_id, prompt_id]
        if turn not in run.turns:
            run.data["turns"] = [*run.turns[-19:], turn]
            run.save()


def turn_runs_step(store: StateDir, active: dict[str, Any], session_id: str,
                   prompt_id: str) -> bool:
    """Whether this session's current turn is the one running the step in progress.

    The turns recorded for the run decide when there are any (and the client sent a
    ``prompt_id``); otherwise (a step started with ``maker step start`` in the Bash
    tool) the owner session's every turn does, as before.
    """
    owner = active.get("session_id")
    if not owner or owner != session_id:
        return False
    step = active.get("step")
    if not isinstance(step, int) or not prompt_id:
        return True
    turns = read_record(store, step, str(active.get("started_at") or ""))["turns"]
    if active.get("prompt_id"):  # recorded by `maker step start --prompt-id`, if given
        turns = [*turns, [owner, active["prompt_id"]]]
    if not turns:
        return True
    return [session_id, prompt_id] in turns


# -- executor launches -----------------------------------------------------------------


def start_launch(store: PlanStore, launch_id: str, session_id: str, prompt_id: str,
                 step: int | None = None) -> str | None:
    """Record an executor launch for the step in progress (``step``: that one of a
    wave); the reason to refuse it instead (as many executors run the step as it can
    use), or None."""
    from maker.executor.rules.vote_rules import launch_limit

    with store.lock():
        run = load_run(store, step)
        if run is None:
            return None  # no step in progress: the executor will say so in its handoff
        running = run.running(launch_id)
        limit = launch_limit(_votes(store, run.step), run.ballots)
        if running and limit == 1:
            return (f"maker: an executor for step {run.step} is already running (launched "
                    f"{_ago(running[0].get('at'))}), and one executor works on a step at a "
                    "time. Wait for it to return and follow maker's verdict; if its "
                    f"session crashed, a new session takes over with /maker:step {run.step}.")
        if len(running) >= limit:
            return (f"maker: {len(running)} executors for step {run.step} are already "
                    f"running, as many as its vote can still use ({limit}). Wait for them "
                    "to return and follow maker's verdict.")
        run.data["launches"] = [*run.launches[-19:],
                                {"id": launch_id, "session_id": session_id or None,
                                 "prompt_id": prompt_id or None, "at": time.time(),
                                 "done": False}]
        turn = [session_id, prompt_id]
        if prompt_id and turn not in run.turns:
            run.data["turns"] = [*run.turns[-19:], turn]
        run.save()
        return None


def _votes(store: PlanStore, step: int) -> int:
    """The lead step ``step``'s answer needs (1: no vote); 1 for a broken step file."""
    from maker.executor.rules.vote_rules import step_votes

    try:
        return step_votes(store.load_step(step).spec)
    except (MakerError, OSError):  # a broken step file: one executor, as before
        return 1


def end_launches(store: PlanStore, step: int | None = None, launch_id: str | None = None) -> None:
    """Mark the step's executor launch ``launch_id`` (None: every one) as returned."""
    with store.lock():
        run = load_run(store, step)
        if run is None:
            return
        changed = False
        for launch in run.launches:
            if not launch.get("done") and launch_id in (None, launch.get("id")):
                launch["done"] = changed = True
        if changed:
            run.save()


def launched_in_background(store: PlanStore, launch_id: str, agent_id: str) -> int | None:
    """Note that launch ``launch_id`` (the Agent call's ``tool_use_id``) runs in the
    background as agent ``agent_id``; the step it runs, or None when it is not a launch
    of the step in progress."""
    with store.lock():
        for run in _runs(store):
            if not launch_id or not agent_id:
                return None
            for launch in run.launches:
                if launch.get("id") == launch_id:
                    launch["agent"], launch["background"] = agent_id, True
                    run.save()
                    return run.step  # type: ignore[no-any-return]
        return None


def _runs(store: StateDir, active: dict[str, Any] | None = None) -> list[Any]:
    """The run of the step in progress; of each step of a wave."""
    from maker.store.active import wave_of

    active = store.read_active() if active is None else active  # type: ignore[attr-defined]
    steps: list[int | None] = [*wave_of(active)] or [None]
    return [r for r in (load_run(store, n, active) for n in steps) if r is not None]


def end_agent(store: PlanStore, agent_id: str) -> int | None:
    """Mark the background launch of agent ``agent_id`` as returned (its SubagentStop
    gave its final answer, or the client shows it gone); the step, or None."""
    if not agent_id:
        return None
    with store.lock():
        for run in _runs(store):
            hit = [x for x in run.launches if x.get("agent") == agent_id]
            if not hit:
                continue
            if any(not x.get("done") for x in hit):
                for launch in hit:
                    launch["done"] = True
                run.save()
            return run.step  # type: ignore[no-any-return]
        return None


def background_running(store: StateDir, active: dict[str, Any],
                       tasks: Any = None) -> list[dict[str, Any]]:
    """The background launches of the step in progress (``active``, its marker) that
    still run. ``tasks``: a Stop input's ``background_tasks``, when the client sent
    one: a launch it does not list as running is gone (stopped with TaskStop, say), and
    is marked returned here (call it under the plan lock)."""
    out: list[dict[str, Any]] = []
    for run in _runs(store, active):  # (each step of a wave: any of them runs)
        running = [x for x in run.running() if x.get("background")]
        if isinstance(tasks, list):
            alive = {t["id"] for t in tasks if isinstance(t, dict)
                     and t.get("status") == "running" and isinstance(t.get("id"), str)}
            gone = [x for x in running if x.get("agent") not in alive]
            for launch in gone:
                launch["done"] = True
            if gone:
                run.save()
            running = [x for x in running if not x.get("done")]
        out += running
    return out


def forget_session_launches(store: PlanStore, session_id: str) -> None:
    """Void the launches of a session that (re)starts: its old subagents died with it."""
    if session_id:
        with store.lock():
            run = load_run(store)
            if run is None:
                return
            stale = [x for x in run.launches
                     if not x.get("done") and x.get("session_id") == session_id]
            for launch in stale:
                launch["done"] = True
            if stale:
                run.save()


def running_note(store: PlanStore) -> str | None:
    """A sentence on the executors of the step in progress that have not returned
    ("step 2 (Title) is running: …"), or None when none runs."""
    run = load_run(store)
    running = run.running() if run is not None else []
    if run is None or not running:
        return None
    where = " in the background" if any(x.get("background") for x in running) else ""
    count = "its executor was" if len(running) == 1 else f"{len(running)} executors were"
    try:
        title = f" ({store.load_step(run.step).title})"
    except (MakerError, OSError):  # a broken step file: the number alone
        title = ""
    return (f"step {run.step}{title} is running: {count} launched{where} "
            f"{_ago(running[-1].get('at'))} and maker reports its verdict when it returns")


def executor_attempts(store: PlanStore, step: int) -> int:
    """How many executors were launched for the current run of step ``step``."""
    run = load_run(store, step)
    return len(run.launches) if run else 0


def _ago(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return "earlier"
    minutes = int(max(0.0, time.time() - at) // 60)
    return "just now" if minutes < 1 else f"{minutes} min ago"
