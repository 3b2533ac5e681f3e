"""first_to_ahead_by_k on scripted samplers: what votes, when it stops, what runs at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maker.voting import DEFAULT_SAMPLES_PER_K, Vote, canonical, first_to_ahead_by_k


class Script:
    """A scripted sampler: answers in order (cycling), optional delays, a record of what ran."""

    def __init__(self, answers: Iterable[Any], delays: Iterable[float] | None = None,
                 raise_at: int | None = None) -> None:
        self.answers = list(answers)
        self.delays = list(delays) if delays is not None else None
        self.raise_at = raise_at
        self.calls = 0
        self.running = 0
        self.max_running = 0
        self.cancelled: list[int] = []

    async def __call__(self) -> Any:
        n = self.calls
        self.calls += 1
        answer = self.answers[n % len(self.answers)]
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.delays is not None:
                await asyncio.sleep(self.delays[n % len(self.delays)])
            if n == self.raise_at:
                raise RuntimeError(f"sample {n}: the API is down")
            return answer
        except asyncio.CancelledError:
            self.cancelled.append(n)
            raise
        finally:
            self.running -= 1


def too_long(answer: Any) -> str | None:
    return "longer than 750 tokens" if answer == "LONG" else None


async def test_a_unanimous_vote_draws_exactly_k_samples() -> None:
    script = Script(["A"])
    vote = await first_to_ahead_by_k(script, 3)
    assert (vote.decided, vote.winner, vote.samples, vote.unused) == (True, "A", 3, 0)
    assert script.calls == 3 and vote.margin == 3 and dict(vote.votes) == {"A": 3}


@pytest.mark.parametrize("parallel", [1, 2, 3])
async def test_a_flagged_answer_never_votes(parallel: int) -> None:
    # Flagged answers would win on their own; discarded, they neither vote nor block.
    script = Script(["LONG", "A", "LONG", "LONG", "A", "LONG", "A"])
    vote = await first_to_ahead_by_k(script, 3, flagged=too_long, parallel=parallel,
                                     max_samples=20)
    assert vote.winner == "A" and vote.decided
    assert dict(vote.votes) == {"A": 3}
    assert canonical("LONG") not in vote.votes
    assert vote.flagged == 4 and vote.samples == 7
    assert vote.flag_reasons == ("longer than 750 tokens",) * 4
    assert vote.answers == ("A", "A", "A")
    assert [b.key for b in vote.ballots if b.flag] == [None] * 4


async def test_flagged_samples_count_toward_max_samples() -> None:
    script = Script(["LONG"])
    vote = await first_to_ahead_by_k(script, 2, flagged=too_long, max_samples=5)
    assert not vote.decided and vote.winner is None
    assert vote.samples == 5 == script.calls and vote.flagged == 5 and dict(vote.votes) == {}


@pytest.mark.parametrize(("verdict", "votes"), [
    (None, True), (False, True), (True, False), ("", False), ("bad format", False)])
async def test_what_flagged_may_return(verdict: object, votes: bool) -> None:
    vote = await first_to_ahead_by_k(Script(["A"]), 1, flagged=lambda a: verdict, max_samples=1)
    assert vote.decided is votes
    if not votes:
        assert vote.flag_reasons[0] == (verdict if isinstance(verdict, str) and verdict
                                        else "(no reason given)")


async def test_it_is_first_ahead_by_k_not_first_to_k() -> None:
    # A reaches 2 votes at the 3rd sample but leads by 2 only at the 6th.
    vote = await first_to_ahead_by_k(Script(["A", "B", "A", "B", "A", "A"]), 2, parallel=1)
    assert vote.winner == "A" and vote.samples == 6 and dict(vote.votes) == {"A": 4, "B": 2}


async def test_the_lead_is_over_the_runner_up_among_many() -> None:
    vote = await first_to_ahead_by_k(Script(["A", "B", "C", "A", "A"]), 2, parallel=1)
    assert vote.winner == "A" and vote.samples == 5 and vote.margin == 2


@pytest.mark.parametrize("parallel", [1, 2, 4])
async def test_a_tie_is_undecided_within_max_samples(parallel: int) -> None:
    script = Script(["A", "B"])
    vote = await first_to_ahead_by_k(script, 2, parallel=parallel, max_samples=6)
    assert not vote.decided and vote.winner is None and vote.winner_key is None
    assert dict(vote.votes) == {"A": 3, "B": 3} and vote.margin == 0
    assert vote.samples + vote.unused == 6 == script.calls


@pytest.mark.parametrize(("k", "parallel", "max_samples"), [
    (3, 1, 7), (3, 3, 7), (2, 5, 9), (1, 4, 3)])
async def test_max_samples_bounds_what_is_started(k: int, parallel: int, max_samples: int) -> None:
    script = Script(["A", "B", "C"], delays=[0.001])
    vote = await first_to_ahead_by_k(script, k + 1 if k == 1 else k, parallel=parallel,
                                     max_samples=max_samples)
    assert script.calls == max_samples
    assert vote.samples + vote.unused == max_samples and vote.max_samples == max_samples


async def test_the_default_bound_ends_a_vote_that_never_agrees() -> None:
    script = Script(["A", "B"], delays=[0])
    vote = await asyncio.wait_for(first_to_ahead_by_k(script, 3), timeout=5)
    assert not vote.decided and script.calls == DEFAULT_SAMPLES_PER_K * 3 == vote.max_samples


@pytest.mark.parametrize(("k", "parallel", "at_once"), [
    (3, None, 3), (3, 1, 1), (3, 2, 2), (2, 5, 5), (4, 3, 3)])
async def test_parallel_really_overlaps_samples(k: int, parallel: int | None,
                                                at_once: int) -> None:
    script = Script(["A"], delays=[0.02])
    vote = await first_to_ahead_by_k(script, k, parallel=parallel)
    assert vote.winner == "A"
    assert script.max_running == at_once


async def test_no_more_run_at_once_than_could_still_be_needed() -> None:
    # parallel = k: A, A arrive, the lead is 2 of 3, so one more is enough: nothing extra starts.
    script = Script(["A", "A", "A", "A", "A"], delays=[0.01, 0.01, 0.05])
    vote = await first_to_ahead_by_k(script, 3, parallel=3)
    assert vote.samples == 3 and script.calls == 3 and vote.unused == 0


async def test_outstanding_samples_are_cancelled_once_a_winner_is_decided() -> None:
    # parallel > k: two speculative samples start; the fast ones decide; the slow ones stop.
    script = Script(["A", "A", "B", "B"], delays=[0.001, 0.001, 30, 30])
    vote = await asyncio.wait_for(first_to_ahead_by_k(script, 2, parallel=4), timeout=5)
    assert vote.winner == "A" and vote.samples == 2 and vote.unused == 2
    assert sorted(script.cancelled) == [2, 3] and script.running == 0


async def test_a_sampler_error_propagates_and_stops_the_others() -> None:
    script = Script(["A"], delays=[0.001, 30, 30], raise_at=0)
    with pytest.raises(RuntimeError, match="the API is down"):
        await asyncio.wait_for(first_to_ahead_by_k(script, 3), timeout=5)
    assert sorted(script.cancelled) == [1, 2] and script.running == 0


async def test_a_sequential_sampler_error_propagates() -> None:
    with pytest.raises(RuntimeError):
        await first_to_ahead_by_k(Script(["A"], raise_at=1), 3, parallel=1)


async def test_cancelling_the_vote_cancels_its_samples() -> None:
    script = Script(["A"], delays=[30])
    task = asyncio.ensure_future(first_to_ahead_by_k(script, 3))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(script.cancelled) == [0, 1, 2] and script.running == 0


async def test_answers_that_differ_only_in_form_vote_together() -> None:
    answers = [{"move": [1, 0, 2], "note": "moved  the\tsmallest disk"},
               {"note": " moved the smallest disk\n", "move": [1, 0, 2]},
               {"move": (1, 0, 2), "note": "moved the smallest disk"}]
    vote = await first_to_ahead_by_k(Script(answers), 3)
    assert vote.decided and vote.winner is answers[0] and len(vote.votes) == 1


async def test_a_custom_key_decides_what_is_the_same() -> None:
    vote = await first_to_ahead_by_k(Script(["Yes", "yes!", "YES"]), 3,
                                     key=lambda a: a.lower().strip("!"))
    assert vote.decided and dict(vote.votes) == {"yes": 3}


@pytest.mark.parametrize(("a", "b", "same"), [
    ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, True),
    ("a  b\n", " a b", True),
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": True}, {"a": 1}, False),
    ({"a": 1}, [["a", 1]], False),
    ({"a": [1, 2]}, {"a": [2, 1]}, False),
    ({1, 2}, {2, 1}, True),
    (float("nan"), float("nan"), True),
    ("ab", "a b", False),
    ({"x": {"y": " z "}}, {"x": {"y": "z"}}, True),
])
def test_canonical_form(a: Any, b: Any, same: bool) -> None:
    ka, kb = canonical(a), canonical(b)
    hash(ka)
    assert (ka == kb) is same


async def test_an_unhashable_answer_asks_for_a_key() -> None:
    class Opaque:
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(TypeError, match="pass key="):
        await first_to_ahead_by_k(Script([Opaque()]), 1)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"k": 0}, "k must be a whole number >= 1"),
    ({"k": True}, "k must be a whole number >= 1"),
    ({"k": 2.0}, "k must be a whole number >= 1"),
    ({"k": 3, "parallel": 0}, "parallel must be"),
    ({"k": 3, "max_samples": 0}, "max_samples must be"),
    ({"k": 3, "max_samples": 2}, "no answer could ever lead"),
])
async def test_bad_arguments_are_refused(kwargs: dict[str, Any], words: str) -> None:
    script = Script(["A"])
    with pytest.raises(ValueError, match=words):
        await first_to_ahead_by_k(script, **kwargs)
    assert script.calls == 0


# -- properties -------------------------------------------------------------------------------

def _reference(answers: list[str], k: int, max_samples: int) -> tuple[str | None, int]:
    """The paper's sequential loop, written plainly: (winner, samples drawn)."""
    counts: dict[str, int] = {}
    for n in range(max_samples):
        a = answers[n % len(answers)]
        if a == "LONG":
            continue
        counts[a] = counts.get(a, 0) + 1
        if counts[a] - max((c for b, c in counts.items() if b != a), default=0) >= k:
            return a, n + 1
    return None, max_samples


