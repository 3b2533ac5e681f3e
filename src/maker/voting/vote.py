"""First-to-ahead-by-k: sample answers until one leads every other by k votes.

A sample that ``flagged`` rejects is discarded and does not vote. Samples run concurrently, up
to ``parallel`` at once, but no more than the votes that could still be needed: the vote starts
``min(parallel, k)`` samples (the paper's "k in parallel first") and then only as many as the
lead still lacks, so a unanimous vote draws exactly ``k`` samples. A ``parallel`` above ``k``
adds that many speculative samples, which may be cancelled unused once a winner is decided.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from maker.voting.canonical import canonical

if TYPE_CHECKING:
    import asyncio

__all__ = ["DEFAULT_SAMPLES_PER_K", "Ballot", "Tally", "Vote", "first_to_ahead_by_k"]

T = TypeVar("T")

#: Without ``max_samples``, a vote draws at most ``DEFAULT_SAMPLES_PER_K * k`` samples. At
#: p = 0.9 a vote needs about k / (2p - 1) = 1.25 k samples on average; ten times k leaves an
#: undecided vote (a step whose samples keep disagreeing) to be reported, not paid for forever.
DEFAULT_SAMPLES_PER_K = 10


@dataclass(frozen=True)
class Ballot(Generic[T]):
    """One sample as the vote saw it: the answer, its key, and why it was discarded, if it was."""

    answer: T
    key: Hashable | None  # None when flagged: a flagged answer has no vote
    flag: str | None = None


@dataclass(frozen=True)
class Vote(Generic[T]):
    """The outcome of ``first_to_ahead_by_k``.

    ``winner`` is the first answer drawn with the winning key (None, and ``decided`` False,
    when no answer led by ``k`` within ``max_samples``). ``votes`` maps each key to its count;
    ``samples`` counts the samples that returned and were counted (flagged ones included);
    ``unused`` those started but not counted: cancelled once the winner was known, or
    returned after it (speculative samples, ``parallel > k``). ``ballots`` holds every
    returned sample in the order it arrived.
    """

    winner: T | None
    winner_key: Hashable | None
    decided: bool
    k: int
    votes: Mapping[Hashable, int]
    samples: int
    unused: int
    max_samples: int
    ballots: tuple[Ballot[T], ...]

    @property
    def answers(self) -> tuple[T, ...]:
        """The answers that voted, in arrival order."""
        return tuple(b.answer for b in self.ballots if b.flag is None)

    @property
    def flagged(self) -> int:
        """How many samples were discarded by the red-flagger."""
        return sum(1 for b in self.ballots if b.flag is not None)

    @property
    def flag_reasons(self) -> tuple[str, ...]:
        """Why each discarded sample was discarded, in arrival order."""
        return tuple(b.flag for b in self.ballots if b.flag is not None)

    @property
    def margin(self) -> int:
        """The leader's votes minus the runner-up's (>= k exactly when decided)."""
        return _lead(self.votes)


def _lead(counts: Mapping[Hashable, int]) -> int:
    first = second = 0
    for n in counts.values():
        if n > first:
            first, second = n, first
        elif n > second:
            second = n
    return first - second


def _check_int(name: str, value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1 ({what}); got {value!r}")
    return value


class Tally(Generic[T]):
    """The vote counted one answer at a time: the rule of ``first_to_ahead_by_k`` for a
    caller that draws its own samples (the plugin, whose samples are subagents the main
    agent launches, and whose ballots are replayed from maker's state).

    ``add(answer)`` counts an answer (a ``flagged`` one is kept as a ballot with no vote,
    and an answer added once the vote is decided is refused: ValueError); ``need()`` is
    the fewest further votes that could decide; ``decided`` and ``winner_key`` say whether
    one key leads every other by ``k``; ``vote(max_samples)`` is the Vote so far.
    """

    def __init__(self, k: int, key: Callable[[T], Hashable] | None = None,
                 flagged: Callable[[T], object] | None = None) -> None:
        k = _check_int("k", k, "the lead the winning answer needs")
        self.k, self.flagged = k, flagged
        self.key: Callable[[T], Hashable] = canonical if key is None else key
        self.counts: dict[Hashable, int] = {}
        self.first: dict[Hashable, T] = {}
        self.ballots: list[Ballot[T]] = []
        self.winner_key: Hashable | None = None
        self.decided = False

    def need(self) -> int:
        """The fewest further votes that could decide the vote."""
        return self.k - _lead(self.counts)

    def add(self, answer: T) -> None:
        if self.decided:
            raise ValueError(f"the vote is already decided (a lead of {self.k}): no "
                             "further answer is counted")
        if self.flagged is not None:
            reason = self.flagged(answer)
            if reason is not None and reason is not False:
                text = "(no reason given)" if reason is True or reason == "" else str(reason)
                self.ballots.append(Ballot(answer, None, text))
                return
        key = self.key(answer)
        self.ballots.append(Ballot(answer, key, None))
        counts = self.counts
        n = counts.get(key, 0) + 1
        counts[key] = n
        if n == 1:
            self.first[key] = answer
        if n >= self.k:
            other = max((c for kk, c in counts.items() if kk != key), default=0)
            if n - other >= self.k:
                self.decided, self.winner_key = True, key

    def vote(self, max_samples: int, unused: int = 0) -> Vote[T]:
        key = self.winner_key
        return Vote(
            winner=self.first[key] if self.decided else None,
            winner_key=key, decided=self.decided, k=self.k,
            votes=MappingProxyType(dict(self.counts)), samples=len(self.ballots),
            unused=unused, max_samples=max_samples, ballots=tuple(self.ballots))


async def first_to_ahead_by_k(
    sample: Callable[[], Awaitable[T]],
    k: int,
    *,
    key: Callable[[T], Hashable] | None = None,
    flagged: Callable[[T], object] | None = None,
    parallel: int | None = None,
    max_samples: int | None = None,
) -> Vote[T]:
    """Draw answers from ``sample()`` until one has ``k`` more votes than any other.

    ``key(answer)`` is the hashable form compared for equality (default: ``canonical``).
    ``flagged(answer)`` returns why the answer is discarded, or None (or False) to let it vote;
    a discarded answer never votes but counts toward ``max_samples``. Up to ``parallel``
    samples run at once (default ``k``; never more than could still be needed, plus
    ``parallel - k`` speculative ones when ``parallel > k``). ``max_samples`` bounds the samples
    started (default ``DEFAULT_SAMPLES_PER_K * k``); when it is spent without a winner the
    returned Vote is undecided.

    Returns the Vote. Raises ValueError for ``k``, ``parallel`` or ``max_samples`` not whole
    numbers >= 1, or ``max_samples < k`` (no answer could ever lead by ``k``).

    An exception from ``sample()`` (or from ``key``/``flagged``) is not a vote: it propagates
    unchanged, after the samples still running are cancelled and awaited. A sampler is where an
    API failure or a spent budget surfaces, and those must stop the run, not be outvoted; a
    sampler that got a bad answer returns it and lets ``flagged`` discard it.
    """
    k = _check_int("k", k, "the lead the winning answer needs")
    parallel = k if parallel is None else _check_int(
        "parallel", parallel, "how many samples may run at once")
    if max_samples is None:
        max_samples = DEFAULT_SAMPLES_PER_K * k
    max_samples = _check_int("max_samples", max_samples, "the most samples the vote may draw")
    if max_samples < k:
        raise ValueError(
            f"max_samples ({max_samples}) is less than k ({k}): no answer could ever lead by "
            f"k votes; raise max_samples to at least k (the default is {DEFAULT_SAMPLES_PER_K}*k)")
    tally: Tally[T] = Tally(k, key, flagged)
    if parallel == 1:
        while not tally.decided and len(tally.ballots) < max_samples:
            tally.add(await sample())
        return tally.vote(max_samples, 0)
    return await _concurrent(sample, tally, parallel, max_samples)


async def _concurrent(sample: Callable[[], Awaitable[T]], tally: Tally[T], parallel: int,
                      max_samples: int) -> Vote[T]:
    # (asyncio here, not at the top: the vote's tally is read on the SubagentStop hook's
    # path, which has no event loop; in a coroutine asyncio is loaded already.)
    import asyncio

    loop = asyncio.get_running_loop()
    extra = max(0, parallel - tally.k)
    tasks: list[asyncio.Task[None]] = []
    # Each draw hands its outcome (answer, or the exception to raise) straight to the vote and
    # wakes it: one loop iteration per batch of samples, no done-callback hop.
    outcomes: deque[tuple[bool, Any]] = deque()
    wake: list[asyncio.Future[None]] = []
    closing = False
    started = in_flight = 0

    async def draw() -> None:
        nonlocal in_flight
        try:
            outcome: tuple[bool, Any] = (True, await sample())
        except BaseException as exc:  # handed to the vote, which raises it
            if closing:
                raise
            outcome = (False, exc)
        in_flight -= 1
        outcomes.append(outcome)
        if wake and not wake[0].done():
            wake[0].set_result(None)

    try:
        while not tally.decided:
            room = min(parallel, tally.need() + extra, max_samples - started) - in_flight
            if room == 1 and not in_flight and not outcomes:
                # One sample and nothing else in flight: await it here, without a task.
                started += 1
                tally.add(await sample())
                continue
            for _ in range(room):
                started += 1
                in_flight += 1
                tasks.append(loop.create_task(draw()))
            if not in_flight and not outcomes:
                break  # max_samples spent, no winner
            if not outcomes:
                wake.append(loop.create_future())
                try:
                    await wake[0]
                finally:
                    wake.clear()
            while outcomes and not tally.decided:
                ok, value = outcomes.popleft()
                if not ok:
                    raise value
                tally.add(value)
    finally:
        # Whatever still runs is not needed: cancel it and wait, so no sample outlives the vote.
        # A result (or an error) that arrived after the decision is not counted.
        closing = True
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    return tally.vote(max_samples, started - len(tally.ballots))
