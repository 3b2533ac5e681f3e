"""How maker runs a project's tests itself: pytest's, by the project's own test command.

maker runs tests of its own accord in two places: a step's new and changed test files on
the code before it (``maker.handoff.on_base``), and the samples of a code step against
one another's tests (``maker.verify.cross_runs``, ``maker.engine.code_vote``). Both run
pytest as the project's test command starts it, and only pytest's files. A plan whose
code step asks for a vote (``votes`` over 1) where maker cannot so run the tests is
refused when it is written (:func:`code_vote_problems`): its samples could not be
compared; one that can is told what the vote costs (:func:`code_vote_note`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from maker.core.models import PlanStep
from maker.errors import Problem
from maker.tools.registry import only_read
from maker.verify.detect import detect_commands

__all__ = ["code_vote_note", "code_vote_problems", "pytest_file", "pytest_runner"]


def pytest_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def pytest_runner(project: Path, env: dict[str, str]) -> list[str] | None:
    """The project's pytest as its test command starts it (``.venv/bin/python -m
    pytest``, ``uv run pytest``), its program by an absolute path; None when the test
    command is not pytest's."""
    test = next((c for c in detect_commands(project, env) if c.kind == "test"), None)
    try:
        words = shlex.split(test.command) if test is not None else []
    except ValueError:
        return None
    at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == "pytest"), None)
    if at is None:
        return None
    words = words[:at + 1]
    if "/" in words[0] and not words[0].startswith("/"):
        words[0] = str(project / words[0])
    return words


def _voting_code(steps: Sequence[PlanStep]) -> list[PlanStep]:
    return [s for s in steps if (s.votes or 1) > 1 and not s.is_conditional
            and not only_read([*s.primary_tools, *s.fallback_tools])]


def code_vote_problems(steps: Sequence[PlanStep], project: Path,
                       env: dict[str, str]) -> list[Problem]:
    """A problem for each code step that asks for a vote where maker cannot run the
    project's tests with pytest (its test command, as ``maker verify`` finds it)."""
    if not _voting_code(steps) or pytest_runner(project, env) is not None:
        return []
    return [Problem("votes", "a vote on a code step runs its samples' tests against one "
                    "another's code, and maker runs them with pytest only: this project's "
                    "test command (maker verify's) is not pytest's", s.step,
                    fix="remove `votes` from the step") for s in _voting_code(steps)]


def code_vote_note(steps: Sequence[PlanStep]) -> str:
    """What the plan's votes on code cost, in a sentence ("" when it has none)."""
    voting = _voting_code(steps)
    if not voting:
        return ""
    said = ", ".join(f"step {s.step} (at least {s.votes} samples"
                     f"{', and its probe: one more session' if s.probe else ''})"
                     for s in voting)
    return (f" Votes on code: {said}; each sample is a whole session of maker's engine (in "
            "maker run, /maker:run and /maker:step alike) in a worktree of its own, and their "
            "tests run against one another's code.")
