"""Loose validation of one agent's answer (seed 000, docs/architecture.md#the-seeds; and the MAKER
paper's red flags).

The seed's rules: an answer is flagged when the agent reported an error or when its
output is not a mapping. A mapping with extra keys, or with an ``error`` key, passes:
the check is deliberately loose, the handoff gate checks the schema.

The MAKER paper adds that the *shape* of a bad answer predicts its being wrong: an
answer that runs far too long, or that needed repair before it parsed, is better
discarded and retried than trusted. Both are flagged here: length always (``max_chars``
of raw response), repair only in strict mode.
"""

from __future__ import annotations

from maker.core.models import AgentResult, TaskConfig

__all__ = ["DEFAULT_MAX_CHARS", "RedFlagger"]

DEFAULT_MAX_CHARS = 20_000


class RedFlagger:
    """Decides whether an ``AgentResult`` should be discarded, and says why.

    ``max_chars`` caps the raw response's length (None: no cap). ``strict`` also flags
    an answer the YAML cleaner had to repair.
    """

    def __init__(self, max_chars: int | None = DEFAULT_MAX_CHARS, strict: bool = False) -> None:
        if max_chars is not None and max_chars <= 0:
            raise ValueError(f"max_chars must be positive or None, not {max_chars}")
        self.max_chars = max_chars
        self.strict = strict

    @classmethod
    def from_config(cls, config: TaskConfig) -> RedFlagger:
        """A flagger with the task's ``max_output_chars`` and ``strict`` settings."""
        return cls(max_chars=config.max_output_chars, strict=config.strict)

    def check(self, result: AgentResult) -> bool:
        """True if the result should be discarded (red-flagged)."""
        flagged, _ = self.check_with_reason(result)
        return flagged

    def check_with_reason(self, result: AgentResult) -> tuple[bool, str]:
        """``(flagged, reason)``: the first reason found, or ``(False, "")``."""
        reasons = self.check_all(result)
        return (True, reasons[0]) if reasons else (False, "")

    def check_all(self, result: AgentResult) -> list[str]:
        """Every reason to discard the result, most fundamental first ([] if none)."""
        reasons: list[str] = []
        if result.error:
            reasons.append(f"Agent error: {result.error}")
        if not isinstance(result.output, dict):
            reasons.append(f"Output is not a dict (got {type(result.output).__name__}): "
                           "the answer must be one YAML mapping of `key: value` lines")
        raw_len = len(result.raw_response or "")
        if self.max_chars is not None and raw_len > self.max_chars:
            reasons.append(f"Answer too long: {raw_len} characters, more than the "
                           f"{self.max_chars} allowed; a long answer is usually a confused "
                           "one: answer with the YAML only, and keep it short")
        if self.strict and result.was_repaired:
            reasons.append("Answer needed repair before it parsed as YAML (strict mode): "
                           "send the YAML only, with no code fences, prose or tabs")
        return reasons
