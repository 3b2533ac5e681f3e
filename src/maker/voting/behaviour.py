"""Votes on what code does: samples of a code step compared by running them, not by text.

Each sample of a code step is the same brief done in its own worktree from the same base.
Two right samples are seldom the same text; they do the same thing. So a sample's
*behaviour* is its row of outcomes over the **shared tests**, and samples with the same
row vote together (``maker.voting.Tally``: the first behaviour to lead by ``k`` wins):

- the step's own checks (``checks``: the project's format, lint, build and test
  commands, each passed or not), where a regression shows;
- every sample's added tests that fail on the code before the step, the same on two
  runs there (a test that passes there proves nothing; one whose outcome differs
  between the two runs is flaky and left out);
- a test that cannot even be imported against a sample's code (another name for the
  same function) is *incompatible* with it, not failed by it: an outcome of its own, so
  samples of one interface vote together and another interface's stand apart.

A **probe** (``probe``: one more sample that wrote tests alone, at the step's interface,
and no code) is not a voter and never wins: its tests that fail on the base on both runs
are shared tests too, in every sample's row; when none does, or its tests gave no result,
it adds nothing (:func:`probe_flag`).

The rows are recomputed as samples arrive (each adds its tests). A sample is dropped,
never repaired (a red flag, :func:`red_flag`): none of its added tests fails on the base
(they are evidence of nothing), one fails on its own result, it fails a check that the
base passes, or its diff is far larger than the others'. Flags found before any test
ran (the gate refused its handoff, it wrote outside the step's ``writes``, it weakened
existing tests) come in with the sample. Of the winning behaviour, the sample with the
smallest diff is the one that lands.

Pure: what ran, and how it came out, is the caller's (``Outcomes``).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from maker.voting.vote import Tally

__all__ = ["FAIL", "INCOMPATIBLE", "NOT_RUN", "PASS", "BehaviourVote", "CodeSample", "Outcomes",
           "decide", "probe_flag", "red_flag", "shared_tests"]

PASS, FAIL, INCOMPATIBLE, NOT_RUN = "pass", "fail", "incompatible", "not run"
_DIFF_TIMES, _DIFF_LINES = 5, 40  # a diff "far larger": this many times the others', and more


@dataclass(frozen=True)
class CodeSample:
    """One sample as the vote sees it: ``name`` (its session), ``diff_lines`` (lines it
    added and removed), ``tests`` (the test ids it added, as ``Outcomes`` names them),
    and ``flag``: why it was dropped before any test ran (None: it was not)."""

    name: str
    diff_lines: int
    tests: tuple[str, ...] = ()
    flag: str | None = None


@dataclass
class Outcomes:
    """What ran: ``base[test]`` the two runs of a test on the code before the step;
    ``runs[(sample, test)]`` a test on a sample's result (:data:`PASS`, :data:`FAIL`,
    :data:`INCOMPATIBLE`); ``checks[sample][check]`` and ``base_checks[check]`` the step's
    own checks, passed or not."""

    base: dict[str, tuple[str, str]] = field(default_factory=dict)
    runs: dict[tuple[str, str], str] = field(default_factory=dict)
    checks: dict[str, dict[str, bool]] = field(default_factory=dict)
    base_checks: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class BehaviourVote:
    """The vote so far: ``winner`` (the smallest diff of the winning behaviour; None while
    undecided), ``columns`` (the shared tests and checks compared), ``rows`` (each sample
    the vote counted: its outcome per column; one that came once it was decided is not),
    ``flags`` (each dropped sample: why), ``tally`` (each behaviour's votes, most first),
    ``need`` (the fewest further samples that could decide) and ``probe_flag`` (why the
    probe's tests are not among the columns; None: they are, or there is no probe)."""

    k: int
    decided: bool
    winner: CodeSample | None
    columns: tuple[str, ...]
    rows: Mapping[str, tuple[str, ...]]
    flags: Mapping[str, str]
    tally: tuple[tuple[tuple[str, ...], int], ...]
    need: int
    probe_flag: str | None = None


def shared_tests(samples: Sequence[CodeSample], outcomes: Outcomes) -> list[str]:
    """The samples' added tests that fail on the base on both of its runs (one that passed
    there, on either run, proves nothing or is flaky; one not run there, nothing: left
    out), in the samples' order."""
    return [t for s in samples for t in s.tests
            if t in outcomes.base and all(o == FAIL for o in outcomes.base[t])]


def red_flag(sample: CodeSample, others: Sequence[CodeSample], outcomes: Outcomes) -> str | None:
    """Why ``sample`` is dropped (see the module's docstring), or None."""
    if sample.flag:
        return sample.flag
    on_base = _on_base(sample, outcomes)
    if on_base:
        return on_base
    failing = [t for t in sample.tests if outcomes.runs.get((sample.name, t)) != PASS]
    if failing:
        return f"its own test fails on its own result: {_shown(failing)}"
    checks = outcomes.checks.get(sample.name, {})
    broken = [c for c, ok in outcomes.base_checks.items() if ok and checks.get(c) is False]
    if broken:
        return f"it fails a check the code before the step passes: {_shown(broken)}"
    sizes = [o.diff_lines for o in others if o.name != sample.name and not o.flag]
    if sizes:
        usual = statistics.median(sizes)
        if sample.diff_lines > _DIFF_TIMES * usual and sample.diff_lines - usual > _DIFF_LINES:
            return (f"its diff ({sample.diff_lines} lines) is far larger than the others' "
                    f"({usual:g} lines, the median)")
    return None


def _on_base(sample: CodeSample, outcomes: Outcomes) -> str | None:
    """Why none of ``sample``'s tests that ran on the base proves anything, or None."""
    mine = [t for t in sample.tests if t in outcomes.base]
    if not mine or shared_tests([sample], outcomes):
        return None
    unknown = [t for t in mine if NOT_RUN in outcomes.base[t]]
    if unknown:
        return (f"its tests could not be run on the code before the step "
                f"({_shown(unknown)}: no result, a hang or pytest's crash)")
    return (f"none of its tests fails on the code before the step ({_shown(mine)}): "
            "they prove nothing about its change")


def probe_flag(probe: CodeSample, outcomes: Outcomes) -> str | None:
    """Why the probe's tests join no sample's row (its flag before any test ran; no
    result; none fails on the base), or None."""
    if probe.flag:
        return probe.flag
    if not any(t in outcomes.base for t in probe.tests):
        return "its tests gave no result (a hang, or pytest's crash)"
    return _on_base(probe, outcomes)


def decide(samples: Sequence[CodeSample], outcomes: Outcomes, k: int,
           probe: CodeSample | None = None) -> BehaviourVote:
    """The vote among ``samples`` (in the order they arrived) on what they ran, with
    ``probe``'s tests among the shared ones where it is not flagged (:func:`probe_flag`)."""
    flags: dict[str, str] = {}
    for sample in samples:
        why = red_flag(sample, samples, outcomes)
        if why is not None:
            flags[sample.name] = why
    live = [s for s in samples if s.name not in flags]
    checks = sorted({c for s in live for c in outcomes.checks.get(s.name, {})})
    probed = probe_flag(probe, outcomes) if probe is not None else None
    columns = shared_tests([*live, *([probe] if probe and not probed else [])], outcomes)

    def row(sample: CodeSample) -> tuple[str, ...]:
        ran = outcomes.checks.get(sample.name, {})
        return (*(PASS if ran.get(c) else FAIL for c in checks),
                *(outcomes.runs.get((sample.name, t), NOT_RUN) for t in columns))

    rows = {s.name: row(s) for s in live}
    counted: Tally[CodeSample] = Tally(k, key=lambda s: rows[s.name])
    for sample in live:
        if counted.decided:
            break
        counted.add(sample)
    winner = None
    if counted.decided:
        winner = min((s for s in live if rows[s.name] == counted.winner_key),
                     key=lambda s: (s.diff_lines, live.index(s)))
    tally = tuple(sorted(((_row_of(key), n) for key, n in counted.counts.items()),
                         key=lambda kv: -kv[1]))
    voted = {b.answer.name for b in counted.ballots}  # (not those after the decision)
    return BehaviourVote(k=k, decided=counted.decided, winner=winner,
                         columns=(*checks, *columns),
                         rows={n: r for n, r in rows.items() if n in voted}, flags=flags,
                         tally=tally, need=counted.need(), probe_flag=probed)


def _row_of(key: object) -> tuple[str, ...]:
    return tuple(str(o) for o in key) if isinstance(key, tuple) else ()


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
