"""What deciding which steps may run together costs (``maker.planner.writes``): bounded in
checks whatever the planner wrote, with the answers of the unbounded search kept.

A QA pass found a 4-step plan the linter accepts (200 entries a step, like
``**/s0/**/s0/.../z0.s0``) on which ``maker plan write`` never finished: every PLAN.md
rendering compared 6 x 2 x 40,000 pairs of entries at up to 65 x 65 search states each.
Work is counted here, never timed: ``_meets`` and ``_covers`` (every search) are wrapped
by a counter that fails the test as soon as it passes the bound.

The one cache (``_globs``, the shared globs read) is a function of its argument alone:
``test_shared_globs_of_one_call_do_not_leak_into_the_next`` holds it."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.step_plans import make_step, write
from maker.executor.parallel.waves import together
from maker.executor.state.schedule import plan_schedule
from maker.planner import writes
from maker.planner.writes import Work, beside, clash, may_overlap, shared_hit

Steps = list[tuple[int, list[int], list[str] | None]]


def _heavy(k: int, i: int, last: str) -> str:
    """An entry of step ``k`` as QA wrote it: 62 segments of ``**`` and ``s{k}``."""
    return "/".join(["**", f"s{k}"] * 31) + f"/z{i}{last}"


def _plan(last: Callable[[int], str]) -> Steps:
    return [(k, [], [_heavy(k, i, last(k)) for i in range(writes.MAX_WRITES)])
            for k in range(4)]


QA = _plan(lambda k: f".s{k}")  # the plan QA reproduced: file names tell them apart
HEAVY = _plan(lambda k: ".*")  # nothing cheap tells them apart: every pair is a search
BOUND = 6 * (writes.PAIR_BUDGET + 1) + 4 * (writes.SHARED_BUDGET + 1)  # 6 pairs of steps, 4 steps


@pytest.fixture
def count(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], list[int]]:
    """Counting from now on: the checks spent by every search (a call, and the states
    it visited); more than ``bound`` fails at once, so a broken budget fails fast
    rather than hanging."""

    def arm(bound: int = BOUND) -> list[int]:
        spent = [0]

        def wrap(real: Callable[..., tuple[bool, int]]) -> Callable[..., tuple[bool, int]]:
            def counting(*args: Any) -> tuple[bool, int]:
                answer = real(*args)
                spent[0] += 1 + answer[1]
                assert spent[0] <= bound, f"more than {bound:,} checks"
                return answer
            return counting

        monkeypatch.setattr(writes, "_meets", wrap(writes._meets))
        monkeypatch.setattr(writes, "_covers", wrap(writes._covers))
        return spent
    return arm


@pytest.fixture
def counted(count: Callable[[int], list[int]]) -> list[int]:
    """Counting from the test's start."""
    return count(BOUND)


def test_the_hostile_plans_pass_the_linter() -> None:
    for _, _, w in QA + HEAVY:
        assert writes.writes_problems(w, "plan[0].", 0) == []


def test_file_names_tell_the_qa_plans_steps_apart_cheaply(counted: list[int]) -> None:
    work = Work()
    assert beside(QA, (), work) == {n: [m for m in range(4) if m != n] for n in range(4)}
    assert 0 < counted[0] <= BOUND and work.spent <= BOUND


def test_claims_too_costly_to_tell_apart_are_taken_to_meet(counted: list[int]) -> None:
    work = Work()
    assert beside(HEAVY, (), work) == {}  # (they cannot meet: but proving it costs more)
    assert counted[0] <= BOUND and work.spent <= BOUND
    w, v = HEAVY[0][2], HEAVY[1][2]
    assert w is not None and v is not None
    assert "take more than 50,000 checks to tell apart" in clash(w, v)
    assert clash(v, w)  # (either order: PLAN.md compares each pair once, a wave either way)
    assert not may_overlap(w[0], v[0])  # one pair alone is still searched to the end


@pytest.mark.parametrize(("plan", "picked"), [(QA, [0, 1, 2, 3]), (HEAVY, [0])])
def test_a_wave_picks_as_plan_md_says(project: Path, count: Callable[[int], list[int]],
                                      plan: Steps, picked: list[int]) -> None:
    steps = []
    for n, _, w in plan:
        step = make_step(n, n + 1 if n < 3 else -1, depends_on=[])
        object.__setattr__(step, "writes", w)
        steps.append(step)
    spent = count(3 * BOUND)
    store = write(project, steps)  # (writing it renders PLAN.md, with beside, twice)
    together_in_plan_md = "## Steps that may run together" in store.overview_path.read_text()
    assert together_in_plan_md is (len(picked) > 1)
    stored, before = store.load(), spent[0]
    assert together(stored, plan_schedule(store, stored), [0, 1, 2, 3], (), 4) == picked
    assert spent[0] - before <= BOUND


