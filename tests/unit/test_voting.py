"""The voting law (maker.voting.law) against the MAKER paper's table and a 60-digit reference.

The paper (Meyerson et al., arXiv 2511.09030) tabulates k_min for s = 1,048,575 steps (20-disk
Towers of Hanoi) and t = 0.95 at each model's measured per-step error rate. Three of its rows are
quoted in docs/voting.md and checked here as the paper's figures. The other rows
could not be found in the material available to us, so the table is completed with seven more
error rates whose k_min is computed independently, in 60-digit decimal arithmetic, as the
smallest k whose p_task reaches t; those seven are the law's figures, not the paper's.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import pytest

from maker.voting import k_min, p_step, p_task

S = 1_048_575  # 2^20 - 1 moves: Towers of Hanoi with 20 disks
T = 0.95

# (1 - p, k_min) from the paper's table, as quoted in docs/voting.md.
PAPER_ROWS = [(0.0022, 3), (0.0358, 6), (0.1839, 12)]
# Further per-step error rates; their k_min comes from the reference below, not from the paper.
LAW_RATES = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.1, 0.3]


def _ref_p_task(error: float, k: int, steps: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(repr(error))
        ratio = e / (1 - e)
        return (1 / (1 + ratio ** k)) ** steps


def _ref_k_min(error: float, steps: int, target: float) -> int:
    k = 1
    while _ref_p_task(error, k, steps) < Decimal(repr(target)):
        k += 1
    return k


@pytest.mark.parametrize(("error", "expected"), PAPER_ROWS)
def test_k_min_matches_the_papers_table(error: float, expected: int) -> None:
    assert k_min(S, 1 - error, T) == expected
    assert k_min(S, 1 - error) == expected  # t = 0.95 is the default


@pytest.mark.parametrize("error", [e for e, _ in PAPER_ROWS] + LAW_RATES)
def test_k_min_is_the_smallest_k_that_reaches_the_target(error: float) -> None:
    k = k_min(S, 1 - error, T)
    assert k == _ref_k_min(error, S, T)
    assert p_task(1 - error, k, S) >= T
    if k > 1:
        assert p_task(1 - error, k - 1, S) < T


def test_the_ten_rows_rise_with_the_error_rate() -> None:
    rows = sorted([e for e, _ in PAPER_ROWS] + LAW_RATES)
    assert len(rows) == 10
    ks = [k_min(S, 1 - e) for e in rows]
    assert ks == sorted(ks)
    assert ks[0] >= 1 and ks[-1] > 12


@pytest.mark.parametrize(("p", "k", "steps"), [
    (0.9978, 3, S), (0.9642, 6, S), (0.8161, 12, S), (1 - 1e-9, 1, S), (0.51, 40, 1000),
    (0.999999, 2, 10**9), (0.75, 2, 1)])
def test_p_task_agrees_with_60_digits(p: float, k: int, steps: int) -> None:
    ref = _ref_p_task(1 - p, k, steps)
    got = p_task(p, k, steps)
    assert got == pytest.approx(float(ref), rel=1e-11)
    # The failure probability, the small number that matters, keeps its digits too.
    assert 1 - got == pytest.approx(float(1 - ref), rel=1e-5, abs=1e-15)


def test_p_step_is_the_gamblers_ruin() -> None:
    assert p_step(0.9, 1) == pytest.approx(0.9)
    assert p_step(0.75, 2) == pytest.approx(0.9)  # 1 / (1 + (1/3)^2)
    assert p_step(0.6, 5) == pytest.approx(1 / (1 + (2 / 3) ** 5))
    assert p_step(1.0, 3) == 1.0
    assert p_step(0.99, 200) == 1.0  # r^k underflows to 0, not to an error


def test_p_task_is_p_step_to_the_power_of_the_steps() -> None:
    assert p_task(0.8, 3, 50) == pytest.approx(p_step(0.8, 3) ** 50)
    assert p_task(0.8, 3, 1) == pytest.approx(p_step(0.8, 3))


def test_k_min_edges() -> None:
    assert k_min(S, 1.0) == 1  # a perfect sampler needs no vote
    assert k_min(1, 0.99, 0.5) == 1  # one vote already beats the target
    assert k_min(1, 0.6, 0.9) == _ref_k_min(0.4, 1, 0.9)
    assert k_min(S, 1 - 1e-12) == 1
    # Theta(ln s): k grows by about a constant each time s is squared.
    assert k_min(10**12, 0.9) <= 2 * k_min(10**6, 0.9)


@pytest.mark.parametrize("p", [0.5, 0.3, 0.0, 0.5 - 1e-12])
def test_p_at_most_one_half_cannot_converge(p: float) -> None:
    for call in (lambda: k_min(S, p), lambda: p_step(p, 3), lambda: p_task(p, 3, S)):
        with pytest.raises(ValueError, match="cannot converge") as info:
            call()
        assert "p > 0.5" in str(info.value)  # and says what to do


@pytest.mark.parametrize(("call", "words"), [
    (lambda: k_min(0, 0.9), "steps must be >= 1"),
    (lambda: k_min(-5, 0.9), "steps must be >= 1"),
    (lambda: k_min(10.0, 0.9), "steps must be a whole number"),  # type: ignore[arg-type]
    (lambda: k_min(True, 0.9), "steps must be a whole number"),
    (lambda: k_min(10, 1.5), "probability"),
    (lambda: k_min(10, float("nan")), "probability"),
    (lambda: k_min(10, "0.9"), "must be a number"),  # type: ignore[arg-type]
    (lambda: k_min(10, 0.9, 1.0), "strictly between 0 and 1"),
    (lambda: k_min(10, 0.9, 0.0), "strictly between 0 and 1"),
    (lambda: k_min(10, 0.9, float("nan")), "strictly between 0 and 1"),
    (lambda: k_min(10, 0.9, -0.1), "strictly between 0 and 1"),
    (lambda: p_step(0.9, 0), "k must be >= 1"),
    (lambda: p_step(0.9, 2.0), "k must be a whole number"),  # type: ignore[arg-type]
    (lambda: p_task(0.9, 3, 0), "steps must be >= 1"),
    (lambda: p_task(0.9, False, 3), "k must be a whole number"),
    (lambda: p_task(float("inf"), 3, 3), "probability"),
])
def test_arguments_out_of_range_are_refused_clearly(call: object, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        call()  # type: ignore[operator]


def test_k_min_closed_form_matches_the_design() -> None:
    # The closed form in docs/voting.md, written naively, agrees where float has the digits.
    p, s = 0.9, 1000
    naive = math.ceil(math.log(T ** (-1 / s) - 1) / math.log((1 - p) / p))
    assert k_min(s, p) == naive


BOUNDARY = [(p, k, s) for p in (0.6, 0.9, 0.9978, 0.99) for k in range(1, 16)
            for s in (1, 7, 1000, S)]


def test_k_min_is_exact_at_integer_boundaries() -> None:
    # A target equal to p_task(p, k, s) puts the closed form on an integer, where one
    # rounding ulp would give k + 1; just above it, the answer must be k + 1, not k.
    checked = 0
    for p, k, s in BOUNDARY:
        target = p_task(p, k, s)
        if not 0.0 < target < 1.0 or p_task(p, k + 1, s) >= 1.0:
            continue
        assert k_min(s, p, target) == k or p_task(p, k - 1, s) >= target, (p, k, s)
        above = math.nextafter(target, 1.0)
        if p_task(p, k, s) < above:
            assert k_min(s, p, above) == k + 1 or p_task(p, k + 1, s) < above, (p, k, s)
        checked += 1
    assert checked > 100
