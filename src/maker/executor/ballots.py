"""Voting on a step's answer in the plugin (issue 9 §3): each executor's answer a ballot.

A step votes when its ``votes: K`` says so, or when it is conditional (default lead
:data:`DEFAULT_CONDITIONAL_VOTES`): its answer (the branch it picks) steers the rest of
the plan, and sampling it has no side effects. The main agent launches several
isolated ``maker:step-executor`` subagents at once; when each returns, the SubagentStop
hook (``maker.hooks.voting``) hands its final message here (:func:`cast`): never
accepted on its own, it is recorded as a ballot in ``plans/.maker/votes/step-NN.json``.

- A ballot comes only from that hook, keyed by the subagent's ``agent_id``: a model
  cannot write under plans/ (the guard), no command adds one, and a second ballot
  from the same subagent is refused (not counted).
- A ballot is flagged, and does not vote, when the red flagger rejects the answer or
  the gate would refuse it (every problem but the verification evidence, as in
  ``maker run --vote``). What is compared: a conditional step's status and chosen
  ``next_step``; any other step's status and whole ``output`` (``maker.voting.canonical``).
- The rule is ``maker.voting.Tally`` (first-to-ahead-by-k), replayed from the ballots.
  When one answer leads by K, the first ballot with that answer goes through the gate
  (``accept_handoff``, with the vote's record kept in the handoff) and the step goes on
  as usual (evidence, approval). After :data:`SAMPLES_PER_K` × K ballots without a
  winner the step fails with the tally.
- The ballot, the acceptance (or the failure) are one transaction under the plan lock
  (``maker.store.journal``): a crash leaves the old state or the new one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maker.core.models import AgentResult, PlanStep
from maker.executor.instructions import EXECUTOR_AGENT, relaunch_instruction
from maker.executor.vote_rules import SAMPLES_PER_K, answer_form, flag, label
from maker.store.atomic import atomic_write
from maker.voting import Tally, Vote, canonical

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["DEFAULT_CONDITIONAL_VOTES", "SAMPLES_PER_K", "BallotResult", "cast",
           "current_votes", "launch_instruction", "launch_limit", "returned", "step_votes",
           "vote_state"]

DEFAULT_CONDITIONAL_VOTES = 2
"""The lead a conditional step without ``votes`` needs: one wrong branch is outvoted at
the cost of two executors when they agree (``votes: 1`` turns voting off)."""


_SHOWN = 5  # distinct answers named in a record or a message
# A votes file holds at most SAMPLES_PER_K × MAX_VOTES ballots, each an executor's final
# message (within the hook input's limit): a bigger one is not maker's and starts afresh.
_VOTES_LIMIT = 16 * 2**20


def step_votes(spec: PlanStep) -> int:
    """The lead the step's winning answer needs: its ``votes``, else
    :data:`DEFAULT_CONDITIONAL_VOTES` for a conditional step, else 1 (no vote)."""
    if spec.votes:
        return spec.votes
    return DEFAULT_CONDITIONAL_VOTES if spec.is_conditional else 1


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


def _path(store: PlanStore, step: int) -> Path:
    return store.state_dir / "votes" / f"step-{step:02d}.json"


def _valid(ballot: Any) -> bool:
    return (isinstance(ballot, dict) and isinstance(ballot.get("agent"), str)
            and isinstance(ballot.get("text"), str)
            and (ballot.get("flag") is None or isinstance(ballot.get("flag"), str)))


def _load(store: PlanStore, step: int, started_at: str) -> dict[str, Any]:
    """This run's ballots (a fresh record when the file is missing, broken or older)."""
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError, PlanFileError

    fresh: dict[str, Any] = {"step": step, "started_at": started_at, "ballots": []}
    path = _path(store, step)
    if path.is_dir():  # an atomic write cannot replace a folder: say how to fix it
        raise PlanFileError(path, "is a folder, but maker keeps the step's ballots in a "
                            "file there", fix=f"remove it (`rm -r {path}`): the vote on "
                            f"step {step} starts again")
    try:  # bounded, and never blocked on a FIFO; a file too deep to parse is broken
        data = json.loads(read_regular_file(path, _VOTES_LIMIT).decode("utf-8"))
    except (OSError, ValueError, InputError, RecursionError):
        return fresh
    if not isinstance(data, dict) or data.get("started_at") != started_at \
            or not isinstance(data.get("ballots"), list):
        return fresh
    data["ballots"] = [b for b in data["ballots"] if _valid(b)]
    return data


