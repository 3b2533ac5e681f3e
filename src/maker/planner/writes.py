"""What a step says it will change (its optional ``writes``), and whether two such claims
may touch the same file.

``writes`` is a list of paths or globs relative to the project root: ``src/api/**``,
``docs/*.md``, ``README.md``. A path names a file (``src/app.py``), or a folder and all
under it (``src/api``, a last segment without a dot; ``docs/v1.0/``, a trailing slash);
``*``, ``?`` and ``[...]`` match within one path segment, ``**`` any number of them.
``writes: []`` says the step changes no file. A step without ``writes`` says nothing,
and maker then runs it alone (``maker.executor.parallel.waves``): parallelism is declined on
uncertainty.

:func:`may_overlap` answers "could a file match both?" conservatively: it says no only
when some segment tells the two apart for certain (two different literal names, or a
literal a pattern cannot match). Lockfiles, migrations and generated code are shared
by nature (:data:`SHARED`), as is anything a person lists under ``shared`` in
``plans/settings.yaml``: a step whose claim may touch one runs alone.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from maker.errors import Problem

__all__ = ["CALL_BUDGET", "MAX_WRITES", "PAIR_BUDGET", "SHARED", "SHARED_BUDGET", "Work",
           "beside", "clash", "may_overlap", "shared_hit", "writes_problems"]

MAX_WRITES = 200  # entries in one step's `writes`
_MAX_CHARS = 300  # characters in one entry
_MAX_SEGMENTS = 64
# Checks (pairs of entries or globs compared, search states visited) maker spends telling
# claims apart before it takes them to meet, so that no plan the linter accepts makes
# PLAN.md or a wave choice slow: two steps' `writes` (two of 200 plain paths each fit),
# one step's against the shared globs, and one call in all (about a second at most).
PAIR_BUDGET = 50_000
SHARED_BUDGET = 50_000
CALL_BUDGET = 1_500_000
_EVERY = 2**62  # no limit (a linted pair has at most 65 x 65 states)

# Files many steps touch without meaning to conflict, and whose merge no file-level rule
# can make safe: lockfiles, migrations, generated code, the project's manifests.
SHARED: tuple[str, ...] = (
    "**/package-lock.json", "**/yarn.lock", "**/pnpm-lock.yaml", "**/npm-shrinkwrap.json",
    "**/Cargo.lock", "**/poetry.lock", "**/uv.lock", "**/Pipfile.lock", "**/go.sum",
    "**/Gemfile.lock", "**/composer.lock", "**/*.lock", "**/migrations/**",
    "**/alembic/versions/**", "**/generated/**", "**/__generated__/**", "**/*_pb2.py",
    "**/*.pb.go", "**/package.json", "**/pyproject.toml", "**/go.mod", "**/Cargo.toml",
    "**/requirements*.txt", ".gitignore", "**/.gitignore", ".gitattributes",
)


def writes_problems(value: Any, prefix: str, where: int | None) -> list[Problem]:
    """The problems of a step's ``writes`` as the planner or a person wrote it."""
    if value is None:
        return []
    fix = ("write the paths or globs the step will change, relative to the project root, "
           "e.g. `writes: [\"src/api/**\", \"tests/test_api.py\"]` (`[]`: it changes no "
           "file), or remove the line (then the step runs alone)")
    if not isinstance(value, list):
        return [Problem(prefix + "writes", f"must be a list of paths or globs, got "
                                           f"{_show(value)}", where, fix=fix)]
    if len(value) > MAX_WRITES:
        return [Problem(prefix + "writes", f"lists {len(value)} entries, more than the "
                                           f"{MAX_WRITES} maker reads", where,
                        fix="name folders (`src/api`) or globs (`src/api/**`) instead of "
                            "every file")]
    for item in value:
        why = _entry_problem(item)
        if why:
            return [Problem(prefix + "writes", f"{_show(item)} {why}", where, fix=fix)]
    return []


def _entry_problem(item: Any) -> str:
    if not isinstance(item, str) or not item.strip():
        return "is not a path"
    if len(item) > _MAX_CHARS:
        return f"is longer than {_MAX_CHARS} characters"
    text = item.strip()
    if text.startswith("/") or text.startswith("~"):
        return "is not relative to the project root"
    segments = _segments(text)
    if ".." in segments:
        return "climbs out of the project (`..`)"
    if len(segments) > _MAX_SEGMENTS:
        return f"has more than {_MAX_SEGMENTS} segments"
    if any(c in text for c in "\0\n\r"):
        return "holds a control character"
    if "{" in text or "}" in text:  # (maker's globs have no braces: it would read them
        return "uses braces ({a,b}): write each path as an entry of its own"  # literally)
    return ""


