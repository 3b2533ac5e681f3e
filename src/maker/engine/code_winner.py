"""The winner of a vote on a step's code, kept until the step lands.

``CodeVote.keep`` makes the winner's worktree the step's own (its front matter names it)
and, in the same transaction of the plan lock, keeps the winner's answer and the vote's
record beside it (:func:`save`: ``plans/.maker/votes/step-N-won.json``). A run killed
after that, before the step landed, leaves the step in progress in that worktree: the
next run goes on from the winner (:func:`kept_winner`: verified there, landed, through
the gate with the vote's record), as a step run beside others goes on in its worktree,
and draws no new vote. Where it cannot (the file is gone or names another worktree, the
worktree is gone or holds no work, or the step landed), the step votes again: the vote's
start removes the old samples' worktrees, and first makes the step's front matter forget
the one it names among them (:func:`forget`, its work kept in ``unlanded``), so that
nothing names a folder that is gone.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from maker.core.models import AgentResult
from maker.errors import WorktreeError, YAMLCleanError
from maker.executor.rules.vote_rules import VoteRecord
from maker.executor.state.kept_work import kept
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.workspace import BASE_KEY, READY_KEY, WORKTREE_KEY, worktree_of
from maker.tools.git import worktrees
from maker.yaml_cleaner.cleaner import YAMLCleaner
from maker.yaml_cleaner.dump import dump_yaml

__all__ = ["forget", "kept_winner", "save", "with_files"]


def _won(store: PlanStore, n: int) -> Path:
    return store.state_dir / "votes" / f"step-{n}-won.json"


def save(store: PlanStore, n: int, worktree: str, result: AgentResult,
         record: VoteRecord) -> None:
    """Keep step ``n``'s winner: its ``worktree`` (relative to the plans folder), its
    answer and the vote's record. Call under the plan lock, in the transaction that
    names the worktree in the step's front matter."""
    atomic_write(_won(store, n), json.dumps({
        "worktree": worktree, "answer": result.raw_response,
        "session_id": result.session_id, "record": record.to_dict()}, default=str))


def kept_winner(store: PlanStore, record: StepRecord) -> tuple[AgentResult, VoteRecord] | None:
    """The winner a killed run kept for step ``record`` (its answer, the vote's record),
    where the step is still in the worktree it names and that worktree holds work; else
    None (the step votes again)."""
    folder, base = worktree_of(store, record), record.meta.get("measured_from")
    try:
        data = json.loads(_won(store, record.number).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or folder is None or not isinstance(base, str) or \
            data.get("worktree") != record.meta.get(WORKTREE_KEY) or \
            not worktrees.is_worktree(folder):
        return None
    try:
        end = worktrees.snapshot(folder)
        work = worktrees.changes(folder, base, end) if end else None
        output, _ = YAMLCleaner().clean_mapping(str(data.get("answer") or ""))
    except (WorktreeError, YAMLCleanError):
        return None
    if not work:
        return None  # (made again empty, or never written: nothing of the winner there)
    session = data.get("session_id")
    return (AgentResult(output=output, raw_response=str(data["answer"]),
                        session_id=session if isinstance(session, str) else None),
            VoteRecord.from_dict(data.get("record")))


def forget(store: PlanStore, n: int, removing: Sequence[Path]) -> None:
    """Before a new vote of step ``n`` removes ``removing`` (a killed run's samples): the
    kept winner's answer goes, and where the step's front matter names one of them, it
    names it no more (its work kept in ``unlanded`` first). Call under the plan lock."""
    _won(store, n).unlink(missing_ok=True)
    record = store.load_step(n)
    folder = worktree_of(store, record)
    if folder is None or folder.name not in {p.name for p in removing}:
        return
    kept(store, record, folder)  # (None: git cannot read it; it goes all the same)
    for key in (WORKTREE_KEY, BASE_KEY, READY_KEY):
        record.meta.pop(key, None)
    store.save_step(record)


def with_files(result: AgentResult, files: Sequence[str]) -> AgentResult:
    """``result``, its handoff's ``files_changed`` naming ``files`` too (the probe's
    tests that land with it: the gate measures every file the step changed)."""
    if not files:
        return result
    try:
        data, _ = YAMLCleaner().clean_mapping(result.raw_response)
    except YAMLCleanError:
        return result  # (measured before: a winner's handoff is a complete one)
    claimed = data.get("files_changed")
    claimed = list(claimed) if isinstance(claimed, list) else []
    data["files_changed"] = claimed + [f for f in files if f not in claimed]
    return dataclasses.replace(result, output=data, raw_response=dump_yaml(data))
