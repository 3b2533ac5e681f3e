"""The files a step changed, measured by maker: not the executor's ``files_changed`` claim.

When a step starts (``maker.executor.state.lifecycle.start_step``, which ``/maker:step`` and
``maker run`` both use), maker records a git tree of the project's working tree in the
step's front matter (:data:`MEASURE_KEY`; ``maker.tools.git.git_tree``). At the handoff it
writes the tree again and lists what differs (maker's own ``plans/`` and plugin data
left out): those are the step's changes. A resumed step keeps its start, and so does a
step sent back for revision (its earlier attempts' edits are still its own);
``maker step reset`` starts the measure afresh.

- The claim is checked against the measure both ways (:func:`check_measured`): a
  handoff whose ``files_changed`` leaves a measured change out, or names a file maker
  measured no change to, is refused by the gate naming the paths, so the executor
  corrects it, within the gate's bound; a ``complete`` step whose tools can write and
  that changed nothing must say so (``files_changed: []``), and the person's approval
  question and ``maker status`` then say that no file changed.
- Who reviews and who approves is decided on the measured files
  (``maker.executor.acceptance.review_route``); the accepted handoff keeps them as
  ``files_measured``.
- A step whose tools only read (a voting step's executors) cannot change a file: its
  measure is empty, whatever else changed in the tree meanwhile.
- Without git (or when git cannot measure the tree in time, or maker runs no git in the
  repository: its config defines a filter maker cannot switch off) nothing is measured, and
  every reader says the count is the executor's claim: without a repository's ignore
  rules, a stat snapshot would count build outputs and caches (``__pycache__``,
  ``node_modules``, the verification's own files) as the step's work, refuse honest
  handoffs and send every step to review.

A person's own edits made while the step runs are in the working tree too: the measure
counts them, and the refusal says to list them (noting whose they are).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.paths import data_dir
from maker.errors import GitRefusedError, Problem
from maker.tools.box.runs_later import runs_later
from maker.tools.git.git_tree import (
    MAX_PATHS,
    changed_paths,
    gitlinks_added,
    line_counts,
    snapshot_tree,
)
from maker.tools.registry import only_read

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.store.records import StepRecord

__all__ = ["BASE_FIELD", "LATER_FIELD", "MEASURED_FIELD", "MEASURE_KEY", "NAMED_FIELDS",
           "NESTED_FIELD", "NO_FILE_CHANGED", "PASS_ON_BASE", "STALE_FIELD", "STALE_INPUTS",
           "TESTS_FIELD", "TESTS_WEAKENED", "check_measured", "code_run_later", "end_tree",
           "files_note", "measure_start", "measured_changes", "measured_lines",
           "nested_repositories", "step_files"]

MEASURE_KEY = "measured_from"  # the step's front matter: the tree it started from
MEASURED_FIELD = "files_measured"  # the accepted handoff: what maker measured
_SHOWN = 30  # missing paths named in one refusal
NO_FILE_CHANGED = "NO FILE CHANGED"  # what a person reads of a step that changed nothing
NESTED_FIELD = "repositories_added"  # the accepted handoff: nested repositories it added
NESTED_ADDED = "NESTED REPOSITORY ADDED"  # what a person reads of one
LATER_FIELD = "runs_later_added"  # the accepted handoff: files it made that run code later
RUNS_LATER = "RUNS CODE LATER"  # what a person reads of them
STALE_FIELD = "stale_inputs"  # the accepted handoff of a step that never oriented: why
STALE_INPUTS = "STALE INPUTS"  # what a person reads of it
TESTS_FIELD = "tests_weakened"  # the accepted handoff: test files it weakened, each with why
TESTS_WEAKENED = "TESTS WEAKENED"  # what a person reads of them (maker.handoff.weak_tests)
NAMED_FIELDS = (STALE_FIELD, LATER_FIELD, NESTED_FIELD, TESTS_FIELD)  # each asks a person
BASE_FIELD = "tests_pass_on_base"  # the accepted handoff: its test files that pass without it
PASS_ON_BASE = "TESTS PASS ON THE BASE"  # what a person reads of them (maker.handoff.on_base)


def measure_start(store: PlanStore, n: int) -> str | None:
    """The tree step ``n``, starting now, is measured from; None when git cannot say.
    The index it was written through is kept (:func:`seed_index`): the step's own end is
    measured from it, not from the repository's index, which the step can rewrite."""
    try:
        return snapshot_tree(store.project, keep=seed_index(store, n))
    except GitRefusedError:
        return None  # (maker runs no git there: not measured)


def seed_index(store: PlanStore, n: int) -> Path:
    """Where maker keeps the index of step ``n``'s start (read-only to the step)."""
    return store.state_dir / "measure" / f"step-{n}.index"


