"""A ``/maker:run``'s record: begun, resumed, stopped for a person, ended.

A run is one pass over the plan, from a ``/maker:run`` until every step is done. It
stops (``stopped``) where a person must decide something the run cannot ask (a failed
or blocked step, a step typed by hand with ``/maker:step``), and the next ``/maker:run``
resumes it from where ``plans/`` stands, with the same record. While it runs, maker's
verdicts are the run's short ones (``maker.executor.loop.words``).

The policy a person chose for the rest of the run (the approval question's third
answer) is the run's own: it ends with the run, and a person's ``/maker:policy``
replaces it.
"""

from __future__ import annotations

import time

from maker.core.clock import utc_now
from maker.store.run_file import read_run, write_run

TYPE_CHECKING = False  # typing's, without importing typing: the Stop hook reads a run
if TYPE_CHECKING:
    from typing import Any

    from maker.store.plan_store import PlanStore
    from maker.store.state import StateDir

__all__ = ["ENGINE", "ENGINE_SESSION", "ENGINE_SESSIONS", "SUBAGENTS", "ask_stop", "begin_run",
           "choose_policy", "clear_policy", "end_run", "in_run", "live_run", "note_budget",
           "note_reviewer", "note_step", "note_stretch", "run_mode", "run_notes", "run_only",
           "run_policy", "stop_is_asked", "stop_run"]

# How a run's steps are run. ``engine``: maker's own engine (``maker loop stretch``, over
# claude-agent-sdk) in one background task per stretch between a person's decisions, so
# the main session holds no subagent frame per step; ``subagents``: one background
# subagent of the main session per step (``/maker:run --subagents``, or no SDK).
ENGINE, SUBAGENTS = "engine", "subagents"
ENGINE_SESSIONS = "maker-run"
"""What the id of every session of maker's engine begins with (a headless ``maker run``'s,
``maker-run-<hex>``, and a stretch's, :data:`ENGINE_SESSION`): a step its owner names so
is the engine's to go on with."""
ENGINE_SESSION = f"{ENGINE_SESSIONS}-stretch"
"""The owner a step the engine of a person's session is to run is started under
(``/maker:step`` of a step whose code is voted on, a revision in a run of the engine):
not the person's session, so that their turn may end while the engine works. A
stretch's own sessions take it over (their ids begin with this; a headless ``maker
run``'s with ``maker-run-`` alone)."""
_NOTES_MOST = 20_000  # characters of a person's notes kept for a run's sessions


def live_run(store: StateDir) -> dict[str, Any]:
    """The run that drives the plan now ({} when none does: none began, it ended, or it
    stopped for a person)."""
    run = read_run(store) if store.state_dir.is_dir() else {}
    return run if run and not run.get("ended_at") and not run.get("stopped") else {}


def in_run(store: StateDir, step: object) -> bool:
    """Whether a verdict on step ``step`` is a run's: the run drives the plan, or it
    ended a moment ago with that step in it (two verdicts at once: one ended it)."""
    run = read_run(store) if store.state_dir.is_dir() else {}
    if not run or run.get("stopped"):
        return False
    if not run.get("ended_at"):
        return True
    return time.time() - float(run.get("ended") or 0) < 60 \
        and str(step) in (run.get("steps") or {})


def begin_run(store: PlanStore, session_id: str, parallel: int | None,
              mode: str = SUBAGENTS, budget: float | None = None, only: int | None = None,
              notes: str = "") -> tuple[dict[str, Any], bool]:
    """Begin a run, or resume the one that has not ended: ``(run, resumed)``; ``mode``
    how its steps run (``ENGINE`` or ``SUBAGENTS``); ``budget`` the US dollars a person
    gave it (its engine's SDK calls from now on; a new one replaces the old); ``only``
    the one step it runs (a ``/maker:step`` of a step whose code is voted on: its
    samples are sessions of maker's engine), None for the whole plan, and ``notes`` what
    the person typed for its sessions (:func:`run_notes`). A run of one step resumed
    from a ``/maker:run`` holds neither the policy chosen for the rest of that run nor
    its budget (the step is the person's ``/maker:step``, decided as one is); they are
    kept aside, and the ``/maker:run`` that resumes has them again. Call under the plan
    lock."""
    run = read_run(store)
    given = {"max_usd": budget, "set_at": utc_now()} if budget is not None else None
    if len(notes) > _NOTES_MOST:
        notes = notes[:_NOTES_MOST] + f" [… cut at {_NOTES_MOST:,} characters]"
    if run and not run.get("ended_at"):
        run = {**run, "session_id": session_id, "stopped": None, "resumed_at": utc_now(),
               "mode": mode, "stop_asked": None, "only": only, "notes": notes}
        if only is not None:  # (the /maker:run's own, paused until it resumes)
            paused = run.get("paused") or {"policy": run.get("policy"),
                                           "budget": run.get("budget")}
            run.update(policy=None, budget=None, paused=paused)
        elif isinstance(run.get("paused"), dict):  # (a /maker:run resumed: its own back)
            paused = run.pop("paused")
            run["policy"] = run.get("policy") or paused.get("policy")
            run["budget"] = run.get("budget") or paused.get("budget")
        if parallel is not None:
            run["parallel"] = parallel
        if given is not None:
            run["budget"] = given
        stretch = run.get("stretch")
        if isinstance(stretch, dict):  # (a person typed /maker:run: a failed stretch
            run["stretch"] = {**stretch, "told": True}  # is theirs to retry)
        return write_run(store, run), True
    import secrets

    fresh = {"id": f"run-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-"
                   f"{secrets.token_hex(2)}",
             "session_id": session_id, "started_at": utc_now(), "started": time.time(),
             "parallel": parallel, "steps": {}, "stopped": None, "ended_at": None,
             "policy": None, "mode": mode, "budget": given, "only": only, "notes": notes}
    return write_run(store, fresh), False


