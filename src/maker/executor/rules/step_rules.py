"""The rules of one step, each written once: ``/maker:step`` (the hooks) and ``maker run``
(the engine) both apply them from here, and ``tests/unit/test_step_rules.py`` runs the
same step through both to show it.

- **Votes**: how many agreeing answers decide a step is
  ``maker.executor.rules.vote_rules.step_votes``.
- **The gate's bound** (:data:`GATE_ATTEMPTS`): the answers the gate may refuse for one
  run of a step; the last refusal fails the step. The hooks count a subagent's refused
  handoffs (``maker.executor.state.attempts``), the engine its sessions' answers.
- **Reminders** (:data:`STOP_REMINDERS`, the plugin only): a main-agent turn that ends
  while its step has no accepted handoff is sent back this many times; the next stop
  fails the step. Both bounds stay well under Claude Code's own cap of 8 consecutive
  blocks.
- **Fixes** (:data:`MAX_FIX_ATTEMPTS`, seed 004's ``max_fix_attempts``,
  docs/architecture.md#the-seeds; the rule is
  ``maker.verify.fixes.fix_budget_spent``, below the gate that reads it): in one run of
  a step, each of the first ``max_fix_attempts`` failing verifications is followed by a
  fix; the next one spends the budget (0: the first failure does). The count is
  ``maker verify``'s, kept in the step's sealed evidence: the engine sends a failure
  back to its session until then; in the plugin the executor runs ``maker verify
  --step N`` itself, which then tells it to stop and hand back ``failed``, and the gate
  refuses a ``complete`` handoff from then on.
- **Review** (:func:`review_reasons`, :func:`review_required`, :func:`approval_route`):
  a step that changed :data:`REVIEW_THRESHOLD` files or more, or files in two or more of
  the architectural boundaries a person declared (``boundaries`` in
  ``plans/settings.yaml``), is reviewed by the independent reviewer before anyone
  approves it; the approval policy a person set says who decides then. The files are
  the ones maker measured (``maker.handoff.measured``), not the executor's claim.
  ``STEP_SKIP_REVIEW=1`` (:func:`skip_review`, a person's environment) never spawns the
  reviewer, and may only take machine approval away: a step the reviewer would have
  decided goes to a person. RED findings send the step back to implementation at most
  ``max_review_attempts`` times (:data:`MAX_REVIEW_ATTEMPTS` by default;
  ``maker.executor.acceptance.review_route``); past that bound a person decides, with the findings.
- **The reviewer's context fields** (:data:`REVIEW_ANSWERS`): a review whose context
  fields (the YAML after its VERDICT line) are malformed is refused, nothing of it
  recorded, and the reviewer answers again with the problems, up to this many answers
  in all; the last one is taken for its verdict, its malformed fields left out
  (``maker.executor.acceptance.review``).

A person sets the bounds (``max_fix_attempts``, ``max_review_attempts``,
``gate_attempts``) and ``maker run``'s ``session_timeout`` in ``plans/settings.yaml``
(:func:`settings`, read on use by both front ends); the constants here are the defaults.

The module stays light (no ``typing``, no ``dataclasses``): the Stop hook reads its
bound here on every stop.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from maker.store.settings import Settings

__all__ = ["GATE_ATTEMPTS", "MAX_FIX_ATTEMPTS", "MAX_REVIEW_ATTEMPTS", "REVIEW_ANSWERS",
           "REVIEW_THRESHOLD", "SKIP_REVIEW_VARIABLE", "STOP_REMINDERS", "approval_route",
           "crossed_boundaries", "review_reasons", "review_required", "settings", "skip_review"]

GATE_ATTEMPTS = 3
STOP_REMINDERS = 3
MAX_FIX_ATTEMPTS = 2
MAX_REVIEW_ATTEMPTS = 1
REVIEW_ANSWERS = 2
REVIEW_THRESHOLD = 5  # seed 004: an independent review when a step touched this many files


SKIP_REVIEW_VARIABLE = "STEP_SKIP_REVIEW"


def skip_review(environ: Mapping[str, str] | None = None) -> bool:
    """Whether a person set ``STEP_SKIP_REVIEW=1`` for this process (seed 004: the
    environment of the hook's process, the client's, or of ``maker run``)."""
    return (os.environ if environ is None else environ).get(SKIP_REVIEW_VARIABLE) == "1"


def crossed_boundaries(files: Iterable[object], boundaries: Iterable[str]) -> list[str]:
    """The declared boundaries (globs relative to the project root) that ``files`` fall
    in, in their declared order. A glob without a wildcard is a folder (or a file); a
    glob matches a file or any folder above it (``src/api/*`` holds ``src/api/v1/x.py``)."""
    paths = [str(f).strip().removeprefix("./") for f in files]
    return [glob for glob in dict.fromkeys(boundaries)
            if any(_glob_matches(glob, path) for path in paths)]


def _glob_matches(glob: str, path: str) -> bool:
    import re

    glob = glob.strip().strip("/")
    while "**/**/" in glob:  # (the same match; repeated, it backtracks exponentially)
        glob = glob.replace("**/**/", "**/")
    if not glob:
        return False
    if not any(c in glob for c in "*?["):
        return path == glob or path.startswith(glob + "/")
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.fullmatch("".join(out) + "(?:/.*)?", path) is not None


def review_reasons(files_changed: Iterable[object],
                   boundaries: Iterable[str] = ()) -> list[str]:
    """Why a step that changed ``files_changed`` needs the independent review before
    anyone approves it, in words ([] when it does not): 5+ files, or files in two or
    more declared ``boundaries``."""
    files = list(files_changed)
    why = []
    if len(files) >= REVIEW_THRESHOLD:
        why.append(f"{len(files)} files changed")
    crossed = crossed_boundaries(files, boundaries)
    if len(crossed) >= 2:
        why.append("the change crosses architectural boundaries: "
                   + ", ".join(f"`{b}`" for b in crossed))
    ignores = [str(f) for f in files if str(f).rsplit("/", 1)[-1] == ".gitignore"]
    if ignores:  # (a new ignore rule hides what it covers from maker's measure)
        why.append("it changes an ignore rule (" + ", ".join(f"`{f}`" for f in ignores[:3])
                   + "), which can hide files from maker's measure")
    return why


def review_required(files_changed: Iterable[object], boundaries: Iterable[str] = ()) -> bool:
    """Whether a step that changed ``files_changed`` needs the independent review before
    anyone approves it (:func:`review_reasons`)."""
    return bool(review_reasons(files_changed, boundaries))


def approval_route(policy: str, files_changed: Iterable[object],
                   boundaries: Iterable[str] = (), skipped: bool = False) -> str:
    """Who decides a step whose complete handoff was accepted, under approval policy
    ``policy`` (``maker.executor.acceptance.approval``):

    - ``"policy"``: the policy approves it now (``auto``, and the step is small);
    - ``"reviewer"``: the reviewer's verdict approves or rejects it (``reviewer``; or
      ``auto`` and the step is large);
    - ``"person"``: a person does (``never``), after the review if the step is large;
      and whenever the reviewer would have decided but review is ``skipped``
      (``STEP_SKIP_REVIEW=1``): skipping a review never grants approval.
    """
    large = review_required(files_changed, boundaries)
    if policy == "reviewer" or policy == "auto" and large:
        return "person" if skipped else "reviewer"
    if policy == "auto":
        return "policy"
    return "person"


# -- a person's tunables ----------------------------------------------------------------


def settings(plans_root: Path) -> Settings:
    """The bounds a person set for the plan in ``plans_root`` (``plans/settings.yaml``;
    these defaults when there is none). Raises PlanFileError naming every broken key."""
    from maker.store.settings import load_settings  # (off the Stop hook's path)

    return load_settings(plans_root)

