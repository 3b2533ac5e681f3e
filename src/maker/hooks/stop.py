"""The Stop hook: while a step is in progress without an accepted handoff, block
(at most ``STOP_REMINDERS`` times, ``maker.executor.rules.step_rules``; then the step is
recorded ``failed``).

Not while the step's executor runs in the background (an interactive session runs
every subagent there): the main agent ends its turn to wait, and the executor's
notification starts the turn that gets maker's verdict (``maker.hooks.verdicts``).
Such a stop is neither blocked nor counted.

It runs on every stop of the main agent, so it reads only what it decides on: the
in-progress marker, the step's run, and that step's status and title
(``maker.store.state``), without PyYAML or the plan model. They are imported only to
rebuild a lost marker, to read a step file in an unusual form, or to record a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

from maker.errors import MakerError
from maker.executor.rules.step_rules import STOP_REMINDERS
from maker.executor.state.attempts import bump, clear, remind
from maker.hooks.protocol import HookInput, Output, allow, block, message
from maker.store.active import member, run_of
from maker.store.state import PlanState

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

__all__ = ["on_stop"]

_WAITED = "the main agent left step"


def on_stop(hook: HookInput) -> Output:
    from maker.core.paths import find_plans_dir
    from maker.store.layout import check_layout

    # A cwd that is no directory (garbage input) gives way to the hook's own.
    cwd = Path(hook.cwd) if hook.cwd and os.path.isdir(hook.cwd) else None
    root = find_plans_dir(cwd=cwd)
    check_layout(root)  # a file where a folder belongs: one clear message, not a traceback
    state = PlanState(root)
    if not state.state_dir.is_dir():
        return allow()
    with state.lock():  # one consistent view of the marker, the step and its run
        return _stop(hook, state)


def _marker(state: PlanState) -> dict[str, Any] | None:
    """The in-progress marker; one that exists but cannot be read is rebuilt from the
    step files (``maker.hooks.common.active_marker``)."""
    active = state.read_active()
    if active or not state.active_path.exists():
        return active
    from maker.hooks.common import running_step

    return running_step(state.full())


def _stop(hook: HookInput, state: PlanState) -> Output:
    active = _marker(state)
    if not active:
        return allow()
    from maker.executor.votes.runs import turn_runs_step

    step = int(active["step"])
    if not turn_runs_step(state, active, hook.session_id, hook.text("prompt_id")):
        # Another session's step, one started from a shell, or a later turn of this
        # session that does not run the step: not this turn's to finish.
        return allow()
    try:
        status, title = state.step_status(step)
    except (MakerError, OSError) as exc:  # a broken step file (mid-edit?) never blocks
        return message(f"maker: step {step} is in progress but its file cannot be read "
                       f"({str(exc)[:200]}); this stop was let through. Run `maker status`.")
    if status != "in-progress":
        with state.lock():  # re-check under the lock: never clear another step's marker
            current = state.read_active()
            if current and current.get("step") == step and \
                    current.get("started_at") == active.get("started_at"):
                state.write_active(None)
        return allow()
    if _executor_runs(hook, state, active) or _deviation_waits(active):
        return allow()
    key = f"step{step}-{active.get('started_at', '')}"
    from maker.store.run_file import read_run

    run = read_run(state)
    if run and not run.get("ended_at"):  # a /maker:run's step: never failed for a stop
        stopped = run.get("stopped")
        if not stopped:
            return _run_waits(hook, state, step, title, key)
        if isinstance(stopped, dict) and str(stopped.get("why")).startswith(_WAITED):
            return allow()  # (this hook stopped the run: /maker:run goes on)
    count, failed = remind(state, step, key, hook.stop_hook_active)
    if failed:
        reason = "the session stopped without an accepted handoff"
        # One more block, the last: the main agent learns the verdict and ends with it.
        return block(f"maker's verdict: step {step} ({title}) FAILED: {reason}. Tell "
                     f"the user that the step failed and why; `maker step reset {step}` "
                     "puts it back to try again. End your reply with the line STEP_FAILED.")
    return block(
        f"maker: step {step} ({title}) is in progress and has no accepted handoff. "
        f"Next: {_launch(state, step)}, and let it finish with its handoff. If the "
        f"step cannot be done, tell the user why and end with STEP_FAILED: maker records "
        f"it failed after {STOP_REMINDERS} reminders. (Reminder {count} of {STOP_REMINDERS}.)")


def _run_waits(hook: HookInput, state: PlanState, step: int, title: str, key: str) -> Output:
    """A ``/maker:run`` whose step in progress has no executor when the main agent stops:
    reminded (bounded); then the run stops, the step kept as it is, for ``/maker:run`` to
    go on with. A run's step never fails for what the main agent did not do."""
    from maker.executor.state.run import stop_run

    count = bump(state, "stop", key)
    if count > STOP_REMINDERS or (hook.stop_hook_active and count >= STOP_REMINDERS):
        clear(state, "stop", key)
        stop_run(state, f"{_WAITED} {step}, which waited for an executor never launched")
        return message(f"maker: the run stopped: step {step} ({title}) waits for its "
                       "executor. Type /maker:run to go on from there.")
    return block(f"maker: the run is not finished: step {step} ({title}) is in progress and "
                 f"no executor runs it. Next: {_launch(state, step)}. (Reminder {count} of "
                 f"{STOP_REMINDERS}.)")


def _executor_runs(hook: HookInput, state: PlanState, active: dict[str, Any]) -> bool:
    """Whether an executor of the step runs in the background: the client lists one
    as running, or maker recorded a background launch the client does not show gone."""
    tasks = hook.raw.get("background_tasks")
    listed = [t for t in tasks if isinstance(t, dict) and t.get("status") == "running"
              and t.get("agent_type") == "maker:step-executor"] \
        if isinstance(tasks, list) else []
    if listed:
        from maker.hooks.records import read_record

        for task in listed:  # one maker bound to an earlier run does not count
            bound = read_record(str(task.get("id") or "")).get("run")
            if not isinstance(bound, list) or not bound or bound == run_of(active):
                return True
            mine = member(active, bound[0])  # (a step of a wave: its own run)
            if mine is not None and bound == run_of(mine):
                return True
    from maker.executor.votes.runs import background_running

    return bool(background_running(state, active, tasks))


def _deviation_waits(active: dict[str, Any]) -> bool:
    """Whether the step's executor stopped on a major deviation that awaits a person
    (``maker.executor.protocol.orient`` marks it in the in-progress marker): the turn may end,
    the question is the user's."""
    return active.get("deviation") == "pending"


def _launch(state: PlanState, step: int) -> str:
    """What to launch next: one executor, or, for a step decided by a vote, as many at
    once as the vote still needs (``maker.executor.votes.ballots``, imported only for a step
    that may vote, as ``step_status`` read it: a conditional step or one with
    ``votes:``)."""
    from maker.executor.rules.instructions import relaunch_instruction

    if not state.may_vote(step):
        return relaunch_instruction(step)
    from maker.executor.votes.ballots import launch_instruction

    return launch_instruction(state.full(), step)
