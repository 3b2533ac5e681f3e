"""Who is working on the step in progress: its owner session, its turns, its executors.

A step is started by one Claude Code session (``active.json``'s ``session_id``). This
module keeps what the hooks need on top of that, per run of the step (its
``started_at``), in ``plans/.maker/runs/step-NN.json``:

- ``turns``: the prompts (``prompt_id``, one per user prompt) that work on the step:
  the ``/maker:step`` prompt that began it, and every turn that launched its executor.
  The Stop hook blocks only those turns, never an unrelated later one.
- ``launches``: each ``maker:step-executor`` launch and whether it has returned. One
  executor runs a step at a time; a second launch is refused while one runs. A
  launch that a crash cut off is void once its session starts again (SessionStart
  ``resume``) or another session takes the step over.

**Background launches.** In an interactive session the client runs every subagent in
the background: the Agent call returns at once with the agent's id
(``launched_in_background``), and the executor runs on until its SubagentStop
(``end_agent``). Such a launch counts as running until then, or until the client
shows it gone: a Stop whose ``background_tasks`` does not list it as running, or a
notification that it ended otherwise (``end_agent``); no SubagentStop fires for an
agent stopped with TaskStop. While one runs, the Stop hook lets the main agent's
turns end (``background_running``).

**When an owner is gone**, another session may take the step over:
``maker.executor.owner``.

These records are bookkeeping for the hooks, never the plan's state: a missing or
broken one reads as empty.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from maker.store.atomic import atomic_write

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
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
    "running_launches",
    "start_launch",
    "turn_runs_step",
]

# -- the run record -----------------------------------------------------------------


def _path(store: StateDir, step: int) -> Path:
    return store.state_dir / "runs" / f"step-{step:02d}.json"


def _load(store: StateDir, step: int, started_at: str) -> dict[str, Any]:
    """This run's record (a fresh one when the file is missing, broken or older)."""
    fresh: dict[str, Any] = {"step": step, "started_at": started_at, "turns": [],
                             "launches": []}
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError

    try:  # bounded, a regular file only: a FIFO or a huge file must not hang a hook
        data = json.loads(read_regular_file(_path(store, step), 1 << 20))
    except (OSError, ValueError, InputError):
        return fresh
    if not isinstance(data, dict) or data.get("started_at") != started_at:
        return fresh
    for key in ("turns", "launches"):
        if not isinstance(data.get(key), list):
            data[key] = []
    data["launches"] = [x for x in data["launches"] if isinstance(x, dict)]
    return data


def _save(store: StateDir, data: dict[str, Any]) -> None:
    atomic_write(_path(store, int(data["step"])), json.dumps(data, indent=1), durable=False)


def _active_run(store: PlanStore, step: int | None = None) -> tuple[int, str] | None:
    """(step, started_at) of the step in progress, read defensively."""
    active = store.read_active()
    if not isinstance(active, dict):
        return None
    number = active.get("step")
    if not isinstance(number, int) or (step is not None and number != step):
        return None
    return number, str(active.get("started_at") or "")


def add_turn(store: PlanStore, step: int, session_id: str, prompt_id: str) -> None:
    """Record that prompt ``prompt_id`` of ``session_id`` works on step ``step``."""
    if not prompt_id:
        return
    with store.lock():
        run = _active_run(store, step)
        if run is None:
            return
        data = _load(store, *run)
        turn = [session_id, prompt_id]
        if turn not in data["turns"]:
            data["turns"] = [*data["turns"][-19:], turn]
            _save(store, data)


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
    turns = _load(store, step, str(active.get("started_at") or ""))["turns"]
    if active.get("prompt_id"):  # recorded by `maker step start --prompt-id`, if given
        turns = [*turns, [owner, active["prompt_id"]]]
    if not turns:
        return True
    return [session_id, prompt_id] in turns


# -- executor launches -----------------------------------------------------------------


def start_launch(store: PlanStore, launch_id: str, session_id: str, prompt_id: str) -> str | None:
    """Record an executor launch for the step in progress; the reason to refuse it instead
    (another executor for the step has not returned), or None."""
    with store.lock():
        run = _active_run(store)
        if run is None:
            return None  # no step in progress: the executor will say so in its handoff
        data = _load(store, *run)
        running = running_launches(store, data, launch_id)
        from maker.executor.ballots import launch_limit

        limit = launch_limit(store, run[0])
        if running and limit == 1:
            return (f"maker: an executor for step {run[0]} is already running (launched "
                    f"{_ago(running[0].get('at'))}), and one executor works on a step at a "
                    "time. Wait for it to return and follow maker's verdict; if its "
                    f"session crashed, a new session takes over with /maker:step {run[0]}.")
        if len(running) >= limit:
            return (f"maker: {len(running)} executors for step {run[0]} are already "
                    f"running, as many as its vote can still use ({limit}). Wait for them "
                    "to return and follow maker's verdict.")
        data["launches"] = [*data["launches"][-19:],
                            {"id": launch_id, "session_id": session_id or None,
                             "prompt_id": prompt_id or None, "at": time.time(),
                             "done": False}]
        turn = [session_id, prompt_id]
        if prompt_id and turn not in data["turns"]:
            data["turns"] = [*data["turns"][-19:], turn]
        _save(store, data)
        return None