def _check(vote: Vote[str], k: int) -> None:
    assert vote.samples + vote.unused <= vote.max_samples
    assert sum(vote.votes.values()) + vote.flagged == vote.samples
    if vote.decided:
        assert vote.winner_key is not None
        others = [c for key, c in vote.votes.items() if key != vote.winner_key]
        assert vote.votes[vote.winner_key] - max(others, default=0) >= k
        assert vote.margin >= k
    else:
        assert vote.margin < k and vote.samples + vote.unused == vote.max_samples


@settings(max_examples=150, deadline=None)
@given(answers=st.lists(st.sampled_from(["A", "B", "C", "LONG"]), min_size=1, max_size=12),
       k=st.integers(1, 4), parallel=st.integers(1, 6), extra=st.integers(0, 12),
       suspend=st.booleans())
def test_the_vote_is_the_papers_loop(answers: list[str], k: int, parallel: int, extra: int,
                                     suspend: bool) -> None:
    max_samples = k + extra
    script = Script(answers, delays=[0] if suspend else None)
    vote = asyncio.run(first_to_ahead_by_k(script, k, flagged=too_long, parallel=parallel,
                                           max_samples=max_samples))
    _check(vote, k)
    winner, drawn = _reference(answers, k, max_samples)
    assert vote.winner == winner and vote.decided is (winner is not None)
    if parallel <= k:
        # No speculation: exactly the samples the sequential loop draws, none wasted.
        assert vote.samples == drawn == script.calls and vote.unused == 0
    else:
        assert vote.samples <= drawn  # counted up to the decision, extras unused




