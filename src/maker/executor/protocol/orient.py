"""Orient: before a step's work starts, is its plan still right? (seed 004: ``orient``,
``route_staleness``, ``gate_deviation``; docs/architecture.md#the-seeds.)

    in-progress ──maker orient N none|minor──▶ work (edits allowed)
         │
         └──maker orient N major──▶ deviation pending ──a person approves──▶ work, on the
                                    (no edit allowed)   (or STEP_AUTOAPPROVE)   revised step
                                                     └──a person rejects──▶ pending

Code does what code can (:func:`findings`): a step that this step builds on used an
output that has since changed (each handoff records the sha256 of the outputs it read;
a step redone after a reset delivers a different one), and the paths the step names
that are not in the project. Those a model cannot talk away: stale inputs make the
deviation major whatever the executor judges. The executor's read-only look at the rest
(does what the step names still look as planned?) is its judgment, recorded with
``maker orient N``; until one is recorded, the PreToolUse guard refuses every edit
(:func:`edit_refusal`).

A major deviation stops before any edit and goes to a person, as a gate of its own:
the same sources as the final approval (the user's answer to maker's question, a typed
``/maker:approve N`` or ``/maker:reject N``, ``maker step approve|reject N`` at a
terminal), or ``STEP_AUTOAPPROVE=1`` in the environment of maker's own process (a
person's setting: the hook's, never a command the model runs), which passes this gate
and only this one. A minor deviation is noted in the brief and in the handoff.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from maker.core.clock import utc_now
from maker.core.models import step_refs
from maker.errors import MakerError, StepError
from maker.executor.state.run import ENGINE_SESSIONS

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord, StoredPlan

__all__ = ["AUTOAPPROVE_ENV", "DEVIATION_LABELS", "DEVIATION_PREFIX", "DEVIATIONS", "Finding",
           "autoapproved", "decide_deviation", "deviation_question", "edit_refusal",
           "edits_project", "findings", "orient_section", "pending_deviation", "person_decides",
           "record_orient"]

DEVIATIONS = ("none", "minor", "major")
# The tools that change nothing in the project; any other (Write, Edit, an MCP tool, one
# maker does not know) waits for orient. Bash is read command by command.
_NO_EDIT = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch",
                      "ToolSearch", "AskUserQuestion", "TodoWrite", "TodoRead",
                      "SubagentHandback", "BashOutput", "KillShell"})
AUTOAPPROVE_ENV = "STEP_AUTOAPPROVE"
# maker's deviation question (AskUserQuestion); the hook that records the answer
# recognises it by this prefix and these labels.
DEVIATION_PREFIX = "maker: step deviates "
DEVIATION_LABELS = ("Approve revised step {n}", "Reject step {n}")
_TEXT_LIMIT = 4000
_PATHS = re.compile(r"`([^`\s]{2,200})`")


@dataclass(frozen=True)
class Finding:
    """What maker's code found: ``major`` when code alone knows the step no longer fits."""

    text: str
    major: bool = False


# -- what code finds ---------------------------------------------------------------------


def _upstream(plan: StoredPlan, n: int) -> list[int]:
    """The steps step ``n`` builds on: its dependencies and the steps whose outputs it
    reads, and theirs, transitively."""
    seen: set[int] = set()
    todo = [n]
    while todo:
        record = plan.get(todo.pop())
        for m in [*record.depends_on, *step_refs(record.spec.input_variables)]:
            if m != n and m not in seen and any(r.number == m for r in plan.steps):
                seen.add(m)
                todo.append(m)
    return sorted(seen)


def findings(store: PlanStore, plan: StoredPlan, n: int) -> list[Finding]:
    """What code can check of step ``n`` against the world as it is now."""
    from maker.yaml_cleaner.dump import canonical_sha256

    out: list[Finding] = []
    up = _upstream(plan, n)
    outputs = store.outputs(only=[*up, n], plan=plan) if up else {}
    for u in up:
        record = plan.get(u)
        if record.status != "complete":
            continue
        read = (store.read_handoff(u) or {}).get("inputs")
        for item in read if isinstance(read, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("step"), int):
                continue
            var, then = item.get("output_variable"), item.get("sha256")
            if not isinstance(var, str) or var not in outputs or not then:
                continue
            if canonical_sha256(outputs[var]) != then:
                out.append(Finding(
                    f"step {u} ({record.title}) was built on step {item['step']}'s output "
                    f"`{var}` as it was then; step {item['step']} has since delivered a "
                    f"different one (it was redone), so what step {u} handed on may no "
                    "longer hold", major=True))
    project = store.project
    named = dict.fromkeys(m for m in _PATHS.findall(plan.get(n).spec.task_description)
                          if "/" in m or re.search(r"\.[A-Za-z0-9]{1,8}\Z", m))
    for name in list(named)[:50]:
        if name.startswith(("-", "$", "http:", "https:")) or ".." in name.split("/"):
            continue
        if not (project / name.lstrip("/")).exists():
            out.append(Finding(f"`{name}`, which the step names, is not in the project "
                               "(expected if the step creates it)"))
    return out