def _segments(text: str) -> list[str]:
    text = text.strip().replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".")] + ["**"] * text.endswith("/")
    return [p for i, p in enumerate(parts)  # repeated `**` mean one (no backtracking)
            if not (p == "**" and i and parts[i - 1] == "**")]


def _is_pattern(segment: str) -> bool:
    return "*" in segment or "?" in segment or "[" in segment


class Work:
    """The checks a call has spent (pairs of entries or globs compared, search states
    visited) against its ``limit``: :func:`beside` and a wave choice stop past it."""

    def __init__(self, limit: int = CALL_BUDGET) -> None:
        self.limit = limit
        self.spent = 0

    @property
    def over(self) -> bool:
        return self.spent > self.limit


class _Claim(NamedTuple):
    """An entry; its segments, also as a set; the first and last one any file in it must
    match (None: ``**``, or a folder's name last); ``key``: a first with no wildcard."""

    text: str
    segments: tuple[str, ...]
    names: frozenset[str]
    first: str | None
    last: str | None
    key: str | None


def _claim(entry: str) -> _Claim:
    seg = tuple(_segments(entry))
    first = seg[0] if seg and seg[0] != "**" else None
    return _Claim(entry, seg, frozenset(seg), first,
                  seg[-1] if seg and seg[-1] != "**" and not _folder(seg) else None,
                  first if first is not None and not _is_pattern(first) else None)


class _Step(NamedTuple):
    """A step's claims; by each key, those that may meet a claim with that key (the same
    key first, then ``loose``: those without one)."""

    claims: list[_Claim]
    near: dict[str, list[_Claim]]
    loose: list[_Claim]


def _step(writes: Sequence[str]) -> _Step:
    claims = [_claim(x) for x in writes]
    loose = [c for c in claims if c.key is None]
    near: dict[str, list[_Claim]] = {}
    for c in claims:
        if c.key is not None:
            near.setdefault(c.key, []).append(c)
    return _Step(claims, {k: cs + loose for k, cs in near.items()}, loose)


def may_overlap(a: str, b: str) -> bool:
    """Whether some file could match both ``a`` and ``b``. True unless the segments
    tell them apart for certain (two patterns within one segment are taken to meet)."""
    return _meets(_claim(a), _claim(b), _EVERY)[0]


def _meets(a: _Claim, b: _Claim, allowed: int) -> tuple[bool, int]:
    """Whether a file may match both, and the search states that took; (True,
    ``allowed + 1``) when telling them apart would take more than ``allowed``."""
    if (a.first is not None and b.first is not None and not _meet(a.first, b.first)) \
            or (a.last is not None and b.last is not None and not _meet(a.last, b.last)):
        return False, 0  # (the search could only end by meeting both: see _Claim)
    x, y = a.segments, b.segments
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:  # (positions in x and y; at most 65 x 65 of them)
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        if len(seen) >= allowed:
            return True, allowed + 1  # undecided: taken to meet
        seen.add((i, j))
        if i == len(x) and j == len(y):
            return True, len(seen)
        if i == len(x) or j == len(y):
            done, rest = (x, y[j:]) if i == len(x) else (y, x[i:])
            if all(seg == "**" for seg in rest) or _folder(done):
                return True, len(seen)
            continue
        if x[i] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif y[j] == "**":
            todo += [(i, j + 1), (i + 1, j)]
        elif _meet(x[i], y[j]):
            todo.append((i + 1, j + 1))
    return False, len(seen)


def _folder(segments: tuple[str, ...]) -> bool:
    """Whether an entry that ends here may name a folder (and so what is under it): a
    last segment like ``api`` or ``.github`` may, one like ``app.py`` names a file."""
    if not segments:
        return True
    last = segments[-1]
    return not _is_pattern(last) and "." not in last.lstrip(".")


def _meet(x: str, y: str) -> bool:
    px, py = _is_pattern(x), _is_pattern(y)
    if px and py:
        return True
    if px:
        return fnmatch.fnmatchcase(y, x)
    if py:
        return fnmatch.fnmatchcase(x, y)
    return x == y


def clash(w: Sequence[str], v: Sequence[str], work: Work | None = None) -> str:
    """Why two steps' ``writes`` may touch the same file: the first two entries that may
    meet, or that telling them apart takes more than :data:`PAIR_BUDGET` checks (then
    they are taken to meet: parallelism is declined on uncertainty); "" when they cannot.
    Whether it is "" depends only on the two lists, in either order; ``work`` is charged."""
    return _clash(_step(w), _step(v), work)


