"""A ``/maker:run``'s closing report: its steps, who approved each, the files changed,
the checks run, the time and tokens the client reported, and the proposals that await
the user (a run applies none)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from maker.core.text import clip
from maker.errors import MakerError
from maker.handoff.sweep import sweep_said
from maker.store.run_file import read_run

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StoredPlan

__all__ = ["report", "run_json", "run_line", "run_lines", "spent_said", "step_head",
           "usd_said"]


def step_head(store: PlanStore, n: int) -> str:
    """``step 3 (Its title)``, for a line of the run."""
    try:
        return f"step {n} ({clip(store.load_step(n).title, 60)})"
    except (MakerError, OSError):  # a broken step file: the number alone
        return f"step {n}"


def report(store: PlanStore, plan: StoredPlan, run: dict[str, Any]) -> str:
    """The run's closing report: its steps, who approved them, the files changed, the
    checks run, time and tokens, and the proposals that await the user."""
    run = run or read_run(store)
    steps = run.get("steps") or {}
    lines = [f"maker: the plan is done (run {run.get('id', '?')}). Steps in this run: "
             f"{len(steps)} of {len(plan.steps)}."]
    files: list[str] = []
    checks: set[str] = set()
    tokens, cost, unknown = 0, 0.0, 0
    for key in sorted(steps, key=int)[:40]:
        entry = steps[key]
        n = int(key)
        handoff = store.read_handoff(n) or {}
        changed = [clip(str(f), 120, "its handoff") for f in handoff.get("files_changed") or []]
        files += [f for f in changed if f not in files]
        for item in handoff.get("evidence") or []:
            if isinstance(item, dict) and item.get("command"):
                checks.add(str(item["command"])[:80])
        tokens += int(entry.get("tokens") or 0)
        cost += float(entry.get("cost_usd") or 0)
        unknown += int(entry.get("unknown_costs") or 0)
        spent = entry.get("duration_ms")
        try:  # (as it stands now: approved after its verdict, say)
            record = store.load_step(n)
            status, by = record.status, record.meta.get("approved_by")
        except (MakerError, OSError):  # a broken step file: as the run recorded it
            status, by = entry.get("status", "?"), entry.get("approved_by")
        lines.append(f"- {step_head(store, n)}: {status}, approved by {by or '-'}, "
                     f"{len(changed)} file(s)"
                     + (f", {int(spent) // 1000} s" if spent else "")
                     + (f", {entry['tokens']} tokens" if entry.get("tokens") else "")
                     + (f", {usd_said(entry)}" if "cost_usd" in entry else "")
                     + (f"; sweep: {sweep_said(handoff)}" if sweep_said(handoff) else ""))
    if len(steps) > 40:
        lines.append(f"- … and {len(steps) - 40} more (`maker status`)")
    if files:
        lines.append(f"Files changed: {', '.join(files[:20])}"
                     + (f" and {len(files) - 20} more" if len(files) > 20 else "") + ".")
    if checks:
        lines.append(f"Checks run: {', '.join(sorted(checks)[:5])}.")
    began, ended = run.get("started"), run.get("ended") or time.time()
    if isinstance(began, (int, float)):
        source = "the SDK's results" if run.get("mode") == "engine" else "as the client " \
            "reported them"
        total = usd_said({"cost_usd": cost, "unknown_costs": unknown})
        lines.append(f"Time: {int(ended - began)} s" + (f"; tokens ({source}): {tokens}"
                                                        if tokens else "")
                     + (f"; cost: {total}" if run.get("mode") == "engine" else "") + ".")
    from maker.executor.protocol.sweep import open_proposals

    waiting = open_proposals(store)
    if waiting:
        lines.append("Proposals that await the user (`/maker:proposal accept N` or `drop "
                     "N`; the run applied none):")
        lines += [f"- proposal {p['id']}: {clip(str(p['text']), 200)}" for p in waiting[:10]]
    return "\n".join(lines)


def spent_said(entry: dict[str, Any]) -> str:
    """A step's cost as the run's lines show it ("" when it spent nothing known)."""
    return usd_said(entry) if entry.get("cost_usd") or entry.get("unknown_costs") else ""


def usd_said(entry: dict[str, Any]) -> str:
    """A step's (or the run's) cost: "at least" where a call's cost was not reported."""
    said = f"${float(entry.get('cost_usd') or 0):.4f}"
    return f"at least {said}" if entry.get("unknown_costs") else said


