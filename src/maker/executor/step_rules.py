"""The rules of one step, each written once: ``/maker:step`` (the hooks) and ``maker run``
(the engine) both apply them from here, and ``tests/unit/test_step_rules.py`` runs the
same step through both to show it.

- **Votes**: how many agreeing answers decide a step is
  ``maker.executor.vote_rules.step_votes``.
- **The gate's bound** (:data:`GATE_ATTEMPTS`): the answers the gate may refuse for one
  run of a step; the last refusal fails the step. The hooks count a subagent's refused
  handoffs (``maker.executor.attempts``), the engine its sessions' answers.
- **Reminders** (:data:`STOP_REMINDERS`, the plugin only): a main-agent turn that ends
  while its step has no accepted handoff is sent back this many times; the next stop
  fails the step. Both bounds stay well under Claude Code's own cap of 8 consecutive
  blocks.
- **Fixes** (:data:`MAX_FIX_ATTEMPTS`, seed 004's ``max_fix_attempts``): a complete
  answer whose verification fails is sent back to its session this many times (the
  engine; in the plugin the executor runs the verification itself, and the gate
  refuses a handoff without its evidence).
- **Review** (:func:`review_required`, :func:`approval_route`): a step that changed
  :data:`REVIEW_THRESHOLD` files or more is reviewed by the independent reviewer before
  anyone approves it; the approval policy a person set says who decides then.
  :data:`MAX_REVIEW_ATTEMPTS` reviewer rejections of one step stop ``maker run``.

The module stays light (no ``typing``, no ``dataclasses``): the Stop hook reads its
bound here on every stop.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["GATE_ATTEMPTS", "MAX_FIX_ATTEMPTS", "MAX_REVIEW_ATTEMPTS", "REVIEW_THRESHOLD",
           "STOP_REMINDERS", "approval_route", "review_required"]

GATE_ATTEMPTS = 3
STOP_REMINDERS = 3
MAX_FIX_ATTEMPTS = 2
MAX_REVIEW_ATTEMPTS = 1
REVIEW_THRESHOLD = 5  # seed 004: an independent review when a step touched this many files


def review_required(files_changed: Iterable[object]) -> bool:
    """Whether a step that changed ``files_changed`` needs the independent review before
    anyone approves it."""
    return len(list(files_changed)) >= REVIEW_THRESHOLD


def approval_route(policy: str, files_changed: Iterable[object]) -> str:
    """Who decides a step whose complete handoff was accepted, under approval policy
    ``policy`` (``maker.executor.approval``):

    - ``"policy"``: the policy approves it now (``auto``, and the step is small);
    - ``"reviewer"``: the reviewer's verdict approves or rejects it (``reviewer``; or
      ``auto`` and the step is large);
    - ``"person"``: a person does (``never``), after the review if the step is large.
    """
    if policy == "reviewer":
        return "reviewer"
    if policy == "auto":
        return "reviewer" if review_required(files_changed) else "policy"
    return "person"
