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
- **Fixes** (:data:`MAX_FIX_ATTEMPTS`, seed 004's ``max_fix_attempts``; the rule is
  ``maker.verify.fixes.fix_budget_spent``, below the gate that reads it): in one run of
  a step, each of the first ``max_fix_attempts`` failing verifications is followed by a
  fix; the next one spends the budget (0: the first failure does). The count is
  ``maker verify``'s, kept in the step's sealed evidence: the engine sends a failure
  back to its session until then; in the plugin the executor runs ``maker verify
  --step N`` itself, which then tells it to stop and hand back ``failed``, and the gate
  refuses a ``complete`` handoff from then on.
- **Review** (:func:`review_required`, :func:`approval_route`): a step that changed
  :data:`REVIEW_THRESHOLD` files or more is reviewed by the independent reviewer before
  anyone approves it; the approval policy a person set says who decides then.
  :data:`MAX_REVIEW_ATTEMPTS` reviewer rejections of one step stop ``maker run``.

A person sets the bounds (``max_fix_attempts``, ``max_review_attempts``,
``gate_attempts``) and ``maker run``'s ``session_timeout`` in ``plans/settings.yaml``
(:func:`settings`, read on use by both front ends); the constants here are the defaults.

The module stays light (no ``typing``, no ``dataclasses``): the Stop hook reads its
bound here on every stop.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from maker.store.settings import Settings

__all__ = ["GATE_ATTEMPTS", "MAX_FIX_ATTEMPTS", "MAX_REVIEW_ATTEMPTS", "REVIEW_THRESHOLD",
           "STOP_REMINDERS", "approval_route", "review_required", "settings"]

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


# -- a person's tunables ----------------------------------------------------------------


def settings(plans_root: Path) -> Settings:
    """The bounds a person set for the plan in ``plans_root`` (``plans/settings.yaml``;
    these defaults when there is none). Raises PlanFileError naming every broken key."""
    from maker.store.settings import load_settings  # (off the Stop hook's path)

    return load_settings(plans_root)

