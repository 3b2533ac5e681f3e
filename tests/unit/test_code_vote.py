"""The vote on a code step as ``maker run`` runs it (``maker.engine.code_vote``), its
sessions scripted (each writes its files into its own worktree), the rest real: git's
worktrees, the box around each folder, pytest. What a sample cannot do to the vote: make
its own outcomes with a conftest.py, win with no test, write into another sample's
folder or out of its own through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.code_votes import (
    BASE,
    OFF_BY_ONE,
    RIGHT,
    RIGHT_LONGER,
    TEST_LOW,
    TEST_RIGHT,
    draws,
    run_vote,
    voting_store,
)

CHEAT = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
         "def pytest_runtest_makereport(item, call):\n    report = yield\n"
         "    report.get_result().outcome = 'passed'\n")


def test_a_conftest_that_makes_every_test_pass_is_flagged(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = voting_store(project, monkeypatch)
    right = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}
    cheat = {"src/calc.py": BASE + "\n", "tests/test_calc.py": TEST_RIGHT,
             "tests/conftest.py": CHEAT}
    vote = run_vote(store, draws([cheat, right, right]))
    flags = vote.vote.flags if vote.vote else {}
    assert "it changes how the tests run" in flags["s1"] and "conftest.py" in flags["s1"]
    assert vote.winner is not None and vote.winner.name in ("s2", "s3")


def test_a_sample_with_no_test_does_not_win_by_its_smaller_diff(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = voting_store(project, monkeypatch)
    bare = {"src/calc.py": RIGHT}
    tested = {"src/calc.py": RIGHT_LONGER, "tests/test_calc.py": TEST_LOW}
    vote = run_vote(store, draws([bare, tested, tested]))
    flags = vote.vote.flags if vote.vote else {}
    assert "it added no test" in flags["s1"]
    assert vote.winner is not None and vote.winner.name != "s1"


@pytest.mark.kernel
def test_a_samples_test_writes_into_no_other_folder_nor_out_through_a_link(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder runs in a box of its own: a test that writes into its siblings' and
    the base's folders fails there; a link a sample plants where another's test is put
    is not written through (maker writes there itself, outside any box)."""
    from harness.kernel import require_kernel

    require_kernel()
    store = voting_store(project, monkeypatch)
    outside = project / "src" / "assert_planted.py"  # (its name: an assertion, to git)
    spoil = ("from pathlib import Path\nfrom calc import clamp\n\n\ndef test_high():\n"
             "    for d in Path.cwd().parent.iterdir():\n        try:\n"
             "            (d / 'src' / 'calc.py').write_text('def clamp(x, lo, hi):\\n"
             "    return 0\\n')\n        except OSError:\n            pass\n"
             "    assert clamp(5, 0, 3) == 2\n")
    off = {"src/calc.py": OFF_BY_ONE, "tests/test_calc.py": spoil}
    right = {"src/calc.py": RIGHT, "tests/test_calc.py": TEST_RIGHT}

    def link(folder: Path, i: int) -> None:
        if i == 1:  # (the second sample: a link where the first sample's test goes)
            os.symlink(outside, folder / "tests" / "test_maker_s1_calc.py")

    vote = run_vote(store, draws([off, right, right, right], link))
    assert not outside.exists()
    assert vote.winner is not None and vote.winner.name in ("s2", "s3", "s4"), vote.why
    rows = vote.vote.rows if vote.vote else {}
    assert len({rows[n] for n in rows if n != "s1"}) == 1  # (the right ones unspoiled)
    assert (project / "src" / "calc.py").read_text() == BASE