def _tally(k: int, ballots: list[dict[str, Any]]) -> Tally[dict[str, Any]]:
    tally: Tally[dict[str, Any]] = Tally(k, key=lambda b: canonical(b.get("answer")),
                                         flagged=lambda b: b.get("flag"))
    for ballot in ballots:
        if tally.decided:
            break
        tally.add(ballot)
    return tally


def _active(store: PlanStore) -> tuple[int, str] | None:
    active = store.read_active()
    if not isinstance(active, dict) or not isinstance(active.get("step"), int):
        return None
    return active["step"], str(active.get("started_at") or "")


def vote_state(store: PlanStore, step: int) -> tuple[int, Tally[dict[str, Any]]] | None:
    """(K, the tally so far) of step ``step`` in progress, or None when it does not vote."""
    run = _active(store)
    if run is None or run[0] != step:
        return None
    k = step_votes(store.load_step(step).spec)
    if k == 1:
        return None
    return k, _tally(k, _load(store, *run)["ballots"])


def launch_limit(store: PlanStore, step: int) -> int:
    """How many executors may run the step at once: the votes its leader still lacks
    (so that no answer arrives after the vote is decided), within the bound; 1 when the
    step does not vote."""
    state = vote_state(store, step)
    if state is None:
        return 1
    k, tally = state
    return max(1, min(tally.need(), SAMPLES_PER_K * k - len(tally.ballots)))


def returned(store: PlanStore, step: int, agent_id: str) -> int:
    """Note that executor ``agent_id``'s return reached the main agent (its verdict);
    returns how many executors of the step are still running: the launches that have
    not returned, less those whose ballot is in but whose verdict is not yet out (their
    subagent has stopped). One answer for every verdict computed after the last
    executor stopped, whatever order the client runs the hooks in."""
    from maker.executor.runs import running_launches

    with store.lock():
        run = _active(store)
        if run is None or run[0] != step:
            return 0
        data = _load(store, *run)
        for ballot in data["ballots"]:
            if ballot["agent"] == agent_id and not ballot.get("seen"):
                ballot["seen"] = True
                atomic_write(_path(store, step), json.dumps(data, ensure_ascii=False,
                                                            indent=1))
        # A background launch ended at its SubagentStop, ballot and all: only the
        # foreground ones still count as running until their verdict is out.
        launches = running_launches(store)
        background = {x.get("agent") for x in launches if x.get("background")}
        unseen = sum(1 for b in data["ballots"] if not b.get("seen")
                     and b["agent"] not in background)
        return max(0, len([x for x in launches if not x.get("background")]) - unseen
                   + len(background - {None}))


def launch_instruction(store: PlanStore, step: int, running: int = 0) -> str:
    """What the main agent launches next for step ``step``: one executor, or for a vote
    as many at once as it still needs (minus ``running``, those not returned yet)."""
    try:
        state = vote_state(store, step)
    except Exception:  # noqa: BLE001 - a broken step file: the one-executor wording
        state = None
    if state is None:
        return relaunch_instruction(step)
    k = state[0]
    more = launch_limit(store, step) - running
    if more <= 0:
        return (f"wait: {running} executor(s) launched for step {step} had not returned "
                "when this one did; maker's verdict on the last of them says what to do")
    return (f"launch {more} {EXECUTOR_AGENT} subagent{'s' if more > 1 else ''} at once "
            f"({more} Agent tool call{'s' if more > 1 else ''} in one message, each with "
            f"run_in_background: false and the prompt \"Execute maker step {step}.\"): "
            f"step {step} is decided by a vote, and the winning answer needs a lead of {k}")


# -- one ballot ----------------------------------------------------------------------


def _flag(store: PlanStore, text: str) -> tuple[str | None, dict[str, Any]]:
    """Why the answer does not vote (or None), and its fields (``vote_rules.flag``)."""
    from maker.red_flag.red_flagger import RedFlagger
    from maker.yaml_cleaner.cleaner import YAMLCleaner

    try:
        data, _ = YAMLCleaner().clean_mapping(text)
    except Exception:  # noqa: BLE001 - no mapping: the flagger says so
        data = None
    why = flag(store, RedFlagger(), AgentResult(output=data, raw_response=text))
    return why, ({} if why or not isinstance(data, dict) else data)


