"""The independent review of a large step, recorded by code.

The reviewer subagent's final message ends with ``VERDICT: approve`` or
``VERDICT: changes-needed``; a SubagentStop hook records it here for the step that
awaits approval. Approving a step that needs review then requires a review newer
than its handoff (and, in a headless run, an ``approve`` verdict), and
``maker step reject N --from-review`` sends the reviewer's findings back without any
model-written text on a command line.

After the VERDICT line the reviewer may add seed 002's context fields
(docs/architecture.md#the-seeds), as YAML (:func:`read_review`). When maker takes the review
(``review_loop.take_review``), its
``discoveries``, ``decisions`` and ``blockers`` go to NOTES.md, tagged with the reviewed
step and its attempt, as an accepted handoff's are; its ``summary`` and
``for_next_agent`` stay with the review, and ``for_next_agent`` joins the findings when
the review sends the step back. A review whose fields are malformed is refused
(nothing recorded) and the reviewer answers again, within ``REVIEW_ANSWERS``
(``maker.executor.rules.step_rules``); the last answer is taken for its verdict, its
malformed fields left out and named (``Review.ignored``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from maker.core.agent_context import CONTEXT_OUTPUT_FIELDS, AgentContext, kind_of, read_context
from maker.core.bounded import read_regular_file
from maker.core.clock import utc_now
from maker.errors import InputError, Problem, YAMLCleanError
from maker.planner.parser import unknown_key_problems
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["Review", "ReviewAnswer", "findings_for_notes", "latest_review", "parse_verdict",
           "read_review", "record_review", "refused_review", "review_path"]

_VERDICT = re.compile(r"^\s*VERDICT:\s*(approve|changes-needed)\s*$", re.I | re.M)
_RED = re.compile(r"^\s*[-*]?\s*RED:.*$", re.M)
_FIX = ("after the VERDICT line write nothing, or only a YAML mapping of the context "
        "fields: `summary:`, `discoveries:`, `decisions:`, `blockers:`, `for_next_agent:`")


@dataclass(frozen=True)
class Review:
    step: int
    verdict: str  # "approve", "changes-needed", or "none" when the reviewer gave none
    text: str
    recorded_at: str
    context: AgentContext = field(default_factory=AgentContext)
    ignored: list[str] = field(default_factory=list)  # its context's problems, left out

    @property
    def approves(self) -> bool:
        return self.verdict == "approve"


@dataclass(frozen=True)
class ReviewAnswer:
    """A reviewer's answer read: its verdict, its context fields, and what is wrong with
    them (``problems``: the fields are then left out)."""

    verdict: str
    context: AgentContext
    problems: list[Problem]


def parse_verdict(text: str) -> str:
    found = _VERDICT.findall(text)
    return found[-1].lower() if found else "none"


def read_review(text: str) -> ReviewAnswer:
    """The verdict and the context fields of a reviewer's answer, with every problem of
    the fields (the text after the last VERDICT line; none there, none read)."""
    verdict = parse_verdict(text)
    last = list(_VERDICT.finditer(text))
    rest = text[last[-1].end():].strip() if last else ""
    if not rest:
        return ReviewAnswer(verdict, AgentContext(), [])
    try:
        data, _ = YAMLCleaner().clean(rest)
    except YAMLCleanError as exc:
        return ReviewAnswer(verdict, AgentContext(), [Problem(
            "context", f"the text after the VERDICT line is not YAML: {exc}", fix=_FIX)])
    if not isinstance(data, dict):
        return ReviewAnswer(verdict, AgentContext(), [Problem(
            "context", f"the text after the VERDICT line must be a YAML mapping, got "
                       f"{kind_of(data)}", fix=_FIX)])
    context, problems = read_context(data)
    problems = unknown_key_problems(data, tuple(CONTEXT_OUTPUT_FIELDS),
                                    what="review's context") + problems
    return ReviewAnswer(verdict, AgentContext() if problems else context, problems)


def refused_review(problems: list[Problem], attempt: int, bound: int) -> str:
    """What the reviewer is told when maker refuses its answer: every problem."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (f"maker refused your review (answer {attempt} of {bound}): the context fields "
            "after your VERDICT line are malformed, and nothing was recorded. Answer again "
            "with the whole review (findings, VERDICT line, then the fields corrected, or "
            f"none):\n{listed}")


def review_path(store: PlanStore, step: int) -> Path:
    return store.state_dir / "reviews" / f"step-{step:02d}.json"


def record_review(store: PlanStore, record: StepRecord, text: str) -> Review:
    """Record the review of step ``record`` (awaiting approval); its context fields are
    kept with it, or, malformed, left out and named in ``Review.ignored``. (Its facts go
    to NOTES.md with it through ``review_loop.take_review``.)"""
    answer = read_review(text)
    review = Review(record.number, answer.verdict, text, utc_now(), answer.context,
                    [str(p) for p in answer.problems])
    atomic_write(review_path(store, record.number), json.dumps(asdict(review), indent=2))
    return review


def latest_review(store: PlanStore, record: StepRecord) -> Review | None:
    """The review recorded for this step's current handoff, if any."""
    try:
        data: Any = json.loads(read_regular_file(review_path(store, record.number)))
        kept = data.get("context")
        context = read_context(kept)[0] if isinstance(kept, dict) else AgentContext()
        ignored = data.get("ignored")
        review = Review(int(data["step"]), str(data["verdict"]), str(data["text"]),
                        str(data["recorded_at"]), context,
                        [str(p) for p in ignored] if isinstance(ignored, list) else [])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InputError):
        return None
    accepted = str(record.meta.get("handoff_accepted_at") or "")
    return review if review.recorded_at >= accepted else None


def findings_for_notes(review: Review) -> str:
    """The reviewer's RED findings (or, without any, its whole answer) as revision notes,
    and its ``for_next_agent``."""
    red = [line.strip().lstrip("-* ").strip() for line in _RED.findall(review.text)]
    findings = "\n".join(red) if red else review.text.strip()
    note = review.context.for_next_agent.strip()
    return f"{findings}\nThe reviewer's note for you: {note}" if note and red else findings
