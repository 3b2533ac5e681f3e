"""What no agent may run, the main agent included: a person's decision, or a write into
``plans/``.

The main agent does ordinary work with Bash, so its commands are not held to the step
executor's strict guard (``maker.tools.guard``). Two things are refused, read through
the shared lexer (``maker.tools.shell``):

* a command that could run maker's decisions (``maker step approve|reject``,
  ``maker policy NAME``, or maker's Python API): one that names maker (by name, path,
  module or text) or expands text the lexer cannot see (``$…``, backticks), together
  with a word that contains one of those verbs, or with the variables that say it
  runs inside Claude Code. (``maker`` itself
  also refuses to take a decision inside Claude Code: this is the second lock.)
* a command that names a path inside ``plans/`` and is not read-only.

False positives are cheap here (the user decides with ``/maker:approve N``), a missed
self-approval is not.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from maker.tools.shell import ShellSyntaxError, Word, tokenize

__all__ = ["decision_refusal"]

_DECISIONS = frozenset({"approve", "reject", "policy", "adopt"})
_CLAUDE_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")
_DECIDE = ("maker: approving, rejecting and the approval policy are the user's decisions, "
           "never an agent's: the user types `/maker:approve N`, `/maker:reject N <what to "
           "change>` or `/maker:policy NAME` in Claude Code. Ask them to (for a step "
           "awaiting approval, with AskUserQuestion as `maker step outcome N` says).")


def decision_refusal(command: str, *, cwd: Path, plans_root: Path) -> str | None:
    """Why an agent may not run this Bash command, or None."""
    try:
        words = [t for t in tokenize(command) if isinstance(t, Word)]
    except ShellSyntaxError:
        words = [Word(w, (False,) * len(w)) for w in command.split()]
    texts = [w.text for w in words]
    names_maker = any("maker" in t for t in texts)
    unseen = any(w.hazards - {"!", "! in quotes"} for w in words) or "eval" in texts
    decides = any(d in t.lower() for t in texts for d in _DECISIONS) \
        or any(v in command for v in _CLAUDE_VARS)
    if decides and (names_maker or unseen):
        return _DECIDE
    root = os.path.realpath(plans_root)
    for text in texts:
        if "/" not in text and text != PurePosixPath(plans_root).name:
            continue
        path = os.path.realpath(os.path.join(cwd, os.path.expanduser(text)))
        if path == root or path.startswith(root + os.sep):
            from maker.tools.readonly import why_not_read_only

            why = why_not_read_only(command)
            if why is not None:
                return (f"maker: {plans_root} is maker's own record of the plan, changed only "
                        f"by maker; this command names it and does not only read ({why}). "
                        "Use maker's commands (`maker status`, `/maker:step`, `/maker:reset`).")
            return None
    return None
