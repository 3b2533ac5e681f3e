"""The one thing a ``/maker:run`` does next, from where ``plans/`` stands.

In this order, so that a person is never kept waiting behind work that can wait:

1. a step awaits approval: the reviewer, when its review is due and none runs; the
   person's question (under the run's own policy ``auto``, approved in code instead);
2. a step is in progress: a stop at its code vote held for a person; its deviation's
   question; its executor, when none runs (a launch lost to a crash, a compaction or a
   closed terminal); else wait for the ones that run in the background;
3. a step failed or is blocked: stop, a person decides;
4. every step is done: the run's report;
5. the next ready steps: a wave of them (``--parallel N``) or the next one, started here.

Computed under the loop's own lock: two verdicts that arrive at once (a wave's
executors, returning together in the foreground) see each other's end, so that exactly
one of them starts what comes next.
"""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from maker.errors import MakerError
from maker.executor.acceptance.approval import approval_question, approve_step, is_awaiting
from maker.executor.acceptance.review_route import review_need
from maker.executor.loop.actions import END_DONE, Action
from maker.executor.loop.actions import ask as _ask
from maker.executor.loop.actions import stop as _stop
from maker.executor.loop.actions import stretch as _stretch
from maker.executor.loop.actions import wait as _wait
from maker.executor.loop.one_step import one_step_next
from maker.executor.protocol.orient import deviation_question, pending_deviation
from maker.executor.rules.instructions import EXECUTOR_AGENT
from maker.executor.state.held_vote import first_held
from maker.executor.state.lifecycle import start_step
from maker.executor.state.run import (
    ENGINE,
    end_run,
    live_run,
    note_reviewer,
    note_step,
    note_stretch,
    run_mode,
    run_only,
    run_policy,
)
from maker.executor.state.schedule import SKIPPED, plan_schedule
from maker.executor.state.stretch import ENDED_UNSAID, stretch_runs
from maker.executor.verdicts.outcome import outcome
from maker.handoff.measured import files_note
from maker.store.active import member
from maker.store.atomic import exclusive_lock

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["loop_lock", "next_action"]

# A launch another verdict said this long ago is still on its way (two verdicts at once)
_SAID_S = 60.0


@contextlib.contextmanager
def loop_lock(store: PlanStore, timeout: float = 20.0) -> Iterator[None]:
    """Held while a verdict's next action is computed (see the module's note); after
    ``timeout`` it goes on without it (a hook never wedges)."""

    store.state_dir.mkdir(parents=True, exist_ok=True)
    with open(store.state_dir / "loop.lock", "a+") as fh:
        try:
            exclusive_lock(fh, timeout, poll=0.02)
        except (OSError, TimeoutError):
            pass
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fh, fcntl.LOCK_UN)


def next_action(store: PlanStore, session_id: str, prompt_id: str, *,
                typed: bool = False) -> Action:
    """The run's next action; it starts the steps it launches. ``typed``: a person typed
    ``/maker:run`` (their consent to take over a step another session ran, and a fresh
    look at launches no verdict will end)."""
    plan = store.load()
    engine = run_mode(store) == ENGINE
    only = run_only(store) if engine else None  # (a /maker:step run in the engine)
    if engine:
        engine_next = _engine_said(store, typed)
        if engine_next is not None:
            return engine_next
    for record in sorted(plan.steps, key=lambda r: r.number):
        if is_awaiting(record) and only in (None, record.number):
            decided = _awaiting(store, record.number, session_id, typed, engine)
            if decided is not None:
                return decided
            plan = store.load()  # (approved by the run's policy: on to the next)
    if (why := first_held(plan.steps)) is not None:  # (a stretch, an executor: a new vote)
        return _stop(store, why)
    if only is not None:
        return one_step_next(store, only)
    busy = _engine_busy(store, plan) if engine else \
        _in_progress(store, plan, session_id, prompt_id, typed)
    if busy is not None:
        return busy
    for record in plan.steps:
        if record.status in ("failed", "blocked"):
            why = "; ".join(str(r) for r in record.meta.get("reasons") or [])[:400]
            return _stop(store, f"step {record.number} ({record.title}) is {record.status}"
                         f"{': ' + why if why else ''}. A person decides: `/maker:reset "
                         f"{record.number}` puts it back, then `/maker:run` goes on")
    sched = plan_schedule(store, plan)
    if all(s in ("complete", SKIPPED) for s in sched.statuses.values()):
        from maker.executor.loop.report import report

        said = report(store, plan, end_run(store))
        return Action("done", f"{said}\nShow the user this report as it is, and end with "
                              f"the line {END_DONE}.")
    if engine:
        return _stretch()
    return _start_next(store, plan, session_id, prompt_id)


