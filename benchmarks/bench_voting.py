"""Does first-to-ahead-by-k keep the MAKER paper's law? (a script, not a timed test)

Runs the real ``maker.voting.first_to_ahead_by_k`` on simulated samplers (a sample is right with
probability p, else wrong) and prints:

1. measured p_step against the law 1/(1+((1-p)/p)^k) for several (p, k), with 95% Wilson
   intervals; then the same with a pool of wrong answers (easier than the law's one rival) and
   with correlated errors (harder: a step that fools one sample tends to fool them all);
2. a 1,048,575-step chain, Towers of Hanoi with 20 disks, at 1-p = 0.0022 and k = 3 (the
   paper's k_min): each sample proposes the next move and the resulting state, a wrong one a
   wrong move; every accepted move is checked against the standard iterative solution and
   applied to real pegs, and the final state must be solved;
3. samples per second of the voting machinery itself (an instant sampler);
4. the cost of a whole task against the paper's Theta(s ln s): total samples / (s ln s) with
   k = k_min(s) at p = 0.9, for growing s.

Exits 1 when the chain makes an error, or a measured p_step (one rival) misses the law's
99.9% interval (seven rows at 95% would miss one by chance a third of the time).

    .venv/bin/python benchmarks/bench_voting.py [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import time
from collections.abc import Awaitable, Callable

from maker.voting import first_to_ahead_by_k, k_min, p_step
from maker.voting import wilson_interval as wilson

Z999 = 3.290527


def expected_samples(p: float, k: int) -> float:
    """The law's mean samples a vote draws against one rival (the gambler's ruin duration)."""
    if p == 1.0:
        return float(k)
    r = ((1 - p) / p) ** k
    return k / (2 * p - 1) * (1 - r) / (1 + r)


Sampler = Callable[[], Awaitable[str]]


def one_rival(rng: random.Random, p: float) -> Callable[[], Sampler]:
    async def sample() -> str:
        return "right" if rng.random() < p else "wrong"
    return lambda: sample


def pool_of_rivals(rng: random.Random, p: float, pool: int = 5) -> Callable[[], Sampler]:
    async def sample() -> str:
        return "right" if rng.random() < p else f"wrong-{rng.randrange(pool)}"
    return lambda: sample


def correlated(rng: random.Random, p: float, hard: float = 0.1,
               p_hard: float = 0.55) -> Callable[[], Sampler]:
    """A fraction ``hard`` of steps is hard (p_hard); the rest is easier, so that a single
    sample is still right with probability p overall."""
    p_easy = (p - hard * p_hard) / (1 - hard)

    def step() -> Sampler:
        q = p_hard if rng.random() < hard else p_easy

        async def sample() -> str:
            return "right" if rng.random() < q else "wrong"
        return sample
    return step


async def measure_p_step(make: Callable[[], Sampler], k: int, trials: int) -> tuple[int, int]:
    right = samples = 0
    for _ in range(trials):
        vote = await first_to_ahead_by_k(make(), k, max_samples=100_000)
        right += vote.winner == "right"
        samples += vote.samples
    return right, samples


async def section_law(rng: random.Random, trials: int) -> bool:
    print("1. measured p_step against the law (95% Wilson interval), "
          f"{trials:,} votes per row;")
    print("   with 7 rows one may miss its 95% interval by chance: a miss of the 99.9% one fails")
    print(f"   {'sampler':<22}{'p':>6}{'k':>4}{'law':>10}{'measured':>10}"
          f"{'95% interval':>20}{'samples/vote (law)':>20}  verdict")
    ok = True
    cases = [(0.6, 1), (0.6, 3), (0.6, 5), (0.7, 2), (0.7, 4), (0.8, 3), (0.9, 2)]
    for name, maker_of in (("one wrong rival", one_rival), ("pool of 5 wrong", pool_of_rivals),
                           ("correlated (10% hard)", correlated)):
        for p, k in cases if name == "one wrong rival" else cases[1::2]:
            right, samples = await measure_p_step(maker_of(rng, p), k, trials)
            lo, hi = wilson(right, trials)
            law = p_step(p, k)
            if name == "one wrong rival":
                lo3, hi3 = wilson(right, trials, Z999)
                ok &= lo3 <= law <= hi3
                verdict = "inside" if lo <= law <= hi else (
                    "inside 99.9%" if lo3 <= law <= hi3 else "OUTSIDE 99.9%")
            else:
                verdict = "above the law" if lo > law else (
                    "below the law" if hi < law else "inside")
            mean = f"{samples / trials:.2f} ({expected_samples(p, k):.2f})"
            print(f"   {name:<22}{p:>6.2f}{k:>4}{law:>10.4f}{right / trials:>10.4f}"
                  f"    [{lo:.4f}, {hi:.4f}]{mean:>20}  {verdict}")
    return ok


def hanoi_move(m: int) -> tuple[int, int, int]:
    """Move m (1-based) of the optimal solution from peg 0: (disk, from peg, to peg)."""
    return (m & -m).bit_length(), (m & (m - 1)) % 3, ((m | (m - 1)) + 1) % 3


async def section_hanoi(rng: random.Random, disks: int, error: float, k: int) -> bool:
    steps = 2 ** disks - 1
    print(f"\n2. Towers of Hanoi, {disks} disks: {steps:,} voted steps at 1-p = {error}, "
          f"k = {k} (k_min = {k_min(steps, 1 - error)})")
    pegs: list[list[int]] = [list(range(disks, 0, -1)), [], []]
    state = "0" * disks  # the peg of each disk, smallest first: the answer's "state"
    p = 1 - error
    errors = wrong_samples = samples = undecided = 0
    longest = 0
    t0 = time.perf_counter()
    for m in range(1, steps + 1):
        disk, src, dst = hanoi_move(m)
        right = {"move": [disk, src, dst],
                 "state": state[:disk - 1] + str(dst) + state[disk:]}
        bad_peg = 3 - src - dst  # a wrong move: the same disk to the other peg
        wrong = {"move": [disk, src, bad_peg],
                 "state": state[:disk - 1] + str(bad_peg) + state[disk:]}

        async def sample(right: dict[str, object] = right,
                         wrong: dict[str, object] = wrong) -> dict[str, object]:
            return right if rng.random() < p else wrong

        vote = await first_to_ahead_by_k(sample, k)
        samples += vote.samples
        longest = max(longest, vote.samples)
        if not vote.decided:
            undecided += 1
            break
        accepted = vote.winner
        assert accepted is not None
        wrong_samples += vote.samples - vote.votes[vote.winner_key]
        a_disk, a_src, a_dst = accepted["move"]  # type: ignore[misc]
        if (a_disk, a_src, a_dst) != (disk, src, dst):
            errors += 1
            break
        # Apply the accepted move to real pegs: it must be legal.
        moved = pegs[a_src].pop()
        if moved != a_disk or (pegs[a_dst] and pegs[a_dst][-1] < moved):
            errors += 1
            break
        pegs[a_dst].append(moved)
        state = str(accepted["state"])
    elapsed = time.perf_counter() - t0
    goal = 2 if disks % 2 else 1
    solved = pegs[goal] == list(range(disks, 0, -1)) and state == str(goal) * disks
    print(f"   errors: {errors}   undecided: {undecided}   solved: {solved}   "
          f"wrong samples outvoted: {wrong_samples:,}")
    print(f"   samples: {samples:,} ({samples / steps:.4f} a step, longest vote {longest}); "
          f"{elapsed:.1f} s, {elapsed / steps * 1e6:.1f} us a step")
    return errors == 0 and undecided == 0 and solved


async def section_machinery(votes: int) -> None:
    print(f"\n3. the voting machinery itself: an instant sampler, {votes:,} votes of k = 3")

    async def sample() -> str:
        return "A"

    async def suspending() -> str:
        await asyncio.sleep(0)
        return "A"

    for label, fn, parallel in (("sequential (parallel=1)", sample, 1),
                                ("concurrent (parallel=k)", sample, 3),
                                ("concurrent, sampler awaits", suspending, 3)):
        t0 = time.perf_counter()
        total = 0
        for _ in range(votes):
            total += (await first_to_ahead_by_k(fn, 3, parallel=parallel)).samples
        dt = time.perf_counter() - t0
        print(f"   {label:<28} {total / dt:>10,.0f} samples/s  {dt / votes * 1e6:>6.1f} us a vote")


async def section_cost(rng: random.Random, sizes: list[int], p: float) -> None:
    print(f"\n4. cost of a whole task against Theta(s ln s): p = {p}, k = k_min(s), t = 0.95")
    print(f"   {'s':>9}{'k':>4}{'samples':>13}{'a step':>9}{'law':>7}{'samples/(s ln s)':>18}"
          f"{'errors':>8}")
    for s in sizes:
        k = k_min(s, p)
        total = errors = 0
        make = one_rival(rng, p)
        sample = make()
        for _ in range(s):
            vote = await first_to_ahead_by_k(sample, k, max_samples=100_000)
            total += vote.samples
            errors += vote.winner != "right"
        print(f"   {s:>9,}{k:>4}{total:>13,}{total / s:>9.2f}{expected_samples(p, k):>7.2f}"
              f"{total / (s * math.log(s)):>18.3f}{errors:>8}")


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    quick = args.quick
    t0 = time.perf_counter()
    law_ok = await section_law(rng, 2_000 if quick else 20_000)
    chain_ok = await section_hanoi(rng, 14 if quick else 20, 0.0022, 3)
    await section_machinery(10_000 if quick else 100_000)
    await section_cost(rng, [2**8 - 1, 2**11 - 1, 2**14 - 1] if quick
                       else [2**10 - 1, 2**13 - 1, 2**16 - 1, 2**18 - 1], 0.9)
    print(f"\nwhole run: {time.perf_counter() - t0:.0f} s")
    return 0 if law_ok and chain_ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer votes and a 14-disk chain (seconds, not minutes)")
    parser.add_argument("--seed", type=int, default=2511_09030)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