def _counts(tally: Tally[dict[str, Any]]) -> list[tuple[str, int]]:
    firsts = {canonical(b.answer.get("answer")): b.answer.get("answer")
              for b in reversed(tally.ballots) if b.flag is None}
    ranked = sorted(tally.counts.items(), key=lambda kv: -kv[1])
    return [(label(firsts.get(key)), n) for key, n in ranked[:_SHOWN]]


def current_votes(store: PlanStore, step: int) -> tuple[list[tuple[str, int]], int, int]:
    """(the votes so far, the ballots so far, the votes the leader lacks) of step ``step``
    in progress; ([], 0, 0) when it does not vote."""
    state = vote_state(store, step)
    if state is None:
        return [], 0, 0
    tally = state[1]
    return _counts(tally), len(tally.ballots), 0 if tally.decided else tally.need()


def vote_record(vote: Vote[dict[str, Any]], counts: list[tuple[str, int]]) -> dict[str, Any]:
    """The vote as it goes into the accepted handoff."""
    return {"k": vote.k, "decided": vote.decided, "samples": vote.samples,
            "flagged": vote.flagged, "margin": vote.margin,
            "tally": [{"answer": a, "votes": n} for a, n in counts],
            "flag_reasons": [r[:200] for r in vote.flag_reasons[:_SHOWN]],
            "ballots": [b.answer.get("agent") for b in vote.ballots]}


def cast(store: PlanStore, step: int, agent_id: str, text: str) -> BallotResult | None:
    """Record executor ``agent_id``'s final message ``text`` as a ballot on step ``step``
    (in progress); accept the winner once one answer leads by K, or fail the step once
    the bound is spent. None when the step does not vote (K = 1): the caller accepts
    the answer as before."""
    from maker.errors import HandoffRejectedError
    from maker.executor.accept import accept_handoff
    from maker.executor.lifecycle import fail_step

    with store.lock():
        run = _active(store)
        if run is None or run[0] != step:
            return None
        spec = store.load_step(step).spec
        k = step_votes(spec)
        if k == 1:
            return None
        bound = SAMPLES_PER_K * k
        data = _load(store, *run)
        ballots: list[dict[str, Any]] = data["ballots"]
        tally = _tally(k, ballots)

        def result(outcome: str, **more: Any) -> BallotResult:
            return BallotResult(step, outcome, k, len(tally.ballots), bound,
                                0 if tally.decided else tally.need(), agent_id,
                                tally=_counts(tally), **more)

        if not agent_id or any(b["agent"] == agent_id for b in ballots):
            return result("duplicate")  # not counted: one ballot per executor
        why: str | None = None
        shown = ""
        ballot: dict[str, Any] | None = None
        # A vote decided (or spent) by the ballots on file but not yet applied (a file
        # restored by hand, say) is applied now; this answer is not counted.
        if not (tally.decided or len(tally.ballots) >= bound):
            why, fields = _flag(store, text)
            answer = None if why else answer_form(spec, fields)
            ballot = {"agent": agent_id, "answer": answer, "flag": why, "text": text,
                      "seen": False}
            data["ballots"] = [*ballots, ballot]
            atomic_write(_path(store, step), json.dumps(data, ensure_ascii=False, indent=1))
            tally.add(ballot)
            shown = "" if why else label(answer)
        if tally.decided:
            vote = tally.vote(bound)
            winner = vote.winner or ballot or {"text": "", "answer": None}
            try:
                accepted = accept_handoff(store, winner["text"],
                                          vote=vote_record(vote, _counts(tally)))
            except HandoffRejectedError as exc:
                reasons = [f"the vote chose an answer ({label(winner.get('answer'))}) that "
                           "maker's gate refuses", *(str(p) for p in exc.problems)]
                fail_step(store, step, reasons)
                return result("failed", flag=why, answer=shown, status="failed",
                              reasons=reasons)
            return result("accepted", flag=why, answer=shown, status=accepted.status)
        if len(tally.ballots) >= bound:
            votes = ", ".join(f"{n} for {a}" for a, n in _counts(tally)) or "none"
            reasons = [f"the vote was undecided: no answer led by {k} after "
                       f"{len(tally.ballots)} executors ({sum(1 for b in tally.ballots if b.flag)} "
                       f"flagged); votes: {votes}"]
            fail_step(store, step, reasons)
            return result("failed", flag=why, answer=shown, status="failed", reasons=reasons)
        return result("flagged" if why else "voted", flag=why, answer=shown)