def run_only(store: StateDir) -> int | None:
    """The one step the live run runs (``begin_run``'s ``only``); None: the whole plan."""
    only = live_run(store).get("only")
    return only if isinstance(only, int) and not isinstance(only, bool) else None


def run_notes(store: StateDir, n: int) -> str:
    """The person's notes for step ``n``'s sessions, as its brief ends with them ("" when
    the live run is not a ``/maker:step`` of that step, or they typed none)."""
    run = live_run(store)
    notes = run.get("notes")
    if run.get("only") != n or not isinstance(notes, str) or not notes.strip():
        return ""
    return f"\n\nNotes from the user for this step, verbatim:\n<user-notes>\n{notes}\n</user-notes>"


def run_mode(store: StateDir) -> str:
    """How the live run's steps run (``SUBAGENTS`` for a record from before modes)."""
    return ENGINE if live_run(store).get("mode") == ENGINE else SUBAGENTS


def _merge(store: StateDir, key: str, facts: dict[str, Any]) -> dict[str, Any]:
    """Merge ``facts`` into the live run's ``key``; it as it now stands ({} without a
    live run: nothing written)."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if not run:
            return {}
        merged = {**(run.get(key) or {}), **facts}
        write_run(store, {**run, key: merged})
        return merged


def note_budget(store: StateDir, **facts: Any) -> dict[str, Any]:
    """Merge ``facts`` into the live run's budget; the budget as it now stands."""
    return _merge(store, "budget", facts)


def note_stretch(store: StateDir, **facts: Any) -> dict[str, Any]:
    """Merge ``facts`` into the live run's ``stretch`` (the engine's last background
    task: when it began and ended, how, and whether the main agent was told); the
    stretch as it now stands ({} without a live run)."""
    return _merge(store, "stretch", facts)


def note_step(store: StateDir, n: int, **facts: Any) -> None:
    """Merge ``facts`` into step ``n``'s entry of the live run (nothing without one)."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if not run:
            return
        steps = dict(run.get("steps") or {})
        entry = {**(steps.get(str(n)) or {}),
                 **{k: v for k, v in facts.items() if v is not None}}
        steps[str(n)] = entry
        write_run(store, {**run, "steps": steps})


def note_reviewer(store: StateDir, n: int, session_id: str = "",
                  running: bool = True) -> None:
    """The live run launched the reviewer of step ``n`` in ``session_id`` (``running``),
    or it returned."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if not run:
            return
        reviewing = {k: v for k, v in (run.get("reviewing") or {}).items() if k != str(n)}
        if running:
            reviewing[str(n)] = {"at": time.time(), "session": session_id}
        write_run(store, {**run, "reviewing": reviewing})


def ask_stop(store: StateDir) -> None:
    """A person asked the live run to stop gracefully: its engine finishes what runs and
    starts nothing more (``stop_is_asked``); the next ``/maker:run`` clears it."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if run:
            write_run(store, {**run, "stop_asked": utc_now()})


def stop_is_asked(store: StateDir) -> bool:
    """Whether a person asked the live run to stop (or no run is live any more)."""
    run = live_run(store)
    return not run or bool(run.get("stop_asked"))


def stop_run(store: StateDir, why: str) -> None:
    """The live run stops for a person; the next ``/maker:run`` resumes it."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if run:
            write_run(store, {**run, "stopped": {"why": why[:500], "at": utc_now()}})


def end_run(store: StateDir) -> dict[str, Any]:
    """The run is over (every step done); its record, ended."""
    with store.lock():  # type: ignore[attr-defined]
        run = read_run(store)
        if not run or run.get("ended_at"):
            return run
        return write_run(store, {**run, "ended_at": utc_now(), "ended": time.time(),
                                 "policy": None})


def choose_policy(store: StateDir, name: str, by: str) -> bool:
    """A person chose policy ``name`` for the rest of the live run; False when no run
    is live (nothing recorded)."""
    with store.lock():  # type: ignore[attr-defined]
        run = live_run(store)
        if run:
            write_run(store, {**run, "policy": {"name": name, "set_by": by,
                                                "set_at": utc_now()}})
        return bool(run)


def clear_policy(store: StateDir) -> None:
    """A person set the plan's policy: the run's own choice gives way to it."""
    with store.lock():  # type: ignore[attr-defined]
        run = read_run(store) if store.state_dir.is_dir() else {}
        if run and run.get("policy"):
            write_run(store, {**run, "policy": None})


def run_policy(store: PlanStore) -> dict[str, Any] | None:
    """The policy a person chose for the rest of the live run, or None. A choice older
    than the plan's own policy (a record written back from before a person's
    ``/maker:policy``) counts for nothing."""
    policy = live_run(store).get("policy")
    if not isinstance(policy, dict) or not policy.get("name"):
        return None
    plans = store.read_policy_data().get("set_at")
    if isinstance(plans, str) and str(policy.get("set_at") or "") <= plans:
        return None
    return policy
