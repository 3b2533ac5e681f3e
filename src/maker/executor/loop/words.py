"""What the main agent reads in a ``/maker:run``, per step: the verdict on a subagent
that returned (its outcome in a line or two, the handoff's summary cut short, and the
one next action), the note on the person's answer, and the run's closing report.

The handoff itself never enters the main session: it is gated and stored under
``plans/``, and the verdict names it. Every text here is bounded, so a step's share of
the main session is the same at step 1 and at step 100.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from maker.core.text import clip
from maker.errors import MakerError
from maker.executor.acceptance.approval import is_awaiting
from maker.executor.loop.actions import END_STOPPED, Action
from maker.executor.loop.next_action import loop_lock, next_action
from maker.executor.loop.one_step import one_step_next
from maker.executor.loop.report import spent_said, step_head
from maker.executor.protocol.orient import pending_deviation
from maker.executor.state.run import live_run, note_reviewer, note_step, run_only, stop_run
from maker.executor.state.stretch import stretch_runs
from maker.executor.verdicts.outcome import outcome
from maker.handoff.measured import (
    BASE_FIELD,
    MEASURED_FIELD,
    NAMED_FIELDS,
    NO_FILE_CHANGED,
    files_note,
    measured_lines,
)
from maker.handoff.sweep import sweep_said

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["ENGINE_GOES_ON", "after_the_run", "answered", "begin_text", "ended_said",
           "executor_said", "reviewer_said", "typed_in_run", "unseen"]

_SUMMARY = 240  # of a handoff's summary, in a verdict
ENGINE_GOES_ON = "maker's engine goes on in the background and wakes you"
"""Said when maker itself started the next stretch (``maker.hooks.wake``)."""


def _line(text: str) -> str:
    """Others' words on one line: a quoted summary can start no line of maker's own
    (``Next:``, ``ask:``, the line to end with)."""
    return " ".join(text.split())


def ended_said(store: PlanStore, n: int) -> str:
    """How step ``n`` stands, in one line, for a verdict or a resumed run."""

    now = outcome(store, n)
    said = f"{step_head(store, n)}: {now['status']}"
    if now.get("approved_by"):
        said += f", approved by {now['approved_by']}"
    if now["status"] in ("failed", "blocked") and now["reasons"]:
        said += ": " + clip(_line("; ".join(now["reasons"])), 300)
    elif now["summary"]:
        said += f". Summary: {clip(_line(now['summary']), _SUMMARY, 'its handoff')}"
    from maker.executor.protocol.sweep import open_proposals

    mine = [p for p in open_proposals(store) if p.get("from_step") == n]
    if mine:
        said += f" ({len(mine)} proposal(s) for the user: shown at the end of the run)"
    return said


def executor_said(store: PlanStore, facts: dict[str, Any], session_id: str, prompt_id: str,
                  usage: dict[str, int]) -> str:
    """The verdict on a step executor that returned, in a run."""
    step = facts.get("step")
    kind = facts.get("outcome")
    if not isinstance(step, int):
        said = "the step executor returned, but no step of the run was in progress"
    elif kind == "ballot" and facts.get("k"):
        from maker.executor.verdicts.verdict import executor_verdict

        return executor_verdict(store, facts)  # (a vote under way says its own next)
    elif kind == "failed":
        said = (f"{step_head(store, step)} FAILED: its handoff was refused "
                f"{facts.get('attempts')} times")
    elif kind == "deviation":
        dev = pending_deviation(store.load_step(step)) or {}
        said = (f"{step_head(store, step)}: the executor found, before any edit, that the step "
                f"no longer fits the plan (a major deviation). What changed: "
                f"{clip(_line(str(dev.get('what_changed'))), 300, 'the step file')}. The "
                f"revised step: {clip(_line(str(dev.get('revised_task'))), 300, 'the step file')}")
    elif kind == "unchecked":
        said = f"{step_head(store, step)}: its handoff could not be checked: {facts.get('error')}"
    elif store.load_step(step).status == "in-progress":
        said = f"{step_head(store, step)}: the executor returned without an accepted handoff"
    else:
        said = ended_said(store, step)
    if isinstance(step, int):
        record = store.load_step(step)
        if record.status != "in-progress":
            note_step(store, step, ended=time.time(), status=record.status,
                      approved_by=record.meta.get("approved_by"), **usage)
    return f"{said.rstrip('.')}.\n{next_action(store, session_id, prompt_id).said}"


def after_the_run(store: PlanStore, facts: dict[str, Any]) -> str:
    """The verdict on a subagent that returned just after its run ended (the verdict
    before it, on another step, gave the run's report)."""
    step = facts.get("step")
    said = ended_said(store, step) if isinstance(step, int) else "the subagent returned"
    return (f"{said}. The run is over: its report came with the verdict before this one. "
            "End your turn in one sentence.")


def reviewer_said(store: PlanStore, facts: dict[str, Any], session_id: str,
                  prompt_id: str) -> str:
    """The verdict on the reviewer that returned, in a run."""
    step = facts.get("step")
    if isinstance(step, int):
        note_reviewer(store, step, running=False)
    if isinstance(step, int) and facts.get("outcome") == "recorded":
        record = store.load_step(step)
        said = (f"the review of step {step} is recorded (verdict: {facts.get('verdict')}); "
                f"step {step} is {record.status}")
        if record.status != "in-progress" and record.status != "awaiting-approval":
            note_step(store, step, ended=time.time(), status=record.status,
                      approved_by=record.meta.get("approved_by"))
    else:
        said = ("the reviewer returned, but its review was not recorded (the step it was "
                "launched for no longer awaits one)")
    return f"{said}.\n{next_action(store, session_id, prompt_id).said}"


_NEXT = re.compile(r" *Next: [^\n]*")
_END_WITH = re.compile(r" *(?:Tell (?:them|the user) so,? )?(?:and )?[Ee]nd(?: your reply)? "
                       r"with(?: the line)? STEP_[A-Z_]+\.")


def answered(store: PlanStore, told: str, session_id: str, prompt_id: str,
             start: Callable[[], bool] | None = None) -> str:
    """The note on the user's answer to maker's question, in a run: what was recorded,
    and the one next action. A step rejected with nothing to change stops the run (run
    again as it was, it would only come back the same). ``start``: starts the next
    stretch of maker's engine itself, when that is the next action (True when it did:
    the main agent then ends its turn, and is woken when the stretch ends)."""

    said = _NEXT.sub("", _END_WITH.sub("", told)).strip()  # (the run's own Next follows)
    with loop_lock(store):
        _note_answered(store)
        only = run_only(store)
        if "back to pending" in said:
            stop_run(store, "the user rejected a step and said nothing to change")
            if only is not None:  # (a /maker:step of one step in the engine)
                return (f"{said}\nTell the user that `/maker:step {only}` runs it again "
                        "once the step or the plan says what to change (or `/maker:reject "
                        f"{only} <what to change>`), and end with the line STEP_REJECTED.")
            return (f"{said}\nThe run stopped: the step would run again as it was. Tell the "
                    f"user that `/maker:run` goes on once the step or the plan says what to "
                    f"change (or `/maker:reject N <what to change>`), and end with the line "
                    f"{END_STOPPED}.")
        action = next_action(store, session_id, prompt_id)
        if action.kind == "stretch" and start is not None and start():
            return f"{said}\nNext: end your turn in a sentence: {ENGINE_GOES_ON}."
        return f"{said}\n{action.said}"


def _note_answered(store: PlanStore) -> None:
    """The run's entry of each step a person's answer just moved on from awaiting
    approval: its status as the plan has it now, and who approved it."""
    for key, entry in (live_run(store).get("steps") or {}).items():
        if entry.get("status") != "awaiting-approval":
            continue
        try:
            record = store.load_step(int(key))
        except (MakerError, ValueError):  # a broken step file: said by what comes next
            continue
        if record.status != "awaiting-approval":
            note_step(store, record.number, status=record.status,
                      approved_by=record.meta.get("approved_by"))


def stretch_said(store: PlanStore, said: str) -> str:
    """What the main agent reads when a stretch of the engine ended: the one next action
    (where the plan stands is on the person's screen: ``approval_screen``)."""
    return said if said.startswith("maker") else f"maker:\n{said}"


def approval_screen(store: PlanStore) -> str:
    """What the person reads on screen (not the model) before maker's question on a step
    that awaits approval: its summary, the files maker measured, the checks maker ran and
    how they ended, its cost; "" when no step awaits approval."""
    plan = store.load()
    waiting = [r for r in plan.steps if is_awaiting(r)]
    if not waiting:
        return ""
    record = waiting[0]
    handoff = store.read_handoff(record.number) or {}
    measured = handoff.get(MEASURED_FIELD)
    files = measured if isinstance(measured, list) else handoff.get("files_changed") or []
    lines_of = measured_lines(store, record, [str(f) for f in files]) \
        if isinstance(measured, list) else None
    counts, diff = lines_of if lines_of else ({}, "")

    def shown_file(name: str) -> str:
        got = counts.get(name)
        said = "" if got is None else " (binary)" if got[0] < 0 else f" (+{got[0]} -{got[1]})"
        return clip(name, 100) + said

    shown = ", ".join(shown_file(str(f)) for f in files[:15]) + (
        f" and {len(files) - 15} more" if len(files) > 15 else "")
    checks = [f"{clip(str(e.get('command')), 80)} (exit {e.get('exit_code')})"
              for e in handoff.get("evidence") or [] if isinstance(e, dict)][:5]
    entry = (live_run(store).get("steps") or {}).get(str(record.number)) or {}
    spent = (f"{int(entry['duration_ms']) // 1000} s, {int(entry.get('tokens') or 0):,} tokens"
             + (f", {spent_said(entry)}" if spent_said(entry) else "")
             if entry.get("duration_ms") is not None else "")
    done = sum(r.status == "complete" for r in plan.steps)
    lines = [f"maker: {done} of {len(plan.steps)} steps complete; step {record.number} "
             f"({clip(record.title, 80)}) awaits your approval.",
             f"  Summary: {clip(str(handoff.get('summary') or '-'), 600)}",
             f"  Files (maker measured): {shown}" if files else
             f"  Files: {NO_FILE_CHANGED}" if isinstance(measured, list) else "  Files: -",
             f"  Checks: {'; '.join(checks) if checks else 'none ran'}"]
    if any(handoff.get(field) for field in (*NAMED_FIELDS, BASE_FIELD)):
        lines.insert(3, f"  {clip(files_note(record, handoff), 600)}")
    if sweep_said(handoff):
        lines.append(f"  Sweep: {clip(sweep_said(handoff), 300)}")
    if spent:
        lines.append(f"  Spent: {spent}")
    lines.append(f"  The diff: `{diff}` in a terminal." if diff else
                 "  The diff: `git diff` in a terminal; `maker status` has the rest.")
    return "\n".join(lines)


def typed_in_run(store: PlanStore, told: str) -> str:
    """What the main agent is told of a decision the person typed (``/maker:approve``,
    ``/maker:reject``) while a run waits: the decision, and that ``/maker:run`` goes on
    (the person's next command, not the model's to take). A step rejected with nothing
    to change stops the run, as its question's rejection does."""

    said = _NEXT.sub("", _END_WITH.sub("", told)).strip()
    only = run_only(store)
    if only is not None:  # (a /maker:step of one step in the engine)
        return _typed_in_step(store, said, only)
    if "back to pending" in said:
        stop_run(store, "the user rejected a step and said nothing to change")
    return (f"{said} Tell the user so in a sentence: the run goes on when they type "
            "/maker:run. Launch nothing now.")


def _typed_in_step(store: PlanStore, said: str, n: int) -> str:
    """:func:`typed_in_run`'s words in a run of step ``n`` alone: the step done, its end;
    sent back with nothing to change, it stops there; else the run goes on (a decision
    typed too early, or on another step, changes nothing of it), in the engine when a
    stretch runs, else at the person's ``/maker:step``."""
    try:
        done = store.load_step(n).status == "complete"
    except MakerError:
        done = False
    if done:
        return f"{said}\n{one_step_next(store, n).said}"
    if "back to pending" in said:
        stop_run(store, "the user rejected a step and said nothing to change")
        return (f"{said} Tell the user so in a sentence: `/maker:step {n}` runs it again "
                "once the step says what to change. Launch nothing now, and end with the "
                "line STEP_REJECTED.")
    goes_on = ("maker's engine goes on with it, and maker wakes you when it stops"
               if stretch_runs(store) else f"`/maker:step {n}` goes on with it")
    return f"{said} Tell the user so in a sentence: {goes_on}. Launch nothing now."


def unseen(store: PlanStore) -> list[str]:
    """Steps of the live run that ended without their verdict reaching the main agent
    (a lost notification, a closed terminal): one line each, noted as told."""
    run = live_run(store)
    lines: list[str] = []
    for key, entry in sorted((run.get("steps") or {}).items(), key=lambda kv: int(kv[0])):
        if entry.get("ended") or not entry.get("began"):
            continue
        try:
            record = store.load_step(int(key))
        except (MakerError, OSError):  # a broken step file: said by what comes next
            continue
        if record.status in ("in-progress", "pending"):
            continue
        lines.append(ended_said(store, record.number))
        note_step(store, record.number, ended=time.time(), status=record.status,
                  approved_by=record.meta.get("approved_by"))
    return lines


def begin_text(store: PlanStore, run: dict[str, Any], resumed: bool, action: Action,
               seen: list[str]) -> str:
    """What ``/maker:run`` prints: where the run stands, what happened unseen, and the
    one next action."""
    plan = store.load()
    done = sum(r.status == "complete" for r in plan.steps)
    what = "resumed" if resumed else "began"
    policy = (run.get("policy") or {}).get("name")
    lines = [f"maker: run {run.get('id')} {what}: {done} of {len(plan.steps)} steps "
             f"complete" + (f"; policy {policy} for the rest of this run (the user's "
                            "choice)" if policy else "") + "."]
    if seen:
        lines.append("Since the last verdict you saw:\n" + "\n".join(f"- {s}" for s in seen))
    lines.append(action.said)
    return "\n".join(lines)