def running_launches(store: PlanStore, data: dict[str, Any] | None = None,
                     launch_id: str = "") -> list[dict[str, Any]]:
    """The executor launches of the step in progress that have not returned (a launch
    of a session the step was taken over from is void), ``launch_id`` left out."""
    if data is None:
        run = _active_run(store)
        if run is None:
            return []
        data = _load(store, *run)
    owner = (store.read_active() or {}).get("session_id")
    return [x for x in data["launches"]
            if not x.get("done") and x.get("id") != launch_id
            and not (owner and x.get("session_id") not in (None, owner))]


def end_launches(store: PlanStore, step: int | None = None, launch_id: str | None = None) -> None:
    """Mark the step's executor launch ``launch_id`` (None: every one) as returned."""
    with store.lock():
        run = _active_run(store, step)
        if run is None:
            return
        data = _load(store, *run)
        changed = False
        for launch in data["launches"]:
            if not launch.get("done") and launch_id in (None, launch.get("id")):
                launch["done"] = changed = True
        if changed:
            _save(store, data)


def launched_in_background(store: PlanStore, launch_id: str, agent_id: str) -> int | None:
    """Note that launch ``launch_id`` (the Agent call's ``tool_use_id``) runs in the
    background as agent ``agent_id``; the step it runs, or None when it is not a launch
    of the step in progress."""
    with store.lock():
        run = _active_run(store)
        if run is None or not launch_id or not agent_id:
            return None
        data = _load(store, *run)
        for launch in data["launches"]:
            if launch.get("id") == launch_id:
                launch["agent"], launch["background"] = agent_id, True
                _save(store, data)
                return run[0]
        return None


def end_agent(store: PlanStore, agent_id: str) -> int | None:
    """Mark the background launch of agent ``agent_id`` as returned (its SubagentStop
    gave its final answer, or the client shows it gone); the step, or None."""
    if not agent_id:
        return None
    with store.lock():
        run = _active_run(store)
        if run is None:
            return None
        data = _load(store, *run)
        hit = [x for x in data["launches"] if x.get("agent") == agent_id]
        if not hit:
            return None
        if any(not x.get("done") for x in hit):
            for launch in hit:
                launch["done"] = True
            _save(store, data)
        return run[0]


def background_running(store: StateDir, active: dict[str, Any],
                       tasks: Any = None) -> list[dict[str, Any]]:
    """The background launches of the step in progress (``active``, its marker) that
    still run. ``tasks``: a Stop input's ``background_tasks``, when the client sent
    one: a launch it does not list as running is gone (stopped with TaskStop, say), and
    is marked returned here (call it under the plan lock)."""
    step = active.get("step")
    if not isinstance(step, int):
        return []
    data = _load(store, step, str(active.get("started_at") or ""))
    owner = active.get("session_id")
    running = [x for x in data["launches"] if x.get("background") and not x.get("done")
               and not (owner and x.get("session_id") not in (None, owner))]
    if isinstance(tasks, list):
        alive = {t.get("id") for t in tasks if isinstance(t, dict)
                 and t.get("status") == "running"}
        gone = [x for x in running if x.get("agent") not in alive]
        for launch in gone:
            launch["done"] = True
        if gone:
            _save(store, data)
        running = [x for x in running if not x.get("done")]
    return running


def forget_session_launches(store: PlanStore, session_id: str) -> None:
    """Void the launches of a session that (re)starts: its old subagents died with it."""
    if session_id:
        with store.lock():
            run = _active_run(store)
            if run is None:
                return
            data = _load(store, *run)
            stale = [x for x in data["launches"]
                     if not x.get("done") and x.get("session_id") == session_id]
            for launch in stale:
                launch["done"] = True
            if stale:
                _save(store, data)


def running_note(store: PlanStore) -> str | None:
    """A sentence on the executors of the step in progress that have not returned
    ("step 2 (Title) is running: …"), or None when none runs."""
    run = _active_run(store)
    if run is None:
        return None
    running = running_launches(store)
    if not running:
        return None
    where = " in the background" if any(x.get("background") for x in running) else ""
    count = "its executor was" if len(running) == 1 else f"{len(running)} executors were"
    try:
        title = f" ({store.load_step(run[0]).title})"
    except Exception:  # noqa: BLE001 - a broken step file: the number alone
        title = ""
    return (f"step {run[0]}{title} is running: {count} launched{where} "
            f"{_ago(running[-1].get('at'))} and maker reports its verdict when it returns")


def executor_attempts(store: PlanStore, step: int) -> int:
    """How many executors were launched for the current run of step ``step``."""
    run = _active_run(store, step)
    return len(_load(store, *run)["launches"]) if run else 0


def _ago(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return "earlier"
    minutes = int(max(0.0, time.time() - at) // 60)
    return "just now" if minutes < 1 else f"{minutes} min ago"
