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

**When an owner is gone.** A step in progress belongs to its session. Another session
takes it over only with the user's consent (``/maker:step N`` typed there, or ``maker
step start N --take-over`` from a shell), or when the owner is gone: its transcript
(and its subagents' transcripts) have not been written for :data:`OWNER_IDLE_S`.
A working session writes its transcript at every tool result, and no tool runs
longer than Claude Code's 10-minute Bash limit; a missing transcript proves nothing
(another folder), so it never counts as gone.

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
    "OWNER_IDLE_S",
    "add_turn",
    "end_launches",
    "executor_attempts",
    "forget_session_launches",
    "owner_gone",
    "relaunch_instruction",
    "running_launches",
    "start_launch",
    "take_over_instruction",
    "turn_runs_step",
]

OWNER_IDLE_S = 15 * 60
EXECUTOR_AGENT = "maker:step-executor"


def relaunch_instruction(n: int | str) -> str:
    """The one way every prompt and message tells the main agent to run step ``n``'s
    executor (again)."""
    return (f"launch the {EXECUTOR_AGENT} subagent with the Agent tool, "
            f"run_in_background: false, and the prompt \"Execute maker step {n}.\"")


def take_over_instruction(n: int | str) -> str:
    """How a person moves step ``n`` from its (crashed?) owner session to another."""
    return (f"If that session is gone, or should give the step up, the user takes it over "
            f"by typing /maker:step {n} in this session (or `maker step start {n} "
            f"--take-over` in a shell); or puts it back with `maker step reset {n}`.")


# -- the owner ----------------------------------------------------------------------


def owner_gone(transcript_dir: Path | None, session_id: str, now: float | None = None,
               idle_s: float = OWNER_IDLE_S) -> bool:
    """True when session ``session_id``'s transcript in ``transcript_dir`` (Claude Code's
    folder for this project) and its subagents' have not been written for ``idle_s``."""
    if transcript_dir is None or not session_id or "/" in session_id:
        return False
    main = transcript_dir / f"{session_id}.jsonl"
    files = [main, *sorted((transcript_dir / session_id / "subagents").glob("*.jsonl"))]
    latest: float | None = None
    for path in files:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        latest = mtime if latest is None else max(latest, mtime)
    if latest is None:
        return False
    return (time.time() if now is None else now) - latest > idle_s


# -- the run record -----------------------------------------------------------------


def _path(store: StateDir, step: int) -> Path:
    return store.state_dir / "runs" / f"step-{step:02d}.json"


def _load(store: StateDir, step: int, started_at: str) -> dict[str, Any]:
    """This run's record (a fresh one when the file is missing, broken or older)."""
    fresh: dict[str, Any] = {"step": step, "started_at": started_at, "turns": [],
                             "launches": []}
    try:
        data = json.loads(_path(store, step).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return fresh
    if not isinstance(data, dict) or data.get("started_at") != started_at:
        return fresh
    for key in ("turns", "launches"):
        if not isinstance(data.get(key), list):
            data[key] = []
    data["launches"] = [x for x in data["launches"] if isinstance(x, dict)]
    return data


def _save(store: PlanStore, data: dict[str, Any]) -> None:
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


def executor_attempts(store: PlanStore, step: int) -> int:
    """How many executors were launched for the current run of step ``step``."""
    run = _active_run(store, step)
    return len(_load(store, *run)["launches"]) if run else 0


def _ago(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return "earlier"
    minutes = int(max(0.0, time.time() - at) // 60)
    return "just now" if minutes < 1 else f"{minutes} min ago"