# -- the record ------------------------------------------------------------------------


def pending_deviation(record: StepRecord) -> dict[str, Any] | None:
    """The major deviation of step ``record`` that awaits a person, or None."""
    dev = record.meta.get("deviation")
    return dev if isinstance(dev, dict) and dev.get("status") == "pending" else None


def edits_project(tool: str, command: str | None) -> bool:
    """Whether an executor's call may change the project (so it waits for orient): a file
    writer, or a Bash command that is neither a reader nor maker's reads and ``orient``
    (``maker verify`` runs the project's formatters: it waits too). Both front ends ask
    here: the plugin's PreToolUse hook and ``maker run``'s (``engine.tool_limits``)."""
    if tool in _NO_EDIT:
        return False
    if tool != "Bash":
        return True  # a writer, an MCP tool, one maker does not know: it may change things
    if not command:
        return False
    from maker.tools.command.maker_commands import orient_command, plumbing
    from maker.tools.command.readonly import is_read_only

    found = plumbing(command)
    if found is not None and found[0] != "verify --step":
        return False
    return orient_command(command) is None and not is_read_only(command)


def edit_refusal(record: StepRecord) -> str | None:
    """Why the executor may not edit yet (the PreToolUse guard's words), or None."""
    n = record.number
    if record.meta.get("landed_at") and record.meta.get("worktree"):
        return (f"maker: step {n}'s change has landed in the main checkout (`maker land "
                f"{n}`); nothing more is edited for it. Hand off now.")
    if pending_deviation(record) is not None:
        return (f"maker: step {n} deviates from the plan and awaits a person's decision; "
                "nothing may be edited until they approve the revised step. Stop now and "
                "answer with one line: DEVIATION.")
    if not isinstance(record.meta.get("orient"), dict):
        return (f"maker: orient first. Before any edit, check that step {n} as written still "
                f"fits the project (read what it names), then record your judgment with "
                f"`maker orient {n} none`, `maker orient {n} minor --what \"...\"` or "
                f"`maker orient {n} major --what \"...\" --revised \"...\"` (your brief, "
                f"`maker context {n}`, says how).")
    return None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + " [cut]"


def autoapproved(env: dict[str, str] | None = None) -> bool:
    """``STEP_AUTOAPPROVE=1`` in maker's own environment (a person's setting)."""
    return (os.environ if env is None else env).get(AUTOAPPROVE_ENV, "").strip() == "1"


def record_orient(store: PlanStore, n: int, deviation: str, what: str = "",
                  revised: str = "") -> dict[str, Any]:
    """Record the executor's orient judgment for step ``n`` (in progress). Code's major
    findings make it major whatever was judged. Returns the record. Raises StepError."""
    if deviation not in DEVIATIONS:
        raise StepError(f"{deviation!r} is not a deviation: use none, minor or major", n)
    if deviation != "none" and not what.strip():
        raise StepError(f"a {deviation} deviation needs --what: what changed, in a sentence "
                        "or two", n)
    if deviation == "major" and not revised.strip():
        raise StepError("a major deviation needs --revised: the step's task as it should now "
                        "read (the person approves or rejects it)", n)
    with store.lock():
        plan = store.load()
        record = plan.get(n)
        if record.status != "in-progress":
            raise StepError(f"step {n} is {record.status}, not in progress: only a step being "
                            "worked on is oriented", n)
        if pending_deviation(record) is not None:
            raise StepError(f"step {n}'s deviation already awaits a person's decision", n)
        found = findings(store, plan, n)
        forced = [f.text for f in found if f.major]
        approved = record.meta.get("deviation")
        overruled: list[str] = []
        if forced and deviation != "major" and not (
                isinstance(approved, dict) and approved.get("status") == "approved"):
            deviation, overruled = "major", forced
            what = "; ".join(x for x in (what.strip(), *forced) if x)
            revised = revised.strip() or str(record.meta.get("revised_task")
                                              or record.spec.task_description)
        entry = {"deviation": deviation, "what_changed": _clip(what),
                 "findings": [f.text for f in found], "overruled_by_code": overruled,
                 "at": utc_now()}
        record.meta["orient"] = entry
        if deviation == "major":
            record.meta["deviation"] = {"status": "pending", "what_changed": _clip(what),
                                        "revised_task": _clip(revised),
                                        "forced_by_code": bool(overruled), "at": utc_now()}
        store.save_step(record)
        if deviation == "major":
            _mark_active(store, n, "pending")
        return entry


def _mark_active(store: PlanStore, n: int, deviation: str | None) -> None:
    """Note a pending deviation in the in-progress marker, which the Stop hook reads
    without loading the plan (a turn may end while the user's decision is awaited)."""
    active = store.read_active()
    if isinstance(active, dict) and active.get("step") == n:
        rest = {k: v for k, v in active.items() if k != "deviation"}
        store.write_active({**rest, "deviation": deviation} if deviation else rest)


