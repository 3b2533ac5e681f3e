"""The stretch after a person's answer, started by maker's hook and ended by a wake.

Under the policy ``never`` a ``/maker:run`` stops for a person at every step. A stretch
run as the main agent's background Bash task costs the main session its call, its launch
result (the output file's path and the client's advice) and the task's notification
(about 1,600 characters a question, ``docs/run-ways.md``). After a person's answer,
maker starts the stretch itself instead:

- the PostToolUse hook that records the answer (``answered_in_run``) starts the stretch
  as a process of its own (the plugin's own ``bin/maker loop stretch``, in a session of
  its own, its output in ``plans/.maker/stretch.log``) and tells the main agent to end
  its turn; it notes in the run's record for which answer (``wake_for``) and when
  (``wake_at``);
- an ``asyncRewake`` PostToolUse hook on the same answer (``on_stretch_wake``, in
  ``hooks/hooks.json``) waits for that stretch to end, then exits 2: the client wakes the
  main agent with a short notification, and maker's UserPromptSubmit hook gives the run's
  next action, computed from ``plans/`` (``maker.hooks.notifications``).

A stretch that outlives the wait (``WAKE_WAIT_S``, inside the hook's own timeout, which
would otherwise end the hook without a word) wakes the main agent anyway: it is told to
run ``maker loop stretch`` in the background, which waits for the one that runs. A wake
is never a person's decision: it only says that the engine stopped.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import TYPE_CHECKING

from maker.hooks.common import store_for
from maker.hooks.protocol import HookInput, Output, allow

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["WAKE_SUMMARY", "WAKE_WAIT_S", "answered_in_run", "is_wake", "on_stretch_wake",
           "start_stretch"]

WAKE_SUMMARY = "maker: the engine stopped"
"""The line the person sees when the wake arrives (``rewakeSummary`` in hooks.json); the
client also puts it in the wake's text, where ``is_wake`` knows it by."""
WAKE_WAIT_S = 3_500.0
"""How long the wake waits for the stretch: inside the hook's timeout (3,600 s)."""
_MARK_WAIT_S = 40.0  # for the answer's own hook to say whether it started a stretch
_START_WAIT_S = 60.0  # for a started stretch to take its lock (else: it died at start)
_POLL_S = 0.25
_LOOK_S = 2.0  # how often the stretch's lock is looked at (is its process alive?)


def is_wake(prompt: str) -> bool:
    """Whether a UserPromptSubmit prompt is the wake of ``on_stretch_wake``."""
    head = prompt[:300].lstrip()
    return head.startswith("<task-notification>") and \
        f"<summary>{WAKE_SUMMARY}</summary>" in head


def answered_in_run(hook: HookInput, store: PlanStore, told: str, prompt_id: str) -> str:
    """What the main agent reads after a person answered maker's question in a run: what
    was recorded and the one next action. In maker's engine a next stretch is started
    here, and the main agent ends its turn until the wake."""
    from maker.executor.loop.words import answered
    from maker.executor.state.run import ENGINE, note_stretch, run_mode

    answer = hook.text("tool_use_id")
    if run_mode(store) != ENGINE or not answer:
        return answered(store, told, hook.session_id, prompt_id)
    started: list[float] = []

    def start() -> bool:
        at = start_stretch(store, answer)
        if at is not None:
            started.append(at)
        return at is not None

    said = answered(store, told, hook.session_id, prompt_id, start=start)
    if not started:  # (the wake that waits on this answer: nothing to wait for)
        note_stretch(store, wake_for=answer, wake_at=None)
    return said


def start_stretch(store: PlanStore, wake_for: str) -> float | None:
    """Start ``maker loop stretch`` as a process of its own, for the wake that waits on
    ``wake_for`` (a person's answer, or the typed ``/maker:run``); when it began (None:
    it could not start, and the main agent is told to run it instead)."""
    from maker.executor.state.run import note_stretch
    from maker.hooks.plumbing import BASH, maker_bin

    program = maker_bin()
    if program is None or not BASH.is_file() or not wake_for:
        return None
    at = time.time()
    note_stretch(store, wake_for=wake_for, wake_at=at)  # (before it runs: the wake's mark)
    try:
        with open(store.state_dir / "stretch.log", "wb") as log:
            # Its own session, no stdin, its output in the log: the hook's pipes close
            # when the hook ends (the client waits on them), and a hook's end or its
            # timeout, which ends the hook's process group, does not end the stretch.
            subprocess.Popen([str(BASH), str(program), "loop", "stretch", "--plans-dir",
                              str(store.root)], cwd=store.project, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                             close_fds=True)
    except OSError:
        note_stretch(store, wake_at=None)
        return None
    return at


