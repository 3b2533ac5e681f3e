"""maker's own commands that its agents may run: the one list every guard reads.

- The planner and the reviewer (``maker.tools.command.readonly``) may run ``READ_COMMANDS``:
  they print the plan's state, a step's brief or a check, and change nothing.
- The step executor (``maker.tools.guards.guard``, and
  ``maker.tools.guards.permissions``, which lets them through whatever the step's tool
  list says) and the reviewer may run ``EXECUTOR_COMMANDS``: the reads and ``maker
  verify``, which runs the project's checks and seals the result.

Every other maker command moves the plan's state (``maker step …``, ``maker handoff
accept``, ``maker plan write``, …) and belongs to the user and the main agent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["EXECUTOR_COMMANDS", "READ_COMMANDS", "is_allowed", "listed", "orient_command",
           "plain_command", "plumbing"]

READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("status",), ("context",), ("next",), ("plan", "show"), ("plan", "lint"),
    ("handoff", "check"),
)
# The executor also records its orientation (``maker orient N ...``, seed 004's orient,
# docs/architecture.md#the-seeds): it moves nothing but that step's own record, and never
# past a person's gate.
# A step run beside others brings its change back with ``maker land N``: code checks
# each file, verifies the merged tree and records it; the executor decides nothing.
EXECUTOR_COMMANDS: tuple[tuple[str, ...], ...] = (("verify",), ("orient",), ("land",),
                                                  *READ_COMMANDS)
# maker with nothing but these words only prints its help or version.
_ALONE: tuple[frozenset[str], ...] = (frozenset(), frozenset({"--help"}), frozenset({"-h"}),
                                      frozenset({"--version"}))


def is_allowed(args: Sequence[str], commands: Sequence[tuple[str, ...]], *,
               alone: bool = False) -> bool:
    """Whether ``maker`` with these arguments runs one of ``commands`` (``alone``:
    or only prints its help or version)."""
    if alone and frozenset(args) in _ALONE:
        return True
    return tuple(args[:1]) in commands or tuple(args[:2]) in commands


# How a message shows a command that needs an argument.
_SHOWN: dict[tuple[str, ...], str] = {("verify",): "verify --step N", ("context",): "context N"}


def listed(commands: Sequence[tuple[str, ...]]) -> str:
    """The commands for a message: "`maker verify --step N`, `maker status`, …"."""
    return ", ".join(f"`maker {_SHOWN.get(c, ' '.join(c))}`" for c in commands)


def plain_command(commands: Sequence[tuple[str, ...]]) -> re.Pattern[str]:
    """A pattern for one of ``commands`` with plain arguments only (letters, digits and
    ``./=:-``): nothing can be chained onto it."""
    names = "|".join(re.escape(" ".join(c)) for c in commands)
    return re.compile(rf"\A\s*maker (?:{names})(?: [\w./=:-]+)*\s*\Z")


# maker's own plumbing in a step, exactly as its prompts word it: nothing before, after
# or between (no options, no quoting, no second command).
_PLUMBING = re.compile(r"maker (context|status|step outcome|verify --step|land)(?: (\d{1,6}))?")
_NEEDS_STEP = {"context": True, "status": False, "step outcome": True, "verify --step": True,
               "land": True}


# ``maker orient N none|minor|major`` with its texts quoted plainly: single quotes, or
# double quotes around nothing the shell expands. Nothing can be chained onto it.
_QUOTED = r"(?:'[^'\n\r]*'|\"[^\"$`\\\n\r!]*\")"
_ORIENT = re.compile(rf"maker orient (\d{{1,6}}) (?:none|minor|major)"
                     rf"(?: --(?:what|revised) {_QUOTED}){{0,2}}")


def orient_command(command: str) -> int | None:
    """The step of a ``maker orient`` command worded exactly as the brief says; None
    for anything else (a second command chained on, an expansion, another option)."""
    m = _ORIENT.fullmatch(command.strip())
    return int(m.group(1)) if m else None


def plumbing(command: str) -> tuple[str, int | None] | None:
    """``(what, step)`` when ``command`` is exactly one of maker's read-only plumbing
    commands (``maker context N``, ``maker status``, ``maker step outcome N``, ``maker
    verify --step N``); None for anything else, ``maker context 0; rm …`` included."""
    m = _PLUMBING.fullmatch(command)
    if m is None or (m.group(2) is not None) != _NEEDS_STEP[m.group(1)]:
        return None
    return m.group(1), int(m.group(2)) if m.group(2) is not None else None
