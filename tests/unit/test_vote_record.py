"""A vote's record (``maker.executor.rules.vote_rules.VoteRecord``): one shape for the
plugin's ballots and ``maker run``'s samples, written by both into the accepted handoff
(and by ``maker run`` into the ledger); a record an older maker wrote, in either front
end's former shape, still reads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.step_plans import handoff, make_step, write
from maker.executor.rules.vote_rules import VoteRecord
from maker.executor.state.lifecycle import start_step
from maker.executor.verdicts.verdict import executor_verdict
from maker.executor.votes.ballots import cast
from maker.store.frontmatter import read_front_matter, render_front_matter

RECORD = VoteRecord(k=3, decided=True, samples=6, flagged=1, margin=3,
                    tally=(('["complete", 2]', 4), ('["complete", 1]', 1)),
                    flag_reasons=("Output is not a dict",),
                    ballots=("a1", "a2", "a3", "a4", "a5", "a6"), cost_usd=0.06)

# What the two front ends wrote before they shared a shape.
OLD_PLUGIN = {"k": 3, "decided": True, "samples": 6, "flagged": 1, "margin": 3,
              "tally": [{"answer": '["complete", 2]', "votes": 4},
                        {"answer": '["complete", 1]', "votes": 1}],
              "flag_reasons": ["Output is not a dict"],
              "ballots": ["a1", "a2", "a3", "a4", "a5", "a6"]}
OLD_ENGINE = {"k": 3, "decided": True, "samples": 6, "flagged": 1, "margin": 3,
              "cost_usd": 0.06, "tally": OLD_PLUGIN["tally"],
              "flag_reasons": ["Output is not a dict"]}


def test_a_record_reads_back_as_written() -> None:
    data = RECORD.to_dict()

    assert set(data) == {"k", "decided", "samples", "flagged", "margin", "tally",
                         "flag_reasons", "ballots", "cost_usd"}
    assert data["tally"][0] == {"answer": '["complete", 2]', "votes": 4}
    assert VoteRecord.from_dict(data) == RECORD


@pytest.mark.parametrize("data, read", [
    (OLD_PLUGIN, replace(RECORD, cost_usd=None)),
    (OLD_ENGINE, replace(RECORD, ballots=())),
    # A hand edit: each field that is not of its type reads as unknown.
    ({"k": "3", "decided": "yes", "samples": True, "margin": 3, "flagged": None,
      "tally": [["x", 2], {"answer": "y"}, {"answer": "z", "votes": 2}],
      "flag_reasons": "one", "ballots": {"a": 1}, "cost_usd": "0.1"},
     VoteRecord(k=0, decided=False, samples=0, flagged=0, margin=3, tally=(("z", 2),))),
    (None, VoteRecord(k=0, decided=False, samples=0, flagged=0, margin=0)),
    (["not", "a", "mapping"], VoteRecord(k=0, decided=False, samples=0, flagged=0, margin=0)),
], ids=["old plugin", "old engine", "hand edit", "none", "a list"])
def test_a_record_of_another_shape_reads_as_far_as_it_goes(data: Any, read: VoteRecord) -> None:
    assert VoteRecord.from_dict(data) == read


@pytest.mark.parametrize("old", [OLD_PLUGIN, OLD_ENGINE], ids=["plugin", "engine"])
def test_the_verdict_reads_a_record_an_older_maker_wrote(project: Path,
                                                         old: dict[str, Any]) -> None:
    store = write(project, [make_step(0, -2, conditional=True, votes=2), make_step(1, -1),
                            make_step(2, -1)])
    start_step(store, 0)
    chose = handoff(0, output={"next_step": 2, "reason": "seen"})
    for agent in ("a1", "a2"):
        cast(store, 0, agent, chose)
    path = store.handoff_path(0)
    meta, body = read_front_matter(path)
    assert meta["vote"]["ballots"] == ["a1", "a2"] and meta["vote"]["cost_usd"] is None
    path.write_text(render_front_matter({**meta, "vote": old}, body), encoding="utf-8")

    verdict = executor_verdict(store, {"outcome": "ballot", "step": 0, "k": 2, "bound": 8,
                                       "agent": "a2"})

    assert ("decided by a vote (the answer [\"complete\", 2] led by 2; votes: 4 for "
            "[\"complete\", 2], 1 for [\"complete\", 1]; 6 executors, 1 flagged)") in verdict