def on_stretch_wake(hook: HookInput) -> Output:
    """The ``asyncRewake`` hook on a person's answer to maker's question in a run of
    maker's engine, and on a typed ``/maker:run`` (or ``/maker:step`` of a step whose code
    the engine votes on: ``maker.executor.loop.one_step``): ``{"wake": why}`` once the stretch
    started for it ended (the hook then exits 2, which wakes the main agent); nothing
    when none was started."""
    if hook.agent_id or hook.agent_type:
        return allow()
    store = store_for(hook)
    typed_run = hook.text("hook_event_name") == "UserPromptSubmit"  # (or /maker:step)
    if typed_run:
        from maker.store.requests import parse_command

        typed = parse_command(hook.text("prompt"))
        command = typed[0] if typed is not None else ""
        key = hook.text("prompt_id") if command == "run" or command == "step" and \
            _votes_code(store, typed[1] if typed is not None else "") else ""
    elif hook.text("tool_name") == "AskUserQuestion":
        from maker.hooks.decisions import asks_makers_question

        asked = asks_makers_question(hook.raw.get("tool_input"))
        key = hook.text("tool_use_id") if asked else ""
    else:
        key = ""
    if not key or not store.exists():
        return allow()
    stretch = _mark(store, key, begins=typed_run)
    at = _when(stretch.get("wake_at")) if stretch else None
    return allow() if at is None else _wait(store, key, at)


def _votes_code(store: PlanStore, arguments: str) -> bool:
    """Whether a typed ``/maker:step`` (its ``arguments``) starts a stretch: the step it
    names, or the one a start takes up, has its code voted on in maker's engine
    (``maker.executor.loop.one_step``); else no wake waits."""
    from maker.errors import MakerError
    from maker.executor.loop.one_step import voted_code
    from maker.store.requests import split_step_args

    try:
        number, _, _ = split_step_args(arguments)
        return store.exists() and voted_code(store, number)
    except MakerError:
        return False


def _when(value: object) -> float | None:
    """A time in the run's record, or None for anything else (a record of another
    maker's version, say)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None  # type: ignore[arg-type]


def _mark(store: PlanStore, key: str, begins: bool) -> dict[str, object] | None:
    """The run's stretch once what ``key`` names (a person's answer, a typed
    ``/maker:run``) noted whether it started one (the hooks run at once); None when it
    never did, the run is not maker's engine's, or it ended (``begins``: it may not have
    begun yet)."""
    from maker.executor.state.run import ENGINE, live_run, run_mode

    deadline = time.monotonic() + _MARK_WAIT_S
    while time.monotonic() < deadline:
        run = live_run(store)
        stretch = run.get("stretch") if run else None
        if isinstance(stretch, dict) and stretch.get("wake_for") == key:
            return stretch
        if run and run_mode(store) != ENGINE or not run and not begins:
            return None
        time.sleep(_POLL_S)
    return None


def _wait(store: PlanStore, key: str, at: float) -> Output:
    """Until the stretch started at ``at`` ends, or its process is gone without saying
    how (the run's record is read anew only when it changed: a stretch can run for an
    hour)."""
    from maker.executor.state.run import live_run
    from maker.executor.state.stretch import stretch_runs
    from maker.store.run_file import RUN_FILE

    began = time.monotonic()
    seen: tuple[int, int] | None = None
    started = False
    looked = began  # (when the stretch's lock was last looked at)
    while time.monotonic() - began < wait_s():
        try:
            stat = (store.state_dir / RUN_FILE).stat()
            now = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            now = (0, 0)
        if now != seen:
            seen = now
            run = live_run(store)
            if not run:
                return allow()  # (the run ended or stopped meanwhile: a person's doing)
            stretch = run.get("stretch")
            stretch = stretch if isinstance(stretch, dict) else {}
            if stretch.get("wake_for") != key:
                return allow()  # (a later answer's stretch: its own wake waits for it)
            if _ended_since(stretch, at):
                return {"wake": "the stretch ended."}
            started = (_when(stretch.get("began")) or 0.0) >= at
        if time.monotonic() - looked > _LOOK_S and (started or time.monotonic() - began >
                                                    _START_WAIT_S):
            looked = time.monotonic()
            if not stretch_runs(store):  # (its process is gone: did it say how?)
                now_run = live_run(store).get("stretch")
                if isinstance(now_run, dict) and _ended_since(now_run, at):
                    return {"wake": "the stretch ended."}
                return {"wake": "the stretch ended without saying how." if started else
                        "the stretch did not start (plans/.maker/stretch.log says why)."}
        time.sleep(_POLL_S)
    return {"wake": "the stretch still runs."}


def _ended_since(stretch: dict[str, object], at: float) -> bool:
    """Whether the stretch that began after ``at`` ended (not an older one, which a new
    stretch waited for: its end is not this one's)."""
    began, ended = _when(stretch.get("began")), _when(stretch.get("ended"))
    return began is not None and ended is not None and at <= began <= ended


def wait_s() -> float:
    """``WAKE_WAIT_S``, or less where ``MAKER_WAKE_WAIT_S`` says (a shorter wait only
    wakes the main agent sooner, to wait in a stretch of its own)."""
    try:
        asked = float(os.environ.get("MAKER_WAKE_WAIT_S", WAKE_WAIT_S))
    except ValueError:
        return WAKE_WAIT_S
    return min(max(asked, 1.0), WAKE_WAIT_S) if asked == asked else WAKE_WAIT_S
