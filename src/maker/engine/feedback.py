"""What a headless step's session is told about its previous answer: the gate's refusal,
or the verification that failed (``maker.engine.step_run``'s loops)."""

from __future__ import annotations

from maker.errors import Problem
from maker.verify.result import VerificationRun

__all__ = ["failure", "fix_feedback", "refusal_feedback"]

_ANSWER_CHARS = 4000  # of a previous answer quoted back to the next session


def _quoted(answer: str) -> str:
    text = answer.strip()
    if len(text) > _ANSWER_CHARS:
        text = text[:_ANSWER_CHARS] + "\n… (cut)"
    return f"Your previous answer:\n\n```\n{text}\n```"


def refusal_feedback(problems: list[Problem], answer: str, attempt: int, limit: int) -> str:
    listed = "\n".join(f"- {p}" for p in problems)
    return (f"\n\n## maker refused your previous handoff (answer {attempt} of {limit})\n\n"
            f"Nothing was accepted. {_quoted(answer)}\n\nFix every problem below, then "
            f"answer again with the whole corrected handoff YAML as your final message:\n"
            f"{listed}\n")


def failure(run: VerificationRun) -> str:
    bad = run.failed_command
    return f"`{bad.command}` exited with {bad.exit_code}" if bad is not None else run.status


def fix_feedback(run: VerificationRun, answer: str, attempt: int, limit: int) -> str:
    bad = run.failed_command
    tail = (bad.output_tail or "").strip()[-1500:] if bad is not None else ""
    shown = f"\n\nIts output ends with:\n\n```\n{tail}\n```" if tail else ""
    return (f"\n\n## Verification failed (fix attempt {attempt} of {limit})\n\nYou answered "
            f"complete, and maker ran the project's verification itself: {failure(run)}."
            f"{shown}\n\n{_quoted(answer)}\n\nThe working tree holds your previous edits. "
            "Fix what fails, then answer with the whole handoff YAML again.\n")