# -- the run in maker's engine (``maker.executor.state.stretch``) ------------------------

def _engine_said(store: PlanStore, typed: bool) -> Action | None:
    """While the engine runs: wait for it; but a person's ``/maker:run`` starts a stretch
    of its own, which waits for the one that runs (a closed session's, maybe, whose end
    nobody would hear) and goes on from there. When a stretch ended on what no question
    can settle (an SDK call failed, the budget is spent, no plan): the run stops there,
    once, rather than start the same stretch again. Else None: the plan says what is
    next."""
    if stretch_runs(store):
        if typed:
            return _stretch()
        return Action("wait", "Next: end your turn in one sentence: maker's engine runs the "
                              "plan in the background, and maker speaks when it ends.")
    stretch = live_run(store).get("stretch") or {}
    if not stretch.get("ended") or stretch.get("told"):
        return None
    note_stretch(store, told=True)
    if stretch.get("exit") in (ENDED_UNSAID, 1, 2, 3, 5):  # (5: a person's --stop)
        return _stop(store, str(stretch.get("message") or "the engine stopped")[:400])
    return None


def _engine_busy(store: PlanStore, plan: StoredPlan) -> Action | None:
    """A step in progress under the engine: its deviation's question; else the engine
    goes on (a killed stretch's step too)."""
    steps = [r for r in plan.steps if r.status == "in-progress"]
    for record in steps:
        if (dev := pending_deviation(record)) is not None:
            return _ask(deviation_question(record.number, dev))
    return _stretch() if steps else None




def _awaiting(store: PlanStore, n: int, session_id: str, typed: bool,
              engine: bool = False) -> Action | None:
    now = outcome(store, n)
    if "ask" not in now and engine:  # the engine asks the reviewer
        return _stretch()
    if "ask" not in now:  # its review is due first
        running = (live_run(store).get("reviewing") or {}).get(str(n))
        # (a person's /maker:run in another session: that reviewer went with its session)
        if isinstance(running, dict) and (not typed or running.get("session") == session_id):
            return _wait([f"the reviewer of step {n}"])

        note_reviewer(store, n, session_id)
        return Action("review", f"Next: {now['next']}.")
    record = store.load_step(n)
    handoff = store.read_handoff(n) or {}
    if run_policy(store) and _policy_decides(store, record, handoff):
        with contextlib.suppress(MakerError):  # the person's choice for the rest of the run
            approve_step(store, n, "policy:auto (the user's choice for this run)")
            note_step(store, n, status="complete",
                      approved_by="policy:auto (the user's choice for this run)")
            return None
    question = approval_question(n, record.title, files_note(record, handoff), in_run=True)
    return _ask(question)


def _policy_decides(store: PlanStore, record: StepRecord, handoff: dict[str, Any]) -> bool:
    """Whether policy ``auto`` itself approves this step (a small one): a large one
    needs the reviewer's approving verdict, and one the reviewer sent back past its
    bound, or that no reviewer judged, is a person's to decide, as under the plan's
    own policy ``auto``."""

    return review_need(store, record, "auto", handoff).route == "policy"




def _in_progress(store: PlanStore, plan: StoredPlan, session_id: str, prompt_id: str,
                 typed: bool) -> Action | None:
    """The steps in progress: a deviation to ask, executors to (re)launch, or to wait."""
    from maker.executor.votes.runs import add_turn

    steps = [r for r in plan.steps if r.status == "in-progress"]
    if not steps:
        return None
    if typed:  # a person's /maker:run: this session takes the steps over
        _take_over(store, [r.number for r in steps], session_id)
    active = store.read_active() or {}
    waiting: list[str] = []
    launch: list[int] = []
    for record in steps:
        dev = pending_deviation(record)
        if dev is not None:
            return _ask(deviation_question(record.number, dev))
        if _executor_runs(store, record.number, member(active, record.number) or active,
                          typed):
            waiting.append(f"step {record.number}")
        else:
            launch.append(record.number)
    pending: list[int] = []
    if not typed:  # (a launch another verdict said a moment ago: not said twice)
        pending = [n for n in launch if _said_not_made(store, n, active)]
        launch = [n for n in launch if n not in pending]
    if launch:
        for n in launch:
            add_turn(store, n, session_id, prompt_id)
        return _launch(store, launch)
    return _wait(waiting or [f"step {n}" for n in pending])


