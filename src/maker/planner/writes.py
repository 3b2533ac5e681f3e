"""What a step says it will change (its optional ``writes``), and whether two such claims
may touch the same file.

``writes`` is a list of paths or globs relative to the project root: ``src/api/**``,
``docs/*.md``, ``README.md``. A path names a file (``src/app.py``), or a folder and
everything under it (``src/api``; a last segment without a dot);
``*``, ``?`` and ``[...]`` match within one path segment, ``**`` any number of them.
``writes: []`` says the step changes no file. A step without ``writes`` says nothing,
and maker then runs it alone (``maker.executor.waves``): parallelism is declined on
uncertainty.

:func:`may_overlap` answers "could a file match both?" conservatively: it says no only
when some segment tells the two apart for certain (two different literal names, or a
literal a pattern cannot match). Lockfiles, migrations and generated code are shared
by nature (:data:`SHARED`), as is anything a person lists under ``shared`` in
``plans/settings.yaml``: a step whose claim may touch one runs alone.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

from maker.errors import Problem

__all__ = ["MAX_WRITES", "SHARED", "beside", "may_overlap", "shared_hit", "writes_problems"]

MAX_WRITES = 200  # entries in one step's `writes`
_MAX_CHARS = 300  # characters in one entry
_MAX_SEGMENTS = 64

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
    parts = [p for p in text.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    out: list[str] = []
    for part in parts:  # repeated `**` mean one `**` (and cannot backtrack)
        if not (part == "**" and out and out[-1] == "**"):
            out.append(part)
    return out


def _is_pattern(segment: str) -> bool:
    return any(c in segment for c in "*?[")


def may_overlap(a: str, b: str) -> bool:
    """Whether some file could match both ``a`` and ``b``. True unless the segments
    tell them apart for certain (two patterns within one segment are taken to meet)."""
    x, y = tuple(_segments(a)), tuple(_segments(b))
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:  # (positions in x and y; at most 65 x 65 of them)
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(x) and j == len(y):
            return True
        if i == len(x) or j == len(y):
            done, rest = (x, y[j:]) if i == len(x) else (y, x[i:])
            if all(seg == "**" for seg in rest) or _folder(done):
                return True
            continue
        if x[i] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif y[j] == "**":
            todo += [(i, j + 1), (i + 1, j)]
        elif _meet(x[i], y[j]):
            todo.append((i + 1, j + 1))
    return False


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


def shared_hit(writes: Sequence[str], shared: Iterable[str]) -> str | None:
    """The first of ``writes`` that names a shared file (:data:`SHARED` and the
    project's own), with the shared glob it names; None when none does. (A claim such
    as ``src/**`` may hold a stray shared file too: the landing compares every file, so
    two steps writing it are a conflict, not a silent merge.)"""
    listed = [*SHARED, *shared]
    for entry in writes:
        claim = tuple(_segments(entry))
        for glob in listed:
            if _covers(tuple(_segments(glob)), claim):
                return f"{entry} (shared: {glob})"
    return None


def _covers(pattern: tuple[str, ...], claim: tuple[str, ...]) -> bool:
    """Whether ``claim``, read as a path (its own wildcards as plain text), is matched
    by ``pattern`` (``db/migrations`` by ``**/migrations/**``). A folder that merely
    could hold a shared file is not: its landing compares every file."""
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if j == len(claim):
            if all(seg == "**" for seg in pattern[i:]):
                return True
            continue
        if i == len(pattern):
            continue
        if pattern[i] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif fnmatch.fnmatchcase(claim[j], pattern[i]):
            todo.append((i + 1, j + 1))
    return False


def beside(steps: Sequence[tuple[int, list[int], list[str] | None]],
           shared: Iterable[str] = ()) -> dict[int, list[int]]:
    """For ``(number, depends_on, writes)`` of each step: the steps each may run beside
    (neither depends on the other, however indirectly; both say what they write; no
    claim names a shared file; no two claims may meet). Quadratic: for a plan a person
    reads (PLAN.md draws it up to a few hundred steps)."""
    listed = list(shared)
    deps = {n: set(d) for n, d, _ in steps}
    above: dict[int, set[int]] = {}
    for n, _, _ in sorted(steps):  # (a step depends only on earlier ones)
        seen = set(deps[n])
        for d in deps[n]:
            seen |= above.get(d, set())
        above[n] = seen
    free = {n: w for n, _, w in steps if w is not None and shared_hit(w, listed) is None}
    out: dict[int, list[int]] = {}
    for n, w in free.items():
        out[n] = [m for m, v in free.items() if m != n and m not in above[n]
                  and n not in above[m]
                  and not any(may_overlap(x, y) for x in w for y in v)]
    return {n: ms for n, ms in out.items() if ms}


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
