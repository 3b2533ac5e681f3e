"""What no agent may run, the main agent included: a person's decision, or a write into
``plans/``.

The main agent does ordinary work with Bash, so its commands are not held to the step
executor's strict guard (``maker.tools.guards.guard``). Read as the programs they run
(``maker.tools.command.command_walk``, the walk every guard shares), these are refused:

* a command that names maker (by name, path, module or text) beside text the shell
  builds at run time (``$…``, backticks, ``eval``, commands piped into a shell, a
  program named by a pattern): what it runs cannot be known;
* a command that could take a person's decision (``maker step approve|reject``,
  ``maker policy NAME``, ``maker plan adopt``, or maker's Python API): one with a word
  containing one of those verbs, together with maker's name, unseen text, or the
  variables that say it runs inside Claude Code (``maker`` itself also refuses to
  decide inside Claude Code: the second lock);
* a command that is not read-only and names a path inside ``plans/``, directly or
  through a glob;
* a copy, link, extraction, ``find -exec`` or git command that would write into
  ``plans/`` through a folder that holds it (``maker.tools.guards.spill``).

False positives are cheap here (the user decides with ``/maker:approve N``), a missed
self-approval is not; and what slips past the guards still cannot approve: approvals
and the approval policy are sealed (``maker.store.seal``).
"""

from __future__ import annotations

import glob
import os
from fnmatch import fnmatchcase
from itertools import islice
from pathlib import Path, PurePosixPath

from maker.tools.command.command_walk import walk
from maker.tools.command.shell import Word
from maker.tools.guards.spill import spill_reason

__all__ = ["decision_refusal"]

_DECISIONS = frozenset({"approve", "reject", "policy", "adopt", "proposal"})
_CLAUDE_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")
_GLOB_LIMIT = 2000
_DECIDE = ("maker: approving, rejecting, the approval policy, a step's proposals and adopting "
           "a plan are the user's decisions, never an agent's: the user types `/maker:approve "
           "N`, `/maker:reject N <what to change>`, `/maker:proposal accept|drop N` or "
           "`/maker:policy NAME` in Claude Code. Ask "
           "them to (for a step awaiting approval, with AskUserQuestion as `maker step "
           "outcome N` says).")
_UNSEEN = ("maker: this command runs maker with text the shell builds at run time (`$…`, "
           "backticks or `eval`), so what it would do cannot be checked. Run maker's "
           "command with its words written out.")


def decision_refusal(command: str, *, cwd: Path, plans_root: Path) -> str | None:
    """Why an agent may not run this Bash command, or None: a policy over what the
    command runs (``maker.tools.command.command_walk``). Any argument that is itself a command
    line (``script -qc "…"``, ``bash -c "…"``, ``ssh host "…"``) is read as one too, its
    own quoting undone: ``"maker step appr''ove 1"`` decides as plainly."""
    walked = walk(command, cwd, every_word=True)
    if any(u.kind == "encoding" for u in walked.unknowns):
        return ("maker: this command holds text that is not Unicode (a lone surrogate), so "
                "what it names cannot be checked; write it out in plain text.")
    texts = walked.texts
    names_maker = any("maker" in t for t in texts)
    unseen = "eval" in texts or any(u.kind in ("expands", "stdin", "pattern")
                                    for u in walked.unknowns)
    decides = any(d in t.lower() for t in texts for d in _DECISIONS) \
        or any(v in command for v in _CLAUDE_VARS)
    if names_maker and unseen:
        return _UNSEEN
    if decides and (names_maker or unseen):
        return _DECIDE
    root = os.path.realpath(plans_root)
    runs = walked.runs
    unread = [Word(t, (False,) * len(t)) for t in command.split()] if any(
        u.kind == "syntax" for u in walked.unknowns) else []  # (its words, as they stand)
    budget = [_GLOB_LIMIT]  # (files matched by patterns, across the whole command)
    try:
        reaches = any(_names_plans(w, c, root, plans_root, budget) for run in runs
                      if not run.guessed for c in run.cwds for w in (*run.others, *run.words)
                      ) or any(_names_plans(w, cwd, root, plans_root, budget) for w in unread)
    except _TooMany:  # (a command that only reads may match as many as it likes)
        reaches, many = True, f" (or its patterns match over {_GLOB_LIMIT} files)"
    else:
        many = ""
    if reaches:
        from maker.tools.command.readonly import why_not_read_only

        why = why_not_read_only(command)
        if why is not None:
            return (f"maker: {plans_root} is maker's own record of the plan, changed only "
                    f"by maker; this command reaches it{many} and does not only read ({why}). "
                    "Use maker's commands (`maker status`, `/maker:step`, `/maker:reset`).")
    for run in runs:
        for cwd in run.cwds if run.argv else ():
            spilled = spill_reason(run.name, run.args, cwd, plans_root, strict=False)
            if spilled:
                return f"maker: {spilled}."
    return None


class _TooMany(Exception):
    """The command's patterns match more files than maker reads."""


def _names_plans(word: Word, cwd: Path, root: str, plans_root: Path,
                 budget: list[int]) -> bool:
    """Whether ``word`` is a path into plans/, or a glob that matches one."""
    text = word.text
    if word.globs:
        # A glob reaches plans/ if its leading parts can match plans/'s own path, files
        # or not; and if anything it matches now resolves there (through a link).
        pattern = os.path.normpath(os.path.join(cwd, os.path.expanduser(text)))
        parts, target = pattern.split(os.sep), os.path.normpath(plans_root).split(os.sep)
        if len(parts) >= len(target) and all(
                fnmatchcase(t, p) for p, t in zip(parts, target, strict=False)):
            return True
        for match in islice(glob.iglob(pattern), _GLOB_LIMIT + 1):
            budget[0] -= 1
            if budget[0] < 0:
                raise _TooMany
            full = os.path.realpath(match)
            if full == root or full.startswith(root + os.sep):
                return True
        return False
    if "/" not in text and text != PurePosixPath(plans_root).name:
        return False
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(text)))
    return full == root or full.startswith(root + os.sep)

