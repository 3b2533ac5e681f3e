"""Voting on a step's answer in the plugin: each executor's answer a ballot.

Which steps vote is ``maker.executor.rules.vote_rules.step_votes`` (the engine's rule too):
a step whose ``votes: K`` says so, or a conditional one. The main agent launches several
isolated ``maker:step-executor`` subagents at once; when each returns, the SubagentStop
hook's one call (``maker.executor.verdicts.arrival``) hands its final message here
(:func:`cast`): never accepted on its own, it is recorded as a ballot in the run's record
(``plans/.maker/runs/step-NN.json``, ``maker.executor.votes.runs``), beside its launch.

- A ballot comes only from that hook, keyed by the subagent's ``agent_id``: a model
  cannot write under plans/ (the guard), no command adds one, and a second ballot
  from the same subagent is refused (not counted).
- A ballot is flagged, and does not vote, when the red flagger rejects the answer or
  the gate would refuse it (every problem but the verification evidence, as in
  ``maker run --vote``). What is compared: a conditional step's status and chosen
  ``next_step``; any other step's status and whole ``output`` (``maker.voting.canonical``).
- The rule is ``maker.voting.Tally`` (first-to-ahead-by-k), replayed from the ballots
  (``vote_rules.tally``).
  When one answer leads by K, the first ballot with that answer goes through the gate
  (``accept_handoff``, with the vote's record kept in the handoff: a
  ``vote_rules.VoteRecord``, as ``maker run`` keeps) and the step goes on as usual
  (evidence, approval). After :data:`SAMPLES_PER_K` × K ballots without a
  winner the step fails with the tally.
- The ballot, the acceptance (or the failure) are one transaction under the plan lock
  (``maker.store.journal``): a crash leaves the old state or the new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maker.core.models import AgentResult, PlanStep
from maker.errors import HandoffRejectedError, MakerError, YAMLCleanError
from maker.executor.rules.instructions import EXECUTOR_AGENT, relaunch_instruction
from maker.executor.rules.vote_rules import (
    SAMPLES_PER_K,
    answer_form,
    flag,
    label,
    launch_limit,
    ranked,
    step_votes,
    tally,
    vote_record,
)
from maker.executor.votes.run_record import Run, load_run
from maker.voting import Tally, canonical

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["BallotResult", "VoteState", "cast", "launch_instruction", "returned",
           "vote_state"]


@dataclass(frozen=True)
class BallotResult:
    """What :func:`cast` did with one executor's answer."""

    step: int
    outcome: str  # voted | flagged | duplicate | accepted | failed
    k: int
    ballots: int  # recorded so far (flagged ones included)
    bound: int
    need: int  # votes the leader still lacks (0 once decided)
    agent: str = ""
    flag: str | None = None
    answer: str = ""
    tally: list[tuple[str, int]] = field(default_factory=list)
    status: str | None = None  # the step's status after an acceptance or a failure
    reasons: list[str] = field(default_factory=list)

    def facts(self) -> dict[str, Any]:
        return {"step": self.step, "agent": self.agent, "ballot": self.outcome, "k": self.k,
                "ballots": self.ballots, "bound": self.bound, "need": self.need,
                "flag": self.flag, "answer": self.answer,
                "tally": [list(t) for t in self.tally], "reasons": self.reasons}


# -- the state ---------------------------------------------------------------------


@dataclass
class VoteState:
    """A voting step's run and its vote so far, read once for one event."""

    run: Run
    spec: PlanStep
    k: int
    tally: Tally[dict[str, Any]]

    @property
    def limit(self) -> int:
        """How many executors may run the step at once (``vote_rules.launch_limit``)."""
        return launch_limit(self.k, self.run.ballots)

    def counts(self) -> list[tuple[str, int]]:
        """The votes so far, most first, each answer as a message names it."""
        return _counts(self.tally)

    @property
    def need(self) -> int:
        """The votes the leader still lacks (0 once decided)."""
        return 0 if self.tally.decided else self.tally.need()


def vote_state(store: PlanStore, step: int, run: Run | None = None) -> VoteState | None:
    """Step ``step`` in progress and its vote so far, or None when it does not vote
    (or is not in progress). ``run``: its record, when the caller has read it."""
    run = run if run is not None else load_run(store, step)
    if run is None or run.step != step:
        return None
    spec = store.load_step(step).spec
    k = step_votes(spec)
    if k == 1:
        return None
    return VoteState(run, spec, k, tally(k, run.ballots))


def returned(state: VoteState, agent_id: str) -> int:
    """Note that executor ``agent_id``'s return reached the main agent (its verdict);
    returns how many executors of the step are still running: the launches that have
    not returned, less those whose ballot is in but whose verdict is not yet out (their
    subagent has stopped). One answer for every verdict computed after the last
    executor stopped, whatever order the client runs the hooks in. Call it under the
    plan lock."""
    run = state.run
    for ballot in run.ballots:
        if ballot["agent"] == agent_id and not ballot.get("seen"):
            ballot["seen"] = True
            run.save(durable=True)
    # A background launch ended at its SubagentStop, ballot and all: only the
    # foreground ones still count as running until their verdict is out.
    launches = run.running()
    background = {x.get("agent") for x in launches if x.get("background")}
    unseen = sum(1 for b in run.ballots if not b.get("seen")
                 and b["agent"] not in background)
    return max(0, len([x for x in launches if not x.get("background")]) - unseen
               + len(background - {None}))


