"""The voting law: how likely first-to-ahead-by-k picks the right answer, and the k a task needs.

With per-sample success ``p`` racing one wrong alternative, the right answer is the first to lead
by ``k`` with probability ``p_step = 1 / (1 + ((1-p)/p)^k)`` (the gambler's ruin), ``s``
independent steps all succeed with ``p_task = p_step^s``, and the smallest ``k`` reaching a
whole-task success ``t`` is ``k_min = ceil(ln(t^(-1/s) - 1) / ln((1-p)/p))`` (the MAKER paper,
Meyerson et al., arXiv 2511.09030).

The arithmetic is done in logarithms (``log1p``/``expm1``): at ``s = 1,048,575`` the quantity
``t^(-1/s) - 1`` is about 5e-8, which ``t ** (-1 / s) - 1`` computes with only half its digits.
"""

from __future__ import annotations

import math

__all__ = ["k_min", "p_step", "p_task"]


def _check_p(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ValueError(f"p must be a number in (0.5, 1], the per-sample success rate; got {p!r}")
    p = float(p)
    if math.isnan(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in (0.5, 1]; got {p!r}")
    if p <= 0.5:
        raise ValueError(
            f"p = {p!r}: voting cannot converge when a sample is right no more often than wrong "
            "(p <= 0.5); the wrong answer wins the race at least as often as the right one, and "
            "a larger k only makes that surer. Make the step smaller or clearer, red-flag the "
            "bad answers it gives, or use a stronger model, until p > 0.5.")
    return p


def _check_count(name: str, value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number >= 1 ({what}); got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1 ({what}); got {value}")
    return value


def _log_ratio(p: float) -> float:
    """ln((1-p)/p), accurate for p close to 1 (1 - p is exact for p in [0.5, 1])."""
    return math.log(1.0 - p) - math.log(p)


def _log_p_step(p: float, k: int) -> float:
    """ln(p_step) = -ln(1 + r^k), r = (1-p)/p, with r^k taken in logarithms (no underflow)."""
    if p == 1.0:
        return 0.0
    return -math.log1p(math.exp(k * _log_ratio(p)))


def p_step(p: float, k: int) -> float:
    """The chance that first-to-ahead-by-``k`` picks the right answer when each sample is right
    with probability ``p`` and otherwise gives the one wrong alternative.

    Returns a probability in (0.5, 1]. Raises ValueError for ``p <= 0.5`` (voting cannot
    converge), ``p`` outside [0, 1] or NaN, or ``k`` not a whole number >= 1.
    """
    p = _check_p(p)
    k = _check_count("k", k, "the lead the winning answer needs")
    return math.exp(_log_p_step(p, k))


def p_task(p: float, k: int, steps: int) -> float:
    """The chance that all ``steps`` independent votes are right: ``p_step(p, k) ** steps``.

    Raises ValueError as ``p_step`` does, and for ``steps`` not a whole number >= 1.
    """
    p = _check_p(p)
    k = _check_count("k", k, "the lead the winning answer needs")
    steps = _check_count("steps", steps, "the number of voted steps in the task")
    return math.exp(steps * _log_p_step(p, k))


def k_min(steps: int, p: float, target: float = 0.95) -> int:
    """The smallest ``k`` for which ``steps`` votes all succeed with probability >= ``target``.

    ``k_min = ceil(ln(target^(-1/steps) - 1) / ln((1-p)/p))``, at least 1; ``p == 1`` needs
    ``k = 1``. The closed form is checked against ``p_task`` so that rounding at an integer
    boundary cannot return a ``k`` one too large or too small.

    Raises ValueError for ``p <= 0.5`` (voting cannot converge), ``p`` outside [0, 1] or NaN,
    ``steps`` not a whole number >= 1, or ``target`` not strictly between 0 and 1.
    """
    steps = _check_count("steps", steps, "the number of voted steps in the task")
    p = _check_p(p)
    if isinstance(target, bool) or not isinstance(target, (int, float)) or math.isnan(target) \
            or not 0.0 < target < 1.0:
        raise ValueError(
            f"target must be a probability strictly between 0 and 1 (the whole-task success "
            f"wanted, e.g. 0.95); got {target!r}")
    if p == 1.0:
        return 1
    # t^(-1/s) - 1 = expm1(-ln(t) / s): the per-step failure odds the task can afford.
    allowed = math.expm1(-math.log(target) / steps)
    k = max(1, math.ceil(math.log(allowed) / _log_ratio(p)))
    # Settle the boundary with the very values p_task returns, so the two never disagree.
    while math.exp(steps * _log_p_step(p, k)) < target:
        k += 1
    while k > 1 and math.exp(steps * _log_p_step(p, k - 1)) >= target:
        k -= 1
    return k


Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``successes / n`` (95% by
    default): what a measured rate of agreement, or of success, can be trusted to.

    Raises ValueError for ``n`` < 1 or ``successes`` outside 0..n."""
    n = _check_count("n", n, "the number of trials")
    if isinstance(successes, bool) or not isinstance(successes, int) or not 0 <= successes <= n:
        raise ValueError(f"successes must be a whole number from 0 to n={n}; got {successes!r}")
    phat = successes / n
    denom = 1 + z ** 2 / n
    centre = (phat + z ** 2 / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z ** 2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
