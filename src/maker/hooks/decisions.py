"""A person's decisions, taken only from what the model cannot produce.

- ``/maker:approve N``, ``/maker:reject N <notes>``, ``/maker:policy NAME`` typed by the
  user: the UserPromptSubmit hook sees the raw prompt before the model does, and
  records the decision itself. (The commands set ``disable-model-invocation``, so the
  model cannot run them as a tool.) The notes are data from the prompt, never a
  command line.
- The user's answer to maker's approval question (AskUserQuestion), as the client
  reports it to the PostToolUse hook. A question the model sends with answers already
  filled in is refused by the PreToolUse hook: the answers are the user's to give.

Each returns the text the main agent is told (``additionalContext``).
"""

from __future__ import annotations

import re
from typing import Any

from maker.errors import MakerError
from maker.executor.acceptance.approval import (
    APPROVE_LABEL,
    APPROVE_REST_LABEL,
    QUESTION_PREFIX,
    REJECT_LABEL,
    approve_step,
    is_awaiting,
    read_policy,
    reject_step,
    set_policy,
)
from maker.executor.protocol.orient import (
    DEVIATION_LABELS,
    DEVIATION_PREFIX,
    pending_deviation,
    person_decides,
)
from maker.executor.rules.instructions import decide_hint
from maker.executor.state.run import choose_policy
from maker.executor.verdicts.blocked import BLOCKED_LABELS, BLOCKED_PREFIX, person_starts
from maker.executor.verdicts.revision import run_again
from maker.store.plan_store import PlanStore

__all__ = ["answer_decision", "asks_makers_question", "prefilled_answer", "prompt_decision",
           "stale_question"]

_NUMBER = re.compile(r"\A#?(\d{1,6})\b[:.]?\s*(.*)\Z", re.S)


def prompt_decision(store: PlanStore, command: str, arguments: str, session_id: str = "",
                    prompt_id: str = "") -> str:
    """Carry out ``/maker:<command> <arguments>`` typed by the user; what to tell them."""
    try:
        if command == "policy":
            name = arguments.strip().lower()
            if not name:
                return f"maker: the approval policy is {read_policy(store).describe()}."
            policy = set_policy(store, name, "user (typed /maker:policy)")
            return f"maker: approval policy set to {policy.describe()}."
        if command == "proposal":
            return _proposal(store, arguments)
        m = _NUMBER.match(arguments.strip())
        if not m:
            return (f"maker: `/maker:{command}` needs a step number first, as in "
                    f"`/maker:{command} 2`" + (" what to change" if command == "reject"
                                                else "") + "; nothing was recorded.")
        n, notes = int(m.group(1)), m.group(2).strip()
        said = person_decides(store, n, command == "approve",
                              f"user (typed /maker:{command})", notes)
        if said is not None:
            return said
        if command == "approve":
            record = approve_step(store, n, "user (typed /maker:approve)")
            return (f"maker: the user approved step {n} ({record.title}); it is complete. "
                    "Tell them so, and end with STEP_COMPLETE.")
        result = reject_step(store, n, notes, by="user (typed /maker:reject)")
        if notes:
            return run_again(store, n, result.notes, "the user", session_id, prompt_id)
        return (f"maker: the user rejected step {n}; it is back to pending with their "
                f"revision notes: {result.notes!r}. Tell them so, and end with "
                "STEP_REJECTED.")
    except MakerError as exc:
        return f"maker: `/maker:{command}` was not recorded: {exc}"


def _proposal(store: PlanStore, arguments: str) -> str:
    """``/maker:proposal accept|drop N`` typed by the user."""
    from maker.executor.protocol.sweep import decide_proposal

    m = re.fullmatch(r"\s*(accept|drop)\s+#?(\d{1,6})\s*", arguments)
    if not m:
        return ("maker: `/maker:proposal` needs `accept N` or `drop N` (N: the proposal's "
                "number, as `maker status` lists it); nothing was recorded.")
    found = decide_proposal(store, int(m.group(2)), m.group(1) == "accept",
                            "user (typed /maker:proposal)")
    kept = (" It is now a decision in NOTES.md, which every later step reads."
            if found["status"] == "accepted" else "")
    return (f"maker: the user {found['status']} proposal {m.group(2)} ({found['text']})."
            f"{kept} Tell them so.")


def _answers(data: Any) -> dict[str, str]:
    """The question → answer mapping in an AskUserQuestion input or response."""
    if isinstance(data, dict):
        answers = data.get("answers")
        if isinstance(answers, dict):
            return {str(k): str(v) for k, v in answers.items()}
    return {}


