"""Samples of a code step run against one another's tests: what a vote on behaviour counts.

For a vote among samples of one code step (``maker.voting.behaviour``), each sample's result
and the code before the step are written, by git, into folders of their own under
``scratch`` (nothing runs in the samples' worktrees, nothing is left in them). Then:

- the step's own checks (``checks``: ``maker verify``'s commands) run in each folder,
  the base's included, each passed or not;
- every sample's added test files go into every other sample's folder, and into the
  base's, under names of their own (``test_maker_<sample>_<name>``: two samples' files
  of one path do not meet), and pytest runs them there, with its results written as
  JUnit XML: each test, by id (``<sample>:<file>::<test>``), passed or failed;
- on the base they run twice: a test whose outcome differs between the two runs is
  flaky (the vote leaves it out);
- a probe's test files (``probes``: trees that added tests alone, on the base's code) go
  into every sample's folder and the base's alike; a probe's own folder is not run (its
  code is the base's), so its tests' ids are those the runs found (each test, by id,
  where some folder could collect its file; else the file's);
- the folders run side by side (as many at once as the machine has cores, at most 4),
  each its checks first and then its tests;
- a file that cannot even be imported against a sample's code (``ImportError``,
  ``NameError``, a module with no such attribute: another interface) is
  :data:`~maker.voting.behaviour.INCOMPATIBLE` with it; on the base, where what it tests
  is not there yet, it fails.

``run`` runs a shell command in a folder (the caller's box) within seconds, and says its
exit status; only pytest's files are run (``test_*.py``, ``*_test.py``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from maker.tools.git.git_tree import export_tree, snapshot_tree
from maker.verify.detect import VerifyCommand
from maker.voting.behaviour import FAIL, INCOMPATIBLE, NOT_RUN, PASS, Outcomes

__all__ = ["SIDE_BY_SIDE", "Run", "SampleTree", "cross_run", "placed"]

Run = Callable[[str, Path, float], int]
_JUNIT = ".maker-junit.xml"
SIDE_BY_SIDE = max(1, min(4, os.cpu_count() or 1))  # folders run at once
_BASE = "base"
# What a test that names what a sample's code does not have fails with.
_OTHER_INTERFACE = re.compile(r"\b(?:ImportError|ModuleNotFoundError|NameError: name '|"
                              r"AttributeError: module '[^']*' has no attribute)")


@dataclass(frozen=True)
class SampleTree:
    """One sample's result: ``name`` (a word: it names its folder and its tests' ids),
    ``folder`` (its worktree) and ``tests`` (the pytest files it added or changed,
    relative)."""

    name: str
    folder: Path
    tests: tuple[str, ...] = ()


def placed(path: str, owner: str) -> str:
    """Where ``owner``'s test file ``path`` goes in another folder: beside where it was,
    under a name of its own that pytest still collects."""
    folder, _, name = path.rpartition("/")
    name = f"test_maker_{owner}_{name.removeprefix('test_')}"
    return f"{folder}/{name}" if folder else name


def cross_run(project: Path, base: str, samples: Sequence[SampleTree], scratch: Path, run: Run,
              *, pytest: Sequence[str], checks: Sequence[VerifyCommand] = (),
              timeout: float = 120.0, side_by_side: int = SIDE_BY_SIDE,
              probes: Sequence[SampleTree] = ()
              ) -> tuple[Outcomes, dict[str, tuple[str, ...]]]:
    """``(outcomes, each sample's and probe's test ids)``: every sample's and probe's
    tests on every sample's result and twice on the base (commit or tree ``base`` of
    ``project``), and the step's ``checks`` on each, ``side_by_side`` folders at once.
    Raises OSError where git cannot write a folder."""
    folders = {_BASE: scratch / _BASE}
    if not export_tree(project, base, folders[_BASE]):
        raise OSError(f"git could not write the tree {base[:12]} into {folders[_BASE]}")
    for sample in samples:
        tree = snapshot_tree(sample.folder)
        folders[sample.name] = scratch / f"sample-{sample.name}"
        if tree is None or not export_tree(sample.folder, tree, folders[sample.name]):
            raise OSError(f"git could not write sample {sample.name}'s result")
    owners = {(s.name, f): s.folder / f for s in (*samples, *probes) for f in s.tests
              if (s.folder / f).is_file()}

    def each(name: str) -> tuple[dict[str, bool], list[dict[str, str]]]:
        """In one folder, one after the other: the checks, then the tests (twice on the
        base). The folders side by side."""
        folder = folders[name]
        passed = {c.command: run(c.command, folder, timeout) == 0 for c in checks}
        own = None if name == _BASE else name
        return passed, [_tests(folder, owners, own, run, pytest, timeout)
                        for _ in range(2 if own is None else 1)]

    with ThreadPoolExecutor(max_workers=side_by_side) as pool:
        done = dict(zip(folders, pool.map(each, folders), strict=True))
    outcomes = Outcomes(base_checks=done[_BASE][0])
    known: dict[str, tuple[str, ...]] = {}
    for sample in samples:  # (its own run: the ids of its tests are known from it)
        outcomes.checks[sample.name], (ran,) = done[sample.name]
        known[sample.name] = tuple(i for i in ran if i.startswith(f"{sample.name}:"))
        outcomes.runs.update({(sample.name, i): o for i, o in ran.items()})
    first, second = done[_BASE][1]
    for probe in probes:
        known[probe.name] = _found(probe.name, [*(done[s.name][1][0] for s in samples),
                                                first])
    for ids in known.values():
        for i in ids:
            outcomes.base[i] = (_on_base(first, i), _on_base(second, i))
    for sample in samples:  # (a file another could not import: every test of it)
        for i in (i for ids in known.values() for i in ids):
            if (sample.name, i) not in outcomes.runs:
                file = i.partition("::")[0]
                outcomes.runs[(sample.name, i)] = outcomes.runs.get((sample.name, file),
                                                                    NOT_RUN)
    return outcomes, known


def _found(owner: str, runs: Sequence[dict[str, str]]) -> tuple[str, ...]:
    """The ids of ``owner``'s tests as ``runs`` found them, in their order: each test
    where some run collected its file; a file that none could, by its own id."""
    ids = dict.fromkeys(i for ran in runs for i in ran if i.startswith(f"{owner}:"))
    tested = {i.partition("::")[0] for i in ids if "::" in i}
    return tuple(i for i in ids if "::" in i or i not in tested)


def _on_base(ran: dict[str, str], test: str) -> str:
    """A test's outcome on the base: a file that could not be imported there fails (what
    it tests is not there yet); one with no result (the run hung, or pytest crashed) was
    not run, which proves nothing either way."""
    said = ran.get(test) or ran.get(test.partition("::")[0])
    return NOT_RUN if said is None else PASS if said == PASS else FAIL


def _tests(folder: Path, owners: dict[tuple[str, str], Path], own: str | None, run: Run,
           pytest: Sequence[str], timeout: float) -> dict[str, str]:
    """Every sample's test files, run in ``folder`` (``own``'s where they lie; the others'
    placed), each test's outcome by id; a file that could not be collected by its id
    alone (``<sample>:<file>``): :data:`INCOMPATIBLE` where it names what is not there."""
    where: dict[str, str] = {}  # path in the folder -> "<owner>:<file>"
    top = os.path.realpath(folder)
    for (owner, file), source in owners.items():
        path = file if owner == own else placed(file, owner)
        while owner != own and os.path.lexists(folder / path):  # (a name the folder has)
            path = placed(path, "x")
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not os.path.realpath(target.parent).startswith(top + os.sep) and \
                os.path.realpath(target.parent) != top:
            continue  # (a folder that is a link out of it: nothing is written there)
        if owner != own:
            with open(source, "rb") as data, open(os.open(
                    target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644),
                    "wb") as out:
                shutil.copyfileobj(data, out)
        where[path] = f"{owner}:{file}"
    if not where:
        return {}
    junit = folder / _JUNIT
    junit.unlink(missing_ok=True)
    found = folder / "src"
    path = f"{folder}/src:{folder}" if found.is_dir() else str(folder)
    run(f"PYTHONDONTWRITEBYTECODE=1 PYTHONPATH={shlex.quote(path)} {shlex.join(pytest)} -q "
        "-p no:cacheprovider -o addopts= --rootdir=. --confcutdir=. "
        f"--continue-on-collection-errors --junitxml={shlex.quote(str(junit))} -- "
        f"{shlex.join(sorted(where))}", folder, timeout)
    return _read(junit, where)


def _read(junit: Path, where: dict[str, str]) -> dict[str, str]:
    modules = {p.removesuffix(".py").replace("/", "."): i for p, i in where.items()}
    try:
        root = ElementTree.parse(junit).getroot()
    except (OSError, ElementTree.ParseError):
        return {}
    found: dict[str, str] = {}
    for case in root.iter("testcase"):
        classname, name = case.get("classname") or "", case.get("name") or ""
        problem = next((c for c in case if c.tag in ("failure", "error")), None)
        text = "" if problem is None else f"{problem.get('message', '')}\n{problem.text or ''}"
        if not classname and name in modules:  # (the file could not be collected)
            found[modules[name]] = INCOMPATIBLE if _OTHER_INTERFACE.search(text) else FAIL
            continue
        module = next((m for m in modules if classname == m or classname.startswith(m + ".")),
                      None)
        if module is None or any(c.tag == "skipped" for c in case):
            continue
        inner = classname[len(module) + 1:]  # (a class of tests in it)
        test = f"{modules[module]}::{inner + '::' if inner else ''}{name}"
        found[test] = PASS if problem is None else \
            INCOMPATIBLE if _OTHER_INTERFACE.search(text) else FAIL
    return found
