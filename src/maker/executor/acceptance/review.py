"""The independent review of a large step, recorded by code.

The reviewer subagent's final message ends with ``VERDICT: approve`` or
``VERDICT: changes-needed``; a SubagentStop hook records it here for the step that
awaits approval. Approving a step that needs review then requires a review newer
than its handoff (and, in a headless run, an ``approve`` verdict), and
``maker step reject N --from-review`` sends the reviewer's findings back without any
model-written text on a command line.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from maker.core.bounded import read_regular_file
from maker.core.clock import utc_now
from maker.errors import InputError
from maker.store.atomic import atomic_write
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord

__all__ = ["Review", "findings_for_notes", "latest_review",
           "parse_verdict", "record_review", "review_path"]

_VERDICT = re.compile(r"^\s*VERDICT:\s*(approve|changes-needed)\s*$", re.I | re.M)
_RED = re.compile(r"^\s*[-*]?\s*RED:.*$", re.M)


@dataclass(frozen=True)
class Review:
    step: int
    verdict: str  # "approve", "changes-needed", or "none" when the reviewer gave none
    text: str
    recorded_at: str

    @property
    def approves(self) -> bool:
        return self.verdict == "approve"


def parse_verdict(text: str) -> str:
    found = _VERDICT.findall(text)
    return found[-1].lower() if found else "none"


def review_path(store: PlanStore, step: int) -> Path:
    return store.state_dir / "reviews" / f"step-{step:02d}.json"


def record_review(store: PlanStore, record: StepRecord, text: str) -> Review:
    review = Review(record.number, parse_verdict(text), text, utc_now())
    atomic_write(review_path(store, record.number), json.dumps(asdict(review), indent=2))
    return review


def latest_review(store: PlanStore, record: StepRecord) -> Review | None:
    """The review recorded for this step's current handoff, if any."""
    try:
        data: Any = json.loads(read_regular_file(review_path(store, record.number)))
        review = Review(int(data["step"]), str(data["verdict"]), str(data["text"]),
                        str(data["recorded_at"]))
    except (OSError, ValueError, KeyError, TypeError, InputError):
        return None
    accepted = str(record.meta.get("handoff_accepted_at") or "")
    return review if review.recorded_at >= accepted else None


def findings_for_notes(review: Review) -> str:
    """The reviewer's RED findings (or, without any, its whole answer) as revision notes."""
    red = [line.strip().lstrip("-* ").strip() for line in _RED.findall(review.text)]
    return "\n".join(red) if red else review.text.strip()
