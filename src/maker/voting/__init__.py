"""MAKER voting: the law that says how many votes a task needs, and the vote itself.

From the MAKER paper (Meyerson et al., "Solving a Million-Step LLM Task with Zero Errors",
arXiv 2511.09030): sample a step's answer independently several times, discard red-flagged
samples, and accept the first answer with ``k`` more votes than any other
(``first_to_ahead_by_k``). ``p_step``, ``p_task`` and ``k_min`` give the chance of a right
step and of a right task, and the smallest ``k`` that reaches a target.

**Temperature.** The paper drew the first vote at temperature 0 and later ones at 0.1, so that
samples are not copies of one another. claude-agent-sdk exposes no temperature, so maker does
not imitate that: each sample is a fresh, isolated session that sees only the step's brief,
never another sample's answer or history, so samples are decorrelated by isolation. A sample
that the red-flagger rejects is discarded and replaced by a new one, never repaired; its
reason is kept in the Vote. Correlated errors (every session making the same mistake) are what
voting cannot fix: the benchmark measures how much they cost.

This package is pure: it knows nothing of plans, sessions or the ledger. The caller passes
``sample`` (one isolated attempt), ``key`` and ``flagged``.
"""

from maker.voting.canonical import canonical
from maker.voting.law import k_min, p_step, p_task, wilson_interval
from maker.voting.vote import DEFAULT_SAMPLES_PER_K, Ballot, Tally, Vote, first_to_ahead_by_k

__all__ = [
    "DEFAULT_SAMPLES_PER_K",
    "Ballot",
    "Tally",
    "Vote",
    "canonical",
    "first_to_ahead_by_k",
    "k_min",
    "p_step",
    "p_task",
    "wilson_interval",
]
