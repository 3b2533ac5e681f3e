"""Votes on what code does (``maker.voting.behaviour``), on outcomes given by hand: the
rules of the vote, apart from running anything (``tests/unit/test_cross_runs.py`` runs real
code and tests)."""

from __future__ import annotations

from maker.voting.behaviour import (
    FAIL,
    INCOMPATIBLE,
    PASS,
    CodeSample,
    Outcomes,
    decide,
    red_flag,
    shared_tests,
)


def _outcomes(rows: dict[str, dict[str, str]], base: dict[str, tuple[str, str]],
              checks: dict[str, bool] | None = None) -> Outcomes:
    done = Outcomes(base=base, base_checks={"pytest": True})
    for sample, ran in rows.items():
        done.runs.update({(sample, t): o for t, o in ran.items()})
        done.checks[sample] = {"pytest": (checks or {}).get(sample, True)}
    return done


BASE = {f"{s}:t::one": (FAIL, FAIL) for s in "abcd"}
RIGHT = {"a:t::one": PASS, "b:t::one": PASS, "c:t::one": FAIL, "d:t::one": PASS}
OFF_BY_ONE = {"a:t::one": FAIL, "b:t::one": FAIL, "c:t::one": PASS, "d:t::one": FAIL}


def test_right_samples_outvote_an_off_by_one_and_the_smallest_diff_lands() -> None:
    """Right, off by one, right: a lead of 1 is not 2 (undecided); a third right sample
    decides it, and of the right ones the smallest diff wins."""
    samples = [CodeSample("a", 4, ("a:t::one",)), CodeSample("c", 3, ("c:t::one",)),
               CodeSample("b", 5, ("b:t::one",)), CodeSample("d", 2, ("d:t::one",))]
    done = _outcomes({"a": RIGHT, "c": OFF_BY_ONE, "b": RIGHT, "d": RIGHT}, BASE)
    three = decide(samples[:3], done, 2)
    assert not three.decided and three.need == 1
    vote = decide(samples, done, 2)
    assert vote.decided and vote.winner is not None and vote.winner.name == "d"
    assert vote.rows["a"] == vote.rows["b"] == vote.rows["d"] != vote.rows["c"]
    assert vote.tally == ((vote.rows["a"], 3), (vote.rows["c"], 1))


def test_undecided_while_no_behaviour_leads_by_k() -> None:
    samples = [CodeSample("a", 4, ("a:t::one",)), CodeSample("c", 3, ("c:t::one",))]
    done = _outcomes({"a": {"a:t::one": PASS, "c:t::one": FAIL},
                      "c": {"a:t::one": FAIL, "c:t::one": PASS}}, BASE)
    vote = decide(samples, done, 2)
    assert not vote.decided and vote.winner is None and vote.need == 2
    assert set(vote.columns) == {"pytest", "a:t::one", "c:t::one"}


def test_a_test_that_passes_on_the_base_flags_its_sample() -> None:
    sample = CodeSample("v", 2, ("v:t::one",))
    done = _outcomes({"v": {"v:t::one": PASS}}, {"v:t::one": (PASS, PASS)})
    why = red_flag(sample, [sample], done)
    assert why is not None and "none of its tests fails on the code before the step" in why
    assert decide([sample], done, 1).flags["v"] == why


def test_a_flaky_test_is_left_out_of_the_shared_tests() -> None:
    samples = [CodeSample("a", 4, ("a:t::one", "a:t::flaky"))]
    done = _outcomes({"a": {"a:t::one": PASS, "a:t::flaky": PASS}},
                     {"a:t::one": (FAIL, FAIL), "a:t::flaky": (FAIL, PASS)})
    assert shared_tests(samples, done) == ["a:t::one"]
    assert "a:t::flaky" not in decide(samples, done, 1).columns


def test_a_sample_that_fails_its_own_test_or_a_check_the_base_passes_is_dropped() -> None:
    own = CodeSample("o", 2, ("o:t::one",))
    done = _outcomes({"o": {"o:t::one": FAIL}}, {"o:t::one": (FAIL, FAIL)})
    assert "fails on its own result" in str(red_flag(own, [own], done))
    broken = CodeSample("r", 2, ("r:t::one",))
    done = _outcomes({"r": {"r:t::one": PASS}}, {"r:t::one": (FAIL, FAIL)},
                     checks={"r": False})
    assert "fails a check the code before the step passes: pytest" in str(
        red_flag(broken, [broken], done))


def test_a_flag_found_before_any_test_ran_and_a_far_larger_diff_drop_the_sample() -> None:
    deleted = CodeSample("d", 3, (), flag="it deleted tests/test_old.py")
    huge = CodeSample("h", 900, ())
    usual = [CodeSample("a", 10, ()), CodeSample("b", 12, ())]
    done = _outcomes({}, {})
    vote = decide([deleted, huge, *usual], done, 2)
    assert vote.flags["d"] == "it deleted tests/test_old.py"
    assert "far larger than the others'" in vote.flags["h"]
    assert vote.decided and vote.winner == usual[0]


def test_another_interface_is_incompatible_not_failed_and_stands_apart() -> None:
    """Two right samples of one interface vote together; a third, which names the
    function otherwise, cannot even import their tests: incompatible, apart."""
    samples = [CodeSample("a", 4, ("a:t::one",)), CodeSample("b", 6, ("b:t::one",)),
               CodeSample("x", 4, ("x:t::one",))]
    base = {"a:t::one": (FAIL, FAIL), "x:t::one": (FAIL, FAIL), "b:t::one": (FAIL, FAIL)}
    done = _outcomes({
        "a": {"a:t::one": PASS, "x:t::one": INCOMPATIBLE, "b:t::one": PASS},
        "x": {"a:t::one": INCOMPATIBLE, "x:t::one": PASS, "b:t::one": INCOMPATIBLE},
        "b": {"a:t::one": PASS, "x:t::one": INCOMPATIBLE, "b:t::one": PASS}}, base)
    vote = decide(samples, done, 2)
    assert vote.decided and vote.winner == samples[0] and not vote.flags
    assert "x" not in vote.rows  # (it arrived once the vote was decided: not counted)
    late = decide([samples[0], samples[2], samples[1]], done, 2)
    assert not late.decided  # (a, x, b: 2 against 1)
    assert INCOMPATIBLE in late.rows["x"] and FAIL not in late.rows["x"]