def test_a_call_stops_at_its_budget_and_says_it_does_not_know() -> None:
    steps: Steps = [(n, [], [f"src/m{n}/**"]) for n in range(40)]
    assert beside(steps) is not None
    assert beside(steps, (), Work(limit=100)) is None


def test_plan_md_says_when_it_did_not_work_out_which_steps_run_together(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "beside", lambda *a: None)
    store = write(project, [make_step(0, -1)])
    assert "Not worked out here" in store.overview_path.read_text()


def test_a_long_shared_list_is_bounded_too(counted: list[int]) -> None:
    # (settings allow 1,000 globs; each of these names what the entries hold, not in order)
    shared = ["/".join(["**", "a"] * (1 + k % 30)) + "/**/b/**" for k in range(1000)]
    entries = ["b/" + "/".join(["a"] * 62) + f"/f{i}.py" for i in range(200)]
    hit = shared_hit(entries, shared)
    assert hit is not None and "maybe" in hit
    assert counted[0] <= writes.SHARED_BUDGET + 1


def test_shared_globs_of_one_call_do_not_leak_into_the_next() -> None:
    assert shared_hit(["src/app.py"], ["src/*.py"]) is not None
    assert shared_hit(["src/app.py"], ()) is None
    assert shared_hit(["src/app.py"], ["docs/**"]) is None


# The search as it was before the budget (and its cheap first checks): the reference.
def _folder(s: tuple[str, ...]) -> bool:
    return not s or (not any(c in s[-1] for c in "*?[") and "." not in s[-1].lstrip("."))


def _meet(x: str, y: str) -> bool:
    px, py = (any(c in s for c in "*?[") for s in (x, y))
    return (px and py) or (fnmatch.fnmatchcase(y, x) if px else
                           fnmatch.fnmatchcase(x, y) if py else x == y)


def _reference_overlap(a: str, b: str) -> bool:
    x, y = tuple(writes._segments(a)), tuple(writes._segments(b))
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(x) or j == len(y):
            done, rest = (x, y[j:]) if i == len(x) else (y, x[i:])
            if all(s == "**" for s in rest) or _folder(done):
                return True
            continue
        if "**" in (x[i], y[j]):
            todo += [(i + 1, j), (i, j + 1)]
        elif _meet(x[i], y[j]):
            todo.append((i + 1, j + 1))
    return False


def _reference_covers(glob: str, entry: str) -> bool:
    p, c = tuple(writes._segments(glob)), tuple(writes._segments(entry))
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if j == len(c):
            if all(s == "**" for s in p[i:]):
                return True
        elif i < len(p) and p[i] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif i < len(p) and fnmatch.fnmatchcase(c[j], p[i]):
            todo.append((i + 1, j + 1))
    return False


SEGMENTS = ["a", "b", "a.py", ".x", "*", "*.py", "**", "?", "[ab]", "a*", "[!a]", "x.lock",
            "migrations", "uv.lock", "."]
ENTRY = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5).map("/".join)


@settings(max_examples=600, deadline=None)
@given(ENTRY, ENTRY)
def test_overlap_answers_as_the_unbounded_search(a: str, b: str) -> None:
    meet = _reference_overlap(a, b)
    assert may_overlap(a, b) is meet and bool(clash([b], [a])) is meet
    assert clash([a], [b]) == (f"{a} and {b} may meet" if meet else "")


@settings(max_examples=600, deadline=None)
@given(ENTRY, ENTRY)
def test_shared_answers_as_the_unbounded_search(glob: str, entry: str) -> None:
    expected = any(_reference_covers(g, entry) for g in (*writes.SHARED, glob))
    assert (shared_hit([entry], [glob]) is not None) is expected


def test_steps_clash_as_any_pair_of_their_entries_would() -> None:
    rng = random.Random(7)
    for _ in range(300):
        w = ["/".join(rng.choices(SEGMENTS, k=rng.randint(1, 4))) for _ in range(3)]
        v = ["/".join(rng.choices(SEGMENTS, k=rng.randint(1, 4))) for _ in range(3)]
        meet = any(_reference_overlap(x, y) for x in w for y in v)
        assert bool(clash(w, v)) is bool(clash(v, w)) is meet