def _clash(a: _Step, b: _Step, work: Work | None) -> str:
    left, why = PAIR_BUDGET, ""  # (entries whose keys differ cannot meet: not compared)
    for x, y in ((p, q) for p in a.claims
                 for q in (b.claims if p.key is None else b.near.get(p.key, b.loose))):
        meet, used = _meets(x, y, left - 1)
        left -= 1 + used
        if left < 0 or meet:
            why = f"{x.text} and {y.text} may meet" if left >= 0 else (
                f"their {len(a.claims)} and {len(b.claims)} entries take more than "
                f"{PAIR_BUDGET:,} checks to tell apart")
            break
    if work is not None:
        work.spent += PAIR_BUDGET - left
    return why


@functools.lru_cache(maxsize=8)
def _globs(shared: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:data:`SHARED` and the project's own, read. (Kept: a function of its argument
    alone, and a wave choice asks for every candidate; the project's may be 1,000.)"""
    return tuple((g, tuple(_segments(g))) for g in (*SHARED, *shared))


def shared_hit(writes: Sequence[str], shared: Iterable[str],
               work: Work | None = None) -> str | None:
    """The first of ``writes`` that names a shared file (:data:`SHARED` and the
    project's own), with the shared glob it names; None when none does. (A claim such
    as ``src/**`` may hold a stray shared file too: the landing compares every file, so
    two steps writing it are a conflict, not a silent merge.) Telling them apart in
    more than :data:`SHARED_BUDGET` checks counts as a hit; ``work`` is charged."""
    return _shared_hit([_claim(x) for x in writes], _globs(tuple(shared)), work)


def _shared_hit(claims: Sequence[_Claim], globs: Sequence[tuple[str, tuple[str, ...]]],
                work: Work | None) -> str | None:
    left, hit = SHARED_BUDGET, None
    for claim, (glob, pattern) in itertools.product(claims, globs):
        covered, used = _covers(pattern, claim, left - 1)
        left -= 1 + used
        if left < 0 or covered:
            hit = f"{claim.text} (shared: {glob})" if left >= 0 else (
                f"one of its {len(claims)} entries, maybe (more than {SHARED_BUDGET:,} "
                f"checks against the {len(globs)} shared globs)")
            break
    if work is not None:
        work.spent += SHARED_BUDGET - left
    return hit


def _covers(pattern: tuple[str, ...], entry: _Claim, allowed: int) -> tuple[bool, int]:
    """Whether ``entry``, read as a path (its own wildcards as plain text), is matched
    by ``pattern`` (``db/migrations`` by ``**/migrations/**``), and the search states
    that took (as :func:`_meets`). A folder that merely could hold a shared file is
    not: its landing compares every file."""
    claim = entry.segments
    if pattern and claim and (
            (pattern[0] != "**" and not fnmatch.fnmatchcase(claim[0], pattern[0]))
            or (pattern[-1] != "**" and not fnmatch.fnmatchcase(claim[-1], pattern[-1]))
            or any(p not in entry.names and p != "**" and not _is_pattern(p)
                   for p in pattern)):
        return False, 0  # (a first or last segment, or a name, the claim cannot match)
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        if len(seen) >= allowed:
            return True, allowed + 1
        seen.add((i, j))
        if j == len(claim):
            if all(seg == "**" for seg in pattern[i:]):
                return True, len(seen)
            continue
        if i == len(pattern):
            continue
        if pattern[i] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif fnmatch.fnmatchcase(claim[j], pattern[i]):
            todo.append((i + 1, j + 1))
    return False, len(seen)


def beside(steps: Sequence[tuple[int, list[int], list[str] | None]],
           shared: Iterable[str] = (), work: Work | None = None) -> dict[int, list[int]] | None:
    """For ``(number, depends_on, writes)`` of each step: the steps each may run beside
    (neither depends on the other, however indirectly; both say what they write; no
    claim names a shared file; no two claims may meet, as :func:`clash` and
    :func:`shared_hit` decide, so a wave agrees). None when that takes more than
    ``work`` allows (:data:`CALL_BUDGET` checks): the answer is then not known here."""
    work = work or Work()
    globs = _globs(tuple(shared))
    deps = {n: set(d) for n, d, _ in steps}
    above: dict[int, set[int]] = {}
    for n, _, _ in sorted(steps):  # (a step depends only on earlier ones)
        seen = set(deps[n])
        for d in deps[n]:
            seen |= above.get(d, set())
        above[n] = seen
    free: dict[int, _Step] = {}
    for n, _, w in sorted(steps):
        if w is not None and _shared_hit((claims := _step(w)).claims, globs, work) is None:
            free[n] = claims
        if work.over:
            return None
    out: dict[int, list[int]] = {n: [] for n in free}
    order = list(free)
    for k, n in enumerate(order):  # (each pair once: whether they clash is symmetric)
        for m in order[k + 1:]:
            if m in above[n] or n in above[m]:
                continue
            if not _clash(free[n], free[m], work):
                out[n].append(m)
                out[m].append(n)
            if work.over:
                return None
    return {n: sorted(ms) for n, ms in out.items() if ms}


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