def _maker_questions(tool_input: Any) -> dict[str, int]:
    """maker's approval questions in an AskUserQuestion input, by text → step."""
    out: dict[str, int] = {}
    questions = tool_input.get("questions") if isinstance(tool_input, dict) else None
    for q in questions if isinstance(questions, list) else []:
        text = q.get("question") if isinstance(q, dict) else None
        for prefix in (QUESTION_PREFIX, DEVIATION_PREFIX, BLOCKED_PREFIX):
            if isinstance(text, str) and text.startswith(prefix):
                m = re.match(r"\d+", text[len(prefix):])
                if m:
                    out[text] = int(m.group())
    return out


def asks_makers_question(tool_input: Any) -> bool:
    """Whether an AskUserQuestion input asks one of maker's questions."""
    return bool(_maker_questions(tool_input))


def prefilled_answer(tool_input: Any) -> str | None:
    """Why an AskUserQuestion call must be refused: maker's question, answered by the
    model itself. None when it is fine."""
    asked = _maker_questions(tool_input)
    if asked and set(asked) & set(_answers(tool_input)):
        return ("maker: the answer to an approval question is the user's to give; ask "
                "without `answers`.")
    return None


def stale_question(store: PlanStore, tool_input: Any) -> str | None:
    """Why maker's question in an AskUserQuestion call must not be asked: the step no
    longer awaits what it asks (an older ``Next:`` line, re-sent after an interrupted
    turn, say: the newest one wins). None when every question still holds."""
    for question, n in _maker_questions(tool_input).items():
        try:
            record = store.load_step(n)
        except MakerError:
            continue  # (a step that cannot be read: the answer's hook says why)
        if question.startswith(QUESTION_PREFIX) and not is_awaiting(record):
            now = record.status
        elif question.startswith(DEVIATION_PREFIX) and pending_deviation(record) is None:
            now = f"{record.status}, with no deviation to decide"
        else:
            continue
        return (f"maker: this question is out of date: step {n} is {now} now, so there is "
                "nothing to ask about it. Follow maker's newest `Next:` line only, or end "
                "your turn in a sentence.")
    return None


def answer_decision(store: PlanStore, tool_input: Any, tool_response: Any,
                    session_id: str = "", prompt_id: str = "") -> str | None:
    """Record the user's answer to one of maker's questions (approve a step, approve its
    revision, start a blocked step); None if it was not one."""
    asked = _maker_questions(tool_input)
    if not asked:
        return None
    answers = _answers(tool_response) or _answers(tool_input)
    told: list[str] = []
    for question, n in asked.items():
        answer = answers.get(question, "").strip()
        if not answer:
            told.append(f"maker: no answer to the approval of step {n} was reported; it "
                        f"still awaits approval: {decide_hint(n)}.")
            continue
        try:
            if question.startswith(BLOCKED_PREFIX):
                told.append(person_starts(store, n, answer == BLOCKED_LABELS[0].format(n=n),
                                          session_id, prompt_id))
                continue
            if question.startswith(DEVIATION_PREFIX):
                approve = answer == DEVIATION_LABELS[0].format(n=n)
                notes = "" if approve or answer == DEVIATION_LABELS[1].format(n=n) else answer
                said = person_decides(store, n, approve, "user (AskUserQuestion)", notes)
                told.append(said or f"maker: step {n} has no deviation awaiting a decision "
                            "any more; nothing was recorded.")
                continue
            if answer == APPROVE_LABEL.format(n=n):
                approve_step(store, n, "user (AskUserQuestion)")
                told.append(f"maker: the user approved step {n}; it is complete. End "
                            "with STEP_COMPLETE.")
            elif answer == APPROVE_REST_LABEL.format(n=n):
                approve_step(store, n, "user (AskUserQuestion)")
                chosen = choose_policy(store, "auto", f"user (AskUserQuestion, at step {n})")
                told.append(f"maker: the user approved step {n}, and chose policy auto for "
                            "the rest of this run." if chosen else
                            f"maker: the user approved step {n}; it is complete (no run is "
                            "going on, so no policy was chosen). End with STEP_COMPLETE.")
            else:
                notes = "" if answer == REJECT_LABEL.format(n=n) else answer
                result = reject_step(store, n, notes, by="user (AskUserQuestion)")
                if notes:
                    told.append(run_again(store, n, result.notes, "the user", session_id,
                                          prompt_id))
                    continue
                told.append(f"maker: the user rejected step {n}; it is back to pending "
                            f"with the notes {result.notes!r}. End with STEP_REJECTED.")
        except MakerError as exc:
            told.append(f"maker: the user's answer on step {n} was not recorded: {exc}")
    return "\n".join(told)