def run_lines(store: PlanStore, plan: StoredPlan) -> list[str]:
    """Where the run stands, for ``maker status`` and a session that starts: step k of
    n, what runs now, what waits for whom, and each step's time and tokens as the client
    reported them. [] when no run has begun, or the last one ended."""
    from maker.executor.acceptance.approval import is_awaiting
    from maker.executor.protocol.orient import pending_deviation

    run = read_run(store)
    if not run or run.get("ended_at"):
        return []
    done = sum(r.status == "complete" for r in plan.steps)
    state = (f"stopped: {run['stopped'].get('why')}; /maker:run goes on from here"
             if isinstance(run.get("stopped"), dict) else "running")
    lines = [f"Run {run.get('id')}: {done} of {len(plan.steps)} steps complete; {state}."]
    now = [f"step {r.number}" for r in plan.steps if r.status == "in-progress"
           and pending_deviation(r) is None]
    waits = [f"step {r.number} (your approval: the run's question on screen answers it)"
             for r in plan.steps if is_awaiting(r)]
    waits += [f"step {r.number} (your decision on its deviation)" for r in plan.steps
              if r.status == "in-progress" and pending_deviation(r) is not None]
    if now:
        lines.append(f"  runs now: {', '.join(now)}")
    if waits:
        lines.append(f"  waits for you: {', '.join(waits)}")
    policy = (run.get("policy") or {}).get("name")
    if policy:
        lines.append(f"  approvals: policy {policy} for the rest of this run (your choice)")
    stretch = run.get("stretch") or {}
    if stretch.get("began") and not stretch.get("ended"):
        lines.append(f"  maker's engine runs the plan in the background (for "
                     f"{int(time.time() - float(stretch['began']))} s)")
    statuses = {str(r.number): r.status for r in plan.steps}
    for key in sorted(run.get("steps") or {}, key=int)[-10:]:
        entry = run["steps"][key]
        spent = [f"{int(entry['duration_ms']) // 1000} s" if entry.get("duration_ms") else "",
                 f"{entry['tokens']} tokens" if entry.get("tokens") else "",
                 spent_said(entry)]
        said = ", ".join(x for x in spent if x)
        # (the plan's status now: an entry is written when a verdict comes, not approved)
        lines.append(f"  step {key}: {statuses.get(key) or entry.get('status') or 'running'}"
                     + (f" ({said})" if said else ""))
    return lines


def run_json(store: PlanStore) -> dict[str, Any] | None:
    """The run that has not ended, as ``maker status --json`` shows it (its seal left
    out), or None."""
    run = read_run(store)
    if not run or run.get("ended_at"):
        return None
    return {k: v for k, v in run.items() if k != "seal"}


def run_line(store: PlanStore, plan: StoredPlan) -> str:
    """The run in one line, for Claude Code's status line (``maker status --line``): k of
    n, what runs now, what waits for you, the time since it began and what its steps
    spent; "" when no run goes on."""
    from maker.executor.acceptance.approval import is_awaiting

    run = read_run(store)
    if not run or run.get("ended_at"):
        return ""
    done = sum(r.status == "complete" for r in plan.steps)
    parts = [f"maker: {done}/{len(plan.steps)}"]
    if isinstance(run.get("stopped"), dict):
        parts.append("stopped (/maker:run goes on)")
    runs = [str(r.number) for r in plan.steps if r.status == "in-progress"]
    waits = [str(r.number) for r in plan.steps if is_awaiting(r)]
    if runs:
        parts.append(f"step {', '.join(runs)} runs")
    if waits:
        parts.append(f"step {', '.join(waits)} waits for you")
    began = run.get("started")
    if isinstance(began, (int, float)):
        minutes, seconds = divmod(max(0, int(time.time() - began)), 60)
        parts.append(f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s")
    steps = [e for e in (run.get("steps") or {}).values() if isinstance(e, dict)]
    tokens = sum(int(e.get("tokens") or 0) for e in steps)
    cost = sum(float(e.get("cost_usd") or 0) for e in steps)
    if tokens or cost:
        parts.append(f"{tokens:,} tokens, ${cost:.2f}")
    return " · ".join(parts)
