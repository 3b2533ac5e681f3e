"""One sample of a vote on a step's code, as the vote sees it before any test runs.

A sample (``maker.engine.code_vote``) is the step's brief done by a fresh session in a
worktree of its own. :func:`measure` reads what it did there: its diff (its code's lines:
tests it adds are no cost), the pytest files it added or changed, or why it is dropped
before any test runs (never repaired): its session failed or was cut, the red flagger
rejects its answer, its handoff is not a complete one, it changed no file, the gate would
refuse its handoff on what applies to a sample (``maker.handoff.gate.check_sample``: it
is for another step, its output lacks a key of the step's ``output_schema``, maker's red
flags, its sweep, a ``files_changed`` that is not what git measures in its worktree; the
gate's own words in the flag), it wrote outside the step's ``writes``, it weakened the
tests (``maker.handoff.weak_tests``), it changed how the tests run (a ``conftest.py`` can
rewrite every outcome; pytest's config, ``sitecustomize.py``, a ``.pth``), or it added no
test (its diff is counted over its code alone, so a sample with no test would win by its
smaller one). The vote's probe (``maker.engine.code_probe``) is measured the same way,
and dropped too where it changed a file that is not a test.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from maker.core.models import AgentResult
from maker.engine.code_probe import not_tests
from maker.errors import Problem, YAMLCleanError
from maker.handoff.fields import parse_handoff
from maker.handoff.gate import check_sample
from maker.handoff.weak_tests import is_test_file, weakened
from maker.planner.writes import clash
from maker.red_flag.red_flagger import RedFlagger
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.tools.git import worktrees
from maker.tools.git.git_tree import file_diff, line_counts
from maker.verify.pytest_runs import pytest_file
from maker.voting.behaviour import CodeSample
from maker.yaml_cleaner.cleaner import YAMLCleaner

__all__ = ["Sampled", "measure"]


@dataclass
class Sampled:
    """One sample: its session's answer (None: it failed or was cut), its worktree."""

    name: str
    folder: Path
    result: AgentResult | None
    sample: CodeSample
    tests: tuple[str, ...] = ()


def measure(name: str, folder: Path, result: AgentResult | None, *, flagger: RedFlagger,
            tree: str, writes: list[str], store: PlanStore, record: StepRecord,
            probe: bool = False) -> Sampled:
    """The sample ``name`` (its worktree ``folder``, cut from ``tree``) as the vote sees
    it: its diff, its tests, and a flag found before any test runs (see the module's
    docstring); ``record``: the step's record its session got (naming ``folder`` and
    ``tree``), which the gate's stages read; ``probe``: the vote's probe, which may
    change test files only."""
    def flagged(why: str, lines: int = 0) -> Sampled:
        return Sampled(name, folder, result, CodeSample(name, lines, (), why))

    if result is None:
        return flagged("its session failed or was cut at its bound")
    bad, why = flagger.check_with_reason(result)
    if bad:
        return flagged(why)
    try:
        data, _ = YAMLCleaner().clean_mapping(result.raw_response)
    except YAMLCleanError as exc:
        return flagged(f"no handoff: {exc}")
    handoff, problems = parse_handoff(data)
    if handoff is None or handoff.status != "complete":
        return flagged("its handoff is not a complete one: " + (
            "; ".join(str(p) for p in problems[:2]) or str(data.get("status"))))
    end = worktrees.snapshot(folder)
    changed = worktrees.changes(folder, tree, end) if end else None
    if not changed or end is None:
        return flagged("it changed no file" if changed == [] else
                       "git could not measure its files")
    counts = line_counts(folder, tree, end, changed) or {}
    lines = sum(max(a, 0) + max(r, 0) for f, (a, r) in counts.items()
                if not is_test_file(f))  # (its code's: tests it adds are no cost)
    refused = check_sample(store, record, handoff, data, result.raw_response)
    if refused:
        return flagged(f"its handoff is refused by the gate: {_said(refused)}", lines)
    code = not_tests(changed) if probe else None
    if code:
        return flagged(code, lines)
    outside = [f for f in changed if writes and not clash([f], writes)]
    if outside:
        return flagged(f"it wrote outside the step's writes: {', '.join(outside[:3])}", lines)
    weak = [w for f in changed if is_test_file(f)
            for d in [file_diff(folder, tree, end, f)] if d is not None
            for w in [weakened(f, *d)] if w]
    if weak:
        return flagged(f"it weakens the tests: {'; '.join(weak[:3])}", lines)
    machinery = [f for f in changed if _runs_the_tests(f, folder, tree, end)]
    if machinery:
        return flagged("it changes how the tests run (a sample's votes must come from "
                       f"its tests alone): {', '.join(machinery[:3])}", lines)
    tests = tuple(f for f in changed if pytest_file(f) and (folder / f).is_file()
                  and not (folder / f).is_symlink())
    if not tests:
        return flagged("it added no test (a vote compares samples by their tests)", lines)
    return Sampled(name, folder, result, CodeSample(name, lines), tests)


def _said(problems: list[Problem]) -> str:
    """The gate's first problems, short: where and what (a sample is never told the fix)."""
    text = "; ".join(f"{p.field}: {p.message}" for p in problems[:2])
    return text if len(text) <= 300 else text[:299] + "…"


# What makes pytest run otherwise than the tests say: a sample's votes must come from its
# tests alone (a conftest.py can rewrite every outcome).
_MACHINERY = frozenset({"conftest.py", "pytest.ini", "tox.ini", "setup.cfg",
                        "sitecustomize.py", "usercustomize.py", ".pytest.ini"})


def _runs_the_tests(path: str, folder: Path, start: str, end: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if name in _MACHINERY or name.endswith(".pth"):
        return True
    if name != "pyproject.toml":
        return False
    diff = file_diff(folder, start, end, path)
    return diff is None or any("pytest" in line for line in diff[1])
