"""Review routing for a step whose complete handoff was accepted: whether the independent
review is due and why, and who decides the step. One read of the step for every front
end and every reader (the gate's acceptance, the verdict, ``maker step outcome``,
``maker step approve``, ``maker run``); the rules themselves are
``maker.executor.rules.step_rules``'.

- The files are the ones maker measured (``maker.handoff.measured``); without git, the
  executor's claim, and :attr:`ReviewNeed.measured` says so.
- The boundaries and the review loop's bound are a person's settings
  (``plans/settings.yaml``: ``boundaries``, ``max_review_attempts``).
- ``STEP_SKIP_REVIEW=1``, set for the process that accepted the handoff, is recorded
  with the step (``review_skipped``), so the hook's and the terminal's later reads
  agree: that step gets no review and goes to a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from maker.executor.rules.step_rules import (
    SKIP_REVIEW_VARIABLE,
    approval_route,
    review_reasons,
    skip_review,
)
from maker.handoff.measured import (
    BASE_FIELD,
    MEASURE_KEY,
    MEASURED_FIELD,
    NAMED_FIELDS,
    step_files,
)
from maker.handoff.weak_tests import is_test_file
from maker.store.settings import load_settings
from maker.tools.registry import READ_ONLY_TOOLS

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["ROUNDS_META", "SKIPPED_META", "ReviewNeed", "review_need", "review_prompt",
           "review_request", "review_rounds", "skip_meta"]

SKIPPED_META = "review_skipped"  # the step's front matter: STEP_SKIP_REVIEW=1 was set
ROUNDS_META = "review_rounds"  # the step's front matter: RED findings sent it back so often


@dataclass(frozen=True)
class ReviewNeed:
    """What decides step ``step``'s review and approval."""

    step: int
    policy: str
    files: list[str]
    measured: bool  # the files were measured by maker (else: the executor's claim)
    reasons: list[str]  # why the review is due ([]: it is not)
    skipped: bool  # STEP_SKIP_REVIEW=1: no reviewer, a person decides
    route: str  # step_rules.approval_route: "policy", "reviewer" or "person"
    max_rounds: int  # max_review_attempts

    @property
    def wants_review(self) -> bool:
        """The reviewer is to be launched (unless a review is recorded already): a large
        step, or every step under the ``reviewer`` policy; never when skipped."""
        return not self.skipped and (bool(self.reasons) or self.route == "reviewer")

    def why(self) -> str:
        """Why the review is due, in words for the user, the verdict and the reviewer."""
        if self.reasons:
            return "; ".join(self.reasons)
        if self.route == "reviewer":
            return "the `reviewer` approval policy has every step reviewed"
        return "no review is required"

    def files_said(self) -> str:
        """How many files changed, and who counted them."""
        how = "measured by maker" if self.measured else \
            "as the executor claims them: maker could not measure (no git)"
        return f"{len(self.files)} file(s) changed, {how}"


def skip_meta() -> dict[str, Any]:
    """What a handoff accepted now records of ``STEP_SKIP_REVIEW`` ({} when unset)."""
    return {SKIPPED_META: f"{SKIP_REVIEW_VARIABLE}=1"} if skip_review() else {}


def review_rounds(record: StepRecord) -> int:
    """How often RED review findings sent step ``record`` back to implementation."""
    value = record.meta.get(ROUNDS_META)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def review_need(store: PlanStore, record: StepRecord, policy: str,
                handoff: dict[str, Any] | None = None) -> ReviewNeed:
    """Step ``record``'s review facts under approval policy ``policy`` (its accepted
    handoff: ``handoff``, read when not given). Raises PlanFileError for a broken
    ``plans/settings.yaml``."""
    if handoff is None:
        handoff = store.read_handoff(record.number) or {}
    settings = load_settings(store.root)
    files = step_files(handoff)
    reasons = review_reasons(files, settings.boundaries)
    measured = isinstance(handoff.get(MEASURED_FIELD), list)
    skipped = bool(record.meta.get(SKIPPED_META)) or skip_review()
    route = approval_route(policy, files, settings.boundaries, skipped)
    if review_rounds(record):  # (its fix, whatever its size, is what the findings asked)
        reasons.append("the reviewer sent it back before: its fix is reviewed again")
        route = "person" if skipped or route == "person" else "reviewer"
    if measured and not handoff.get(MEASURED_FIELD) and _may_write(record) and \
            record.spec.writes != []:
        # A step whose tools can write, and which changed nothing: its summary is the
        # only word for what it did, and no policy takes it on that word (the person's
        # question says NO FILE CHANGED: maker.handoff.measured.files_note).
        route = "person"
    if any(handoff.get(field) for field in NAMED_FIELDS) or (
            handoff.get(BASE_FIELD) and not all(map(is_test_file, files))):
        route = "person"  # (stale inputs, code run later, a nested repository, weak tests,
        #                  a code change whose tests pass without it)
    start = record.meta.get(MEASURE_KEY)
    if isinstance(start, str) and start and not measured:
        # The start was measured and the end could not be (a repository broken or hidden
        # mid-step): the claim is not trusted with the decision.
        reasons.append("maker measured the step's start but could not measure its end, "
                       "so the files it changed are only the executor's claim")
        route = "person"
    return ReviewNeed(record.number, policy, files, measured, reasons, skipped, route,
                      settings.max_review_attempts)


def _may_write(record: StepRecord) -> bool:
    """Whether the step's tools (primary or fallback) can change a file."""
    return any(tool.split("(", 1)[0] not in READ_ONLY_TOOLS
               for tool in [*record.spec.primary_tools, *record.spec.fallback_tools])


def review_request(store: PlanStore, need: ReviewNeed) -> str:
    """The reviewer's prompt in the plugin, one line: the step, and why it is reviewed."""
    where = store.handoff_path(need.step)
    try:
        where = where.relative_to(store.project)
    except ValueError:
        pass
    return (f"Review maker step {need.step}: its brief is `maker context {need.step}`, its "
            f"handoff {where.as_posix()}. Why a review is required: {need.why()} "
            f"({need.files_said()}).")


def review_prompt(store: PlanStore, record: StepRecord, need: ReviewNeed) -> str:
    """What the independent reviewer reads in ``maker run``: the step, why it is
    reviewed, and its accepted handoff with the files maker measured."""
    handoff = store.read_handoff(record.number) or {}
    shown = {k: handoff.get(k) for k in ("status", "summary", "files_changed",
                                         MEASURED_FIELD, "output", "evidence", "decisions")
             if k in handoff}
    return (f"Review step {record.number} of a maker plan: {record.title}\n\n"
            f"Why a review is required: {need.why()} ({need.files_said()}).\n\n"
            f"{record.spec.task_description.strip()}\n\nIts accepted handoff:\n\n```yaml\n"
            f"{yaml.safe_dump(shown, sort_keys=False, allow_unicode=True)}```\n")