async def test_a_lone_sample_runs_in_the_callers_task() -> None:
    # A, then a flagged sample: one more vote is needed and none is in flight, so the third
    # sample is awaited in the vote's own task, without creating one (the fast path).
    seen: list[object] = []
    script = Script(["A", "LONG", "A"])

    async def sample() -> str:
        seen.append(asyncio.current_task())
        return str(await script())

    vote = await first_to_ahead_by_k(sample, 2, parallel=2, flagged=too_long)
    assert vote.winner == "A" and vote.samples == 3
    me = asyncio.current_task()
    assert seen[0] is not me and seen[1] is not me and seen[2] is me


# -- Tally: the same rule, one answer at a time --------------------------------------


def test_tally_counts_one_answer_at_a_time_and_says_what_the_lead_needs() -> None:
    from maker.voting import Tally

    tally: Tally[str] = Tally(3, flagged=lambda a: "no answer" if a == "?" else None)
    assert tally.need() == 3 and not tally.decided
    for answer, need in [("b", 2), ("a", 3), ("?", 3), ("b", 2), ("b", 1)]:
        tally.add(answer)
        assert tally.need() == need and not tally.decided
    tally.add("b")
    assert tally.decided and tally.winner_key == "b" and tally.need() <= 0
    vote = tally.vote(12)
    assert (vote.winner, vote.samples, vote.flagged, vote.margin) == ("b", 6, 1, 3)
    assert vote.flag_reasons == ("no answer",) and vote.max_samples == 12
    with pytest.raises(ValueError, match="already decided"):
        tally.add("a")  # no answer counts once the vote is decided
    with pytest.raises(ValueError, match="k must be a whole number"):
        Tally(0)


def test_tally_decides_exactly_as_first_to_ahead_by_k() -> None:
    from maker.voting import Tally

    answers = ["x", "y", "x", "y", "y", "x", "x", "x", "y"]
    it = iter(answers)

    async def sample() -> str:
        return next(it)

    drawn = asyncio.run(first_to_ahead_by_k(sample, 2, parallel=1))
    tally: Tally[str] = Tally(2)
    for answer in answers:
        if tally.decided:
            break
        tally.add(answer)
    assert tally.vote(drawn.max_samples) == drawn
