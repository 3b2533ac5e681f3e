"""maker's seal of a step's approval, kept in the step's front matter (``approval_seal``)."""

from __future__ import annotations

import hashlib
from typing import Any

from maker.core.bounded import read_regular_file
from maker.errors import MakerError
from maker.store.records import StepRecord
from maker.store.seal import SEAL_FIELD, check, seal

__all__ = ["approval_sealed", "seal_approval"]

# What an approval's seal covers: who approved which step of which plan, and when.
_APPROVAL = ("approved_by", "approved_at")


def _approval_body(record: StepRecord, created_at: str) -> dict[str, Any]:
    """What an approval's seal covers: the plan, the step, this attempt of it (when it
    started, when its handoff was accepted, the accepted handoff's bytes), and who
    approved it when. An approval replayed onto another attempt no longer matches."""
    handoff = record.path.parent.parent / "handoffs" / record.path.name
    try:
        digest = hashlib.sha256(read_regular_file(handoff)).hexdigest()
    except (OSError, MakerError):
        digest = ""
    return {"plan": created_at, "step": record.number, "handoff_sha256": digest,
            **{k: str(record.meta.get(k) or "") for k in
               (*_APPROVAL, "started_at", "handoff_accepted_at")}}


def seal_approval(record: StepRecord, created_at: str) -> None:
    """Seal ``record``'s approval (``approved_by``, ``approved_at``) into its meta."""
    record.meta["approval_seal"] = seal(_approval_body(record, created_at))[SEAL_FIELD]


def approval_sealed(record: StepRecord, created_at: str) -> bool:
    """Whether ``record`` carries maker's seal of its approval (see ``seal_approval``)."""
    if not record.meta.get("approved_by"):
        return False
    return check({**_approval_body(record, created_at),
                  SEAL_FIELD: record.meta.get("approval_seal")})