def measured_changes(store: PlanStore, record: StepRecord) -> list[str] | None:
    """The files step ``record`` changed since it started (relative to the project root,
    sorted, ``plans/`` left out); None when nothing was measured (no git, no start)."""
    start = record.meta.get(MEASURE_KEY)
    if not isinstance(start, str) or not start:
        return None
    if only_read([*record.spec.primary_tools, *record.spec.fallback_tools]):
        return []  # its executors cannot write: whatever changed is not the step's
    landed = record.meta.get("landed_files")
    if isinstance(landed, list):  # (a step run beside others: what it brought back)
        return sorted(str(p) for p in landed)
    home, end = end_tree(store, record)
    try:
        paths = changed_paths(home, start, end) if end else None
    except GitRefusedError:
        paths = None  # (maker runs no git there: not measured)
    if paths is None:
        return None
    own = [p for p in (_inside(store.project, store.root), _inside(store.project, data_dir()))
           if p]
    return [p for p in paths if not any(p == o or p.startswith(o + "/") for o in own)]


def end_tree(store: PlanStore, record: StepRecord) -> tuple[Path, str | None]:
    """Where step ``record`` works (its worktree, when it has one), and the tree of it
    now (None when git cannot say, or runs no git there)."""
    from maker.store.workspace import step_project

    home = step_project(store, record)
    try:
        return home, snapshot_tree(home, seed=seed_index(store, record.number)
                                   if home == store.project else None)
    except GitRefusedError:
        return home, None


def nested_repositories(store: PlanStore, record: StepRecord) -> list[str]:
    """The nested repositories (gitlinks) step ``record`` added to the working tree since
    it started: git enters each (a person's ``git status``, a commit's submodule) and
    runs the programs its own config names, so no policy takes them (``[]`` when none,
    or nothing was measured)."""
    start = record.meta.get(MEASURE_KEY)
    if not isinstance(start, str) or not start or only_read(record.spec.tools):
        return []
    home, end = end_tree(store, record)
    try:
        found = gitlinks_added(home, start, end) if end else None
    except GitRefusedError:
        found = None
    return (found or [])[:MAX_PATHS]


def code_run_later(store: PlanStore, record: StepRecord, files: list[str]) -> list[str]:
    """The files among ``files`` (measured) that make code run later outside any box, at
    any depth, each with what runs it (``sub/.envrc (a script direnv runs …)``): the box
    removes those at the top of the step's folder, not below, so no policy takes them.
    What the step's ``writes`` names is its own."""
    from maker.store.workspace import step_project

    home = step_project(store, record)
    found = []
    for name in files[:MAX_PATHS]:
        what = runs_later(Path(os.path.realpath(home / name)), home, record.spec.writes)
        if what is not None:
            found.append(f"{name} ({what})")
    return found


def measured_lines(store: PlanStore, record: StepRecord, files: list[str]
                   ) -> tuple[dict[str, tuple[int, int]], str] | None:
    """For a person about to approve step ``record``: the lines each of ``files`` gained
    and lost since the step began, and the ``git diff`` that shows them; None when
    maker did not measure the step (no git, no start) or git cannot tell."""
    start = record.meta.get(MEASURE_KEY)
    if not isinstance(start, str) or not start or not files:
        return None
    home, end = end_tree(store, record)
    try:
        counts = line_counts(home, start, end, files) if end else None
    except GitRefusedError:
        return None
    if counts is None or end is None:
        return None
    return counts, f"git diff {start[:12]} {end[:12]} -- " + " ".join(
        shlex.quote(f) for f in files[:10])


def _inside(project: Path, folder: Path) -> str:
    """``folder`` relative to ``project`` when it lies inside it (maker's own files:
    ``plans/``, the plugin's data), else ""."""
    try:
        rel = os.path.relpath(os.path.realpath(folder), os.path.realpath(project))
    except ValueError:
        return ""
    rel = Path(rel).as_posix()
    return "" if rel in ("", ".") or rel.startswith("../") or rel == ".." else rel


def _claims(project: Path, item: Any) -> list[str]:
    """The paths one ``files_changed`` entry names, relative to the project root: its
    path, with a note after it (``a.py (new)``, ``a.py: why``, ``a.py - why``) left out;
    any other word after it is a path of its own (``a.py b.py`` claims both)."""
    text = str(item).strip()
    text = re.split(r":\s|\s[-\u2014#]\s|\s[-\u2014]$", text, maxsplit=1)[0]  # (a note)
    text = re.sub(r"\([^)]*\)", " ", text)  # (a note in parentheses, anywhere)
    return [p for p in (_path(project, word) for word in text.split()) if p]


def _path(project: Path, word: str) -> str:
    word = word.strip("`'\",;")
    if not word:
        return ""
    if os.path.isabs(word):
        try:
            word = os.path.relpath(word, os.path.realpath(project))
        except ValueError:
            return word
    norm = posixpath.normpath(Path(word).as_posix())
    return "" if norm == "." else norm


def _covers(claim: str, path: str) -> bool:
    """``claim`` names ``path``: the path itself, or a folder above it."""
    return claim == path or path.startswith(claim.rstrip("/") + "/")


