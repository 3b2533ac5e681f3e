"""Each per-step rule (``maker.executor.rules.step_rules``, ``vote_rules.step_votes``) applied
the same by both front ends: the same step, through ``/maker:step``'s hooks (as Claude
Code fires them) and through ``maker run``'s engine (scripted sessions), ends the same.

- how many agreeing answers decide a step (a conditional step: a vote with a lead of 2);
- the gate's bound: the answers it refuses before the step fails;
- who approves an accepted step (the policy, the reviewer, a person) and when the
  independent review is required.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine_fakes import FakeReviewer, ScriptedModel, parts, run
from harness.hooks import executor_returns, fire, subagent_input
from harness.step_plans import handoff, make_step, write
from maker.engine.orchestrator import Orchestrator
from maker.engine.stops import EXIT_APPROVAL, EXIT_COMPLETE, EXIT_FAILED
from maker.errors import ReviewMissingError
from maker.executor.acceptance.approval import approve_step
from maker.executor.acceptance.review import latest_review
from maker.executor.rules.step_rules import GATE_ATTEMPTS, approval_route, review_required
from maker.executor.rules.vote_rules import step_votes
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

# -- how many agreeing answers decide a step --------------------------------------------


@pytest.mark.parametrize("votes", [None, 1, 3])
def test_a_conditional_step_is_decided_by_the_same_vote(
        both: tuple[Path, Path], votes: int | None) -> None:
    plugin, engine = both
    steps = [make_step(1, -2, conditional=True, votes=votes), make_step(2, -1),
             make_step(3, -1)]
    k = step_votes(steps[0])
    assert k == (2 if votes is None else votes)
    decided = handoff(1, output={"next_step": 2, "reason": "seen"})

    # /maker:step: each executor's answer is a ballot until one answer leads by k.
    store = write(plugin, steps)
    start_step(store, 1, session_id="sess-1")
    for i in range(k):
        assert store.load_step(1).status == "in-progress"
        executor_returns(plugin, decided, agent_id=f"executor-{i}")
    plugin_handoff = store.read_handoff(1)

    # maker run: k isolated sessions answer at once.
    model = ScriptedModel([decided] * k + [handoff(2)])
    result = run(Orchestrator(write(engine, steps), parts(model), approve="auto"))
    assert result.exit_code == EXIT_COMPLETE, result.message
    engine_handoff = PlanStore(engine / "plans").read_handoff(1)

    assert [p[0] for p in model.prompts].count(1) == k
    for kept in (plugin_handoff, engine_handoff):
        assert kept is not None and kept["output"]["next_step"] == 2
        vote = kept.get("vote")
        if k == 1:
            assert vote is None  # one answer, through the gate: no vote
        else:
            assert (vote["k"], vote["samples"], vote["margin"]) == (k, k, k)


# -- the gate's bound -----------------------------------------------------------------


def test_the_gate_refuses_the_same_number_of_answers_before_the_step_fails(
        both: tuple[Path, Path]) -> None:
    plugin, engine = both
    steps = [make_step(1, -1)]
    wrong = handoff(2)  # a mapping the red flags pass, for the wrong step: the gate refuses

    store = write(plugin, steps)
    start_step(store, 1, session_id="sess-1")
    agent = "executor-1"
    refused = 0
    while store.load_step(1).status == "in-progress":
        refused += 1
        out = executor_returns(plugin, wrong, agent_id=f"{agent}-{refused}")
        assert out is not None and refused <= GATE_ATTEMPTS

    model = ScriptedModel([wrong] * GATE_ATTEMPTS)
    result = run(Orchestrator(write(engine, steps), parts(model), approve="auto"))
    assert result.exit_code == EXIT_FAILED
    assert f"the gate refused {GATE_ATTEMPTS} handoffs" in result.message

    assert refused == len(model.prompts) == GATE_ATTEMPTS
    assert store.load_step(1).status == "failed"
    assert PlanStore(engine / "plans").load_step(1).status == "failed"


# -- who approves, and when the review is required ----------------------------------------


def _changed(project: Path, count: int) -> list[str]:
    names = [f"src/f{i}.py" for i in range(count)]
    for name in names:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x = 1\n")
    return names


@pytest.mark.parametrize("policy", ["never", "auto", "reviewer"])
@pytest.mark.parametrize("count", [1, 5])
def test_the_same_step_is_approved_by_the_same_one(
        both: tuple[Path, Path], policy: str, count: int) -> None:
    plugin, engine = both
    route = approval_route(policy, ["f"] * count)
    large = review_required(["f"] * count)
    steps = [make_step(1, -1)]

    # /maker:step: the executor's handoff, then the reviewer where a review is due.
    store = write(plugin, steps, policy=policy)
    start_step(store, 1, session_id="sess-1")
    executor_returns(plugin, handoff(1, files_changed=_changed(plugin, count)))
    if large or route == "reviewer":
        if route == "person":  # a person may not approve a large step before its review
            with pytest.raises(ReviewMissingError):
                approve_step(store, 1, "user")
        fire("subagent-stop", subagent_input(plugin, "maker:reviewer",
                                             "GREEN: fine\nVERDICT: approve"))
    plugin_step = store.load_step(1)

    # maker run: the same handoff, and a reviewer that approves.
    model = ScriptedModel([handoff(1, files_changed=_changed(engine, count))])
    reviewer = FakeReviewer("approve")
    result = run(Orchestrator(write(engine, steps, policy=policy),
                              parts(model, reviewer=reviewer)))
    engine_store = PlanStore(engine / "plans")
    engine_step = engine_store.load_step(1)

    expected = {"policy": ("complete", "policy:auto"),
                "reviewer": ("complete", f"policy:{policy} (reviewer approved)"),
                "person": ("awaiting-approval", None)}[route]
    for step in (plugin_step, engine_step):
        assert (step.status, step.meta.get("approved_by")) == expected
    assert result.exit_code == (EXIT_APPROVAL if route == "person" else EXIT_COMPLETE)
    reviewed = large or route == "reviewer"
    assert len(reviewer.prompts) == (1 if reviewed else 0)
    assert (latest_review(engine_store, engine_step) is not None) == reviewed
    assert (latest_review(store, plugin_step) is not None) == reviewed
    if route == "person":  # and now a person may approve it, in both
        for kept in (store, engine_store):
            assert approve_step(kept, 1, "user").status == "complete"


def test_a_review_on_file_is_not_paid_for_twice(both: tuple[Path, Path]) -> None:
    """A large step reviewed under `never`, then the policy set to `auto`: the review on
    file decides; maker run does not run (and pay for) a second one (QA finding)."""
    from maker.executor.acceptance.approval import set_policy

    _, engine = both
    files = _changed(engine, 5)
    model = ScriptedModel([handoff(1, files_changed=files)])
    store = write(engine, [make_step(1, -1)], policy="never")
    first = FakeReviewer("approve")
    assert run(Orchestrator(store, parts(model, reviewer=first))).exit_code == EXIT_APPROVAL
    set_policy(store, "auto", "person")
    second = FakeReviewer("approve")
    assert run(Orchestrator(store, parts(model, reviewer=second))).exit_code == EXIT_COMPLETE
    assert (len(first.prompts), len(second.prompts)) == (1, 0)
    assert store.load_step(1).meta["approved_by"] == "policy:auto (reviewer approved)"