def _executor_runs(store: PlanStore, n: int, active: dict[str, object], typed: bool) -> bool:
    """Whether an executor of step ``n`` has not returned. When a person typed
    ``/maker:run``, a launch in the foreground cannot be running (the main agent would
    still be inside its Agent call): it was lost, and is marked so."""
    from maker.executor.votes.run_record import load_run

    with store.lock():
        run = load_run(store, n, dict(active))
        if run is None:
            return False
        running = run.running()
        if typed:
            lost = [x for x in running if not x.get("background")]
            for launch in lost:
                launch["done"] = True
            if lost:
                run.save()
            running = [x for x in running if x.get("background")]
        return bool(running)


def _said_not_made(store: PlanStore, n: int, active: dict[str, object]) -> bool:
    """Whether the run said to launch step ``n`` under ``_SAID_S`` ago, and no launch
    of it was made since (the main agent is about to)."""
    from maker.executor.votes.run_record import load_run

    entry = (live_run(store).get("steps") or {}).get(str(n)) or {}
    said = float(entry.get("told") or 0)
    if time.time() - said > _SAID_S or entry.get("told_run") != _run_start(store, n):
        return False  # (long ago, or said for an earlier run of the step: sent back since)
    run = load_run(store, n, member(dict(active), n) or dict(active))
    return not any(float(x.get("at") or 0) >= said for x in (run.launches if run else []))


def _run_start(store: PlanStore, n: int) -> str:
    """When the current run of step ``n`` began ("" for a step file that cannot be read)."""
    try:
        return str(store.load_step(n).meta.get("started_at") or "")
    except MakerError:
        return ""


def _take_over(store: PlanStore, steps: list[int], session_id: str) -> None:
    active = store.read_active() or {}
    if not session_id or active.get("session_id") in (None, session_id):
        return
    if active.get("wave"):  # (steps in their worktrees: the wave is this session's now)
        with store.lock():
            store.write_active(dict(active, session_id=session_id))
        return
    for n in steps:
        with contextlib.suppress(MakerError):
            start_step(store, n, session_id=session_id, take_over=True)




def _launch(store: PlanStore, steps: list[int]) -> Action:
    from maker.executor.votes.ballots import launch_instruction, vote_state

    for n in steps:
        note_step(store, n, began=time.time(), told=time.time(), told_run=_run_start(store, n))
    if len(steps) == 1:
        n = steps[0]
        with contextlib.suppress(Exception):
            if vote_state(store, n) is not None:
                return Action("launch", f"Next: {launch_instruction(store, n)}.")
        return Action("launch", f"Next: launch {EXECUTOR_AGENT} with the Agent tool and the "
                                f"prompt \"Execute maker step {n}.\"")
    prompts = " and ".join(f'"Execute maker step {n}."' for n in steps)
    return Action("launch", f"Next: launch {len(steps)} {EXECUTOR_AGENT} subagents at once, "
                            f"one Agent call each in one message, with the prompts {prompts}")


def _start_next(store: PlanStore, plan: StoredPlan, session_id: str,
                prompt_id: str) -> Action:
    from maker.executor.parallel.wave_begin import start_wave
    from maker.executor.votes.runs import add_turn

    limit = live_run(store).get("parallel")
    try:
        begun = start_wave(store, session_id, prompt_id,
                           limit if isinstance(limit, int) else None)
        if begun is not None:
            return _launch(store, [r.number for r in begun[0]])
        started = start_step(store, None, session_id=session_id or None)
    except MakerError as exc:
        return _stop(store, f"no step can start: {exc}")
    add_turn(store, started.step, session_id, prompt_id)
    return _launch(store, [started.step])