def launch_instruction(store: PlanStore, step: int, running: int = 0,
                       state: VoteState | None = None) -> str:
    """What the main agent launches next for step ``step``: one executor, or for a vote
    as many at once as it still needs (minus ``running``, those not returned yet).
    ``state``: the vote, when the caller has read it."""
    if state is None:
        try:
            state = vote_state(store, step)
        except (MakerError, OSError):  # a broken step file: the one-executor wording
            state = None
    if state is None:
        return relaunch_instruction(step)
    more = state.limit - running
    if more <= 0:
        return (f"wait: {running} executor(s) launched for step {step} had not returned "
                "when this one did; maker's verdict on the last of them says what to do")
    return (f"launch {more} {EXECUTOR_AGENT} subagent{'s' if more > 1 else ''} at once "
            f"({more} Agent tool call{'s' if more > 1 else ''} in one message, each with "
            f"run_in_background: false and the prompt \"Execute maker step {step}.\"): "
            f"step {step} is decided by a vote, and the winning answer needs a lead of "
            f"{state.k}")


# -- one ballot ----------------------------------------------------------------------


def _flag(store: PlanStore, text: str) -> tuple[str | None, dict[str, Any]]:
    """Why the answer does not vote (or None), and its fields (``vote_rules.flag``)."""
    from maker.red_flag.red_flagger import RedFlagger
    from maker.yaml_cleaner.cleaner import YAMLCleaner

    try:
        data, _ = YAMLCleaner().clean_mapping(text)
    except YAMLCleanError:  # no mapping: the flagger says so
        data = None
    why = flag(store, RedFlagger(), AgentResult(output=data, raw_response=text))
    return why, ({} if why or not isinstance(data, dict) else data)


def _counts(tally: Tally[dict[str, Any]]) -> list[tuple[str, int]]:
    return ranked(tally.counts, tally.ballots, _answer)


def _answer(ballot: dict[str, Any]) -> Any:
    return ballot.get("answer")


def _agent(ballot: dict[str, Any]) -> str | None:
    return ballot.get("agent")


def cast(store: PlanStore, step: int, agent_id: str, text: str) -> BallotResult | None:
    """Record executor ``agent_id``'s final message ``text`` as a ballot on step ``step``
    (in progress); accept the winner once one answer leads by K, or fail the step once
    the bound is spent. None when the step does not vote (K = 1): the caller accepts
    the answer as before."""
    from maker.executor.acceptance.accept import accept_handoff
    from maker.executor.state.lifecycle import fail_step

    with store.lock():
        state = vote_state(store, step)
        if state is None:
            return None
        spec, k, counted, run = state.spec, state.k, state.tally, state.run
        bound = SAMPLES_PER_K * k

        def result(outcome: str, **more: Any) -> BallotResult:
            return BallotResult(step, outcome, k, len(counted.ballots), bound,
                                0 if counted.decided else counted.need(), agent_id,
                                tally=_counts(counted), **more)

        if not agent_id or any(b["agent"] == agent_id for b in run.ballots):
            return result("duplicate")  # not counted: one ballot per executor
        if run.data.get("overflow"):  # the record outgrew its limit: never start again
            reasons = ["the vote's record outgrew maker's limit: its executors' answers are "
                       "too long to keep for a vote. `maker step reset "
                       f"{step}`, then ask for shorter answers, or give the step `votes: 1`"]
            fail_step(store, step, reasons)
            return result("failed", status="failed", reasons=reasons)
        why: str | None = None
        shown = ""
        ballot: dict[str, Any] | None = None
        # A vote decided (or spent) by the ballots on file but not yet applied (a file
        # restored by hand, say) is applied now; this answer is not counted.
        if not (counted.decided or len(counted.ballots) >= bound):
            why, fields = _flag(store, text)
            answer = None if why else answer_form(spec, fields)
            # Only the first answer of its kind can win (the first ballot with the winning
            # answer goes through the gate): the others' texts are not kept.
            first = not why and all(b.get("flag") or canonical(b.get("answer")) !=
                                    canonical(answer) for b in run.ballots)
            ballot = {"agent": agent_id, "answer": answer, "flag": why,
                      "text": text if first else "", "seen": False}
            run.data["ballots"] = [*run.ballots, ballot]
            run.save(durable=True)
            counted.add(ballot)
            shown = "" if why else label(answer)
        if counted.decided:
            vote = counted.vote(bound)
            winner = vote.winner or ballot or {"text": "", "answer": None}
            try:
                accepted = accept_handoff(store, winner["text"],
                                          vote=vote_record(vote, _answer, cast_by=_agent))
            except HandoffRejectedError as exc:
                reasons = [f"the vote chose an answer ({label(winner.get('answer'))}) that "
                           "maker's gate refuses", *(str(p) for p in exc.problems)]
                fail_step(store, step, reasons)
                return result("failed", flag=why, answer=shown, status="failed",
                              reasons=reasons)
            return result("accepted", flag=why, answer=shown, status=accepted.status)
        if len(counted.ballots) >= bound:
            votes = ", ".join(f"{n} for {a}" for a, n in _counts(counted)) or "none"
            flagged = sum(1 for b in counted.ballots if b.flag)
            reasons = [f"the vote was undecided: no answer led by {k} after "
                       f"{len(counted.ballots)} executors ({flagged} flagged); votes: {votes}"]
            fail_step(store, step, reasons)
            return result("failed", flag=why, answer=shown, status="failed", reasons=reasons)
        return result("flagged" if why else "voted", flag=why, answer=shown)