def check_measured(store: PlanStore, record: StepRecord, claimed: Any,
                   problems: list[Problem], status: Any = None) -> list[str] | None:
    """The files step ``record`` changed, as maker measured them (None: not measured);
    checks ``claimed`` (the handoff's ``files_changed``) against them both ways, adding a
    problem for each way it fails:

    - a measured change the claim leaves out;
    - a claimed file maker measured no change to since the step began (phantom work);
    - a ``complete`` step whose tools can write, with nothing measured as changed, that
      does not say so (``files_changed: []``).
    """
    measured = measured_changes(store, record)
    if measured is None:
        if status == "complete" and record.meta.get(MEASURE_KEY):
            problems.append(Problem(
                "files_changed", "maker measured the step's start but cannot measure its "
                "end (git cannot read the working tree now), so the files it claims cannot "
                "be checked", record.number,
                fix="put the repository back as git can read it (`git status` works), then "
                    "hand off again; or hand off `status: blocked` with what broke it"))
        return None
    claims: list[str] = []
    for item in claimed if isinstance(claimed, list) else []:
        whole = _path(store.project, str(item).strip())  # (a name with spaces in it)
        claims += [whole] if whole in measured else _claims(store.project, item)
    missing = [p for p in measured if not any(_covers(c, p) for c in claims)]
    if missing:
        problems.append(Problem(
            "files_changed", f"leaves out {len(missing)} file(s) this step changed, as maker "
            f"measured the working tree against the step's start: {_shown(missing)}",
            record.number,
            fix="list every file the step changed under `files_changed`, one `- path` per "
                "file, relative to the project root (a file someone else changed meanwhile "
                "too: list it and say so in the summary)"))
    phantom = [c for c in claims if not any(_covers(c, p) for p in measured)]
    if phantom:
        problems.append(Problem(
            "files_changed", f"names {len(phantom)} file(s) maker measured no change to since "
            f"the step began: {_shown(phantom)}", record.number,
            fix="remove each from `files_changed`, or make the change it names; "
                "`files_changed` lists only what this step really changed"))
    if (status == "complete" and not measured and claimed != []
            and not only_read(record.spec.tools)):
        problems.append(Problem(
            "files_changed", "maker measured no change to any file since the step began, and "
            "the handoff does not say so", record.number,
            fix="if the step truly needed no change, write `files_changed: []` and say why in "
                "the summary (the person is told that no file changed); otherwise make the "
                "change the step asks for"))
    return measured[:MAX_PATHS]


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:_SHOWN]) + (
        f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


def step_files(handoff: dict[str, Any]) -> list[str]:
    """The files an accepted handoff's step changed: what maker measured, else (nothing
    measured: no git) the executor's ``files_changed`` claim."""
    measured = handoff.get(MEASURED_FIELD)
    chosen = measured if isinstance(measured, list) else handoff.get("files_changed")
    return [str(f) for f in chosen or [] if isinstance(f, (str, int, float))]


# What a person must not miss, per field of an accepted handoff that lists files: what
# they read first, and why it matters.
_LISTED = (
    (LATER_FIELD, RUNS_LATER, "a tool or the client runs it on its own, outside any box: keep "
     "it only if you meant to, else remove it before you enter its folder"),
    (TESTS_FIELD, TESTS_WEAKENED, "its checks pass with these: read the diff before you count "
     "them as evidence"),
    (BASE_FIELD, PASS_ON_BASE, "they pass on the code before the step too: evidence of "
     "nothing about its change"),
    (NESTED_FIELD, NESTED_ADDED, "a repository of its own in the project: git enters it and "
     "runs the programs its own config names; keep it only if you meant to, else remove it"),
)


def files_note(record: StepRecord, handoff: dict[str, Any]) -> str:
    """What a person must not miss about an accepted handoff: inputs that changed under
    a step that never oriented, then each list of :data:`_LISTED` (files that run code
    later, tests it weakened, tests that pass on the base, nested repositories), all that
    hold, in that order; else that a step whose tools can write changed no file
    (measured), or that the files are only the executor's claim (nothing measured: no
    git); "" else."""
    if not handoff:
        return ""
    named = []
    stale = handoff.get(STALE_FIELD)
    if isinstance(stale, list) and stale:
        named.append(f"{STALE_INPUTS}: " + "; ".join(str(s) for s in stale[:3]) + " (the "
                     "step never oriented, so maker checked when it handed off: decide "
                     "whether its answer still holds)")
    for field, label, why in _LISTED:
        listed = handoff.get(field)
        if isinstance(listed, list) and listed:
            named.append(f"{label}: {_shown([str(n) for n in listed])} ({why})")
            kept = handoff.get("behaviour_kept") if field == BASE_FIELD else None
            if isinstance(kept, str) and kept:
                named.append(f"Why none fails there, the executor says: {kept[:300]}")
    if named:
        return " ".join(named)
    measured = handoff.get(MEASURED_FIELD)
    if isinstance(measured, list):
        if measured or only_read(record.spec.tools) or handoff.get("status") != "complete":
            return ""
        return (f"{NO_FILE_CHANGED}: maker measured no change to any file since the step "
                "began (the handoff says none was needed)")
    if record.meta.get(MEASURE_KEY) or not handoff.get("files_changed"):
        return ""  # (measured at the start but not at the end: review_route says so)
    return ("the files changed are the executor's claim: maker could not measure them "
            "(no git)")