def decide_deviation(store: PlanStore, n: int, approve: bool, by: str,
                     notes: str = "") -> StepRecord:
    """A person's decision on step ``n``'s pending deviation: approve (the revised step
    becomes the step, and work goes on) or reject (the step goes back to pending).
    Raises StepError when none is pending."""
    from maker.executor.state.lifecycle import reset_step

    with store.lock():
        record = store.load().get(n)
        dev = pending_deviation(record)
        if dev is None:
            raise StepError(f"step {n} has no deviation awaiting a decision", n)
        if approve:
            record.meta["deviation"] = dict(dev, status="approved", decided_by=by,
                                            decided_at=utc_now())
            record.meta["revised_task"] = dev.get("revised_task") or record.spec.task_description
            record.meta["orient"] = dict(record.meta.get("orient") or {}, approved_by=by)
            store.save_step(record)
            _mark_active(store, n, None)
            return record
        reset_step(store, n)
        record = store.load().get(n)
        history = list(record.meta.get("revision_notes") or [])
        history.append(notes.strip() or f"the revised step was rejected by {by}: "
                       f"{dev.get('what_changed')}")
        record.meta["revision_notes"] = history
        record.meta["rejected_by"] = by
        store.save_step(record)
        return record


def person_decides(store: PlanStore, n: int, approve: bool, by: str,
                   notes: str = "") -> str | None:
    """A person's approve or reject of step ``n`` when what awaits them is its deviation:
    the decision, recorded, and what the main agent (or the terminal) is told; None when
    no deviation of step ``n`` is pending (the final approval's turn, then)."""
    from maker.executor.rules.instructions import relaunch_instruction

    try:
        if pending_deviation(store.load_step(n)) is None:
            return None
    except MakerError:
        return None
    decide_deviation(store, n, approve, by, notes)
    owner = str((store.read_active() or {}).get("session_id") or "")
    if approve and owner.startswith(ENGINE_SESSIONS):  # (maker's engine ran it: it goes on there)
        return (f"maker: the revised step {n} was approved by {by}; maker's engine goes on "
                f"with it (/maker:step {n} or /maker:run; `maker run` from a terminal). "
                "Launch nothing now.")
    if approve:
        return (f"maker: the revised step {n} was approved by {by}; work on it goes on. "
                f"Next: {relaunch_instruction(n)} (from a terminal: `maker run` or "
                f"/maker:step {n}).")
    return (f"maker: the revision of step {n} was rejected by {by}; the step is back to "
            "pending and nothing was edited. Tell the user so, and end with STEP_REJECTED.")


def deviation_question(n: int, dev: dict[str, Any]) -> dict[str, Any]:
    """The AskUserQuestion input that asks the user to approve step ``n``'s revision."""
    approve, reject = (label.format(n=n) for label in DEVIATION_LABELS)
    return {"questions": [{
        "question": f"{DEVIATION_PREFIX}{n}: {str(dev.get('what_changed'))[:300]} "
                    "Approve the revised step?",
        "header": f"Step {n}"[:12],
        "multiSelect": False,
        "options": [
            {"label": approve, "description": "Work goes on, on the revised step: "
             + str(dev.get("revised_task"))[:200]},
            {"label": reject, "description": "Back to pending; nothing was edited."},
        ]}]}


# -- the brief ---------------------------------------------------------------------------


def orient_section(store: PlanStore, plan: StoredPlan, n: int) -> str:
    """The brief's part on orienting: what code found, and how to record the judgment."""
    record = plan.get(n)
    lines = ["## Orient first (before any edit)", ""]
    revised = record.meta.get("revised_task")
    if revised:
        lines += ["A person approved a revision of this step: do the step as revised "
                  "below, where it differs from the task above.", "", str(revised), ""]
    entry = record.meta.get("orient")
    if pending_deviation(record) is not None:
        lines.append("This step deviates from the plan and awaits a person's decision on the "
                     "revised step: edit nothing; stop now and answer with one line: "
                     "DEVIATION.")
        return "\n".join(lines)
    if isinstance(entry, dict):
        lines.append(f"This attempt's orientation is recorded ({entry.get('deviation')}"
                     + (f": {entry.get('what_changed')}" if entry.get("what_changed") else "")
                     + "). Go on with the step.")
        return "\n".join(lines)
    found = findings(store, plan, n)
    lines += ["Is the step, as written, still right for the project as it is now? Read what "
              "it names (files, functions, commands) and what the steps before it handed "
              "on (above), without editing anything, then record your judgment with Bash:",
              "",
              f"- `maker orient {n} none`: it fits;",
              f"- `maker orient {n} minor --what \"...\"`: small differences you can absorb "
              "(say which; they are noted in the handoff);",
              f"- `maker orient {n} major --what \"...\" --revised \"...\"`: the step as written "
              "no longer fits. Say what changed and give the step's task as it should now "
              "read; a person decides, and you stop (answer with one line: DEVIATION).",
              "", "maker refuses every edit until you have."]
    if found:
        lines += ["", "What maker's code found:"] + [
            f"- {'MAJOR: ' if f.major else ''}{f.text}" for f in found]
        if any(f.major for f in found):
            lines.append("(A finding marked MAJOR makes the deviation major whatever you "
                         "judge: say what it means for this step in --what and --revised.)")
    return "\n".join(lines)
