"""maker's verdict on a maker subagent that returned: what happened to its deliverable,
what to tell the user, what to do next, and the line to end the reply with.

The hooks record what happened at the subagent's end (``maker.hooks.records``: its
"facts") and carry the verdict to the main agent when its work reaches it
(``maker.hooks.verdicts``, ``maker.hooks.notifications``); the wording, and every read
of the step and its vote behind it, is here. A vote is read once per verdict
(``maker.executor.votes.ballots.vote_state``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from maker.executor.rules.instructions import relaunch_instruction
from maker.executor.rules.vote_rules import VoteRecord
from maker.executor.verdicts.outcome import outcome
from maker.executor.votes.ballots import launch_instruction, returned, vote_state

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore

__all__ = ["SENTINELS", "ballot_said", "executor_verdict", "planner_verdict",
           "reviewer_verdict", "votes_said"]

SENTINELS = {"complete": "STEP_COMPLETE", "failed": "STEP_FAILED", "blocked": "STEP_BLOCKED"}


def _problems(items: Any) -> str:
    listed = [str(p) for p in items] if isinstance(items, list) else []
    return "\n".join(f"- {p}" for p in listed) or "- (none recorded)"


def planner_verdict(facts: dict[str, Any]) -> str:
    outcome_ = facts.get("outcome")
    if outcome_ == "written":
        archived = facts.get("archived")
        where = (f" The previous plan was archived, not lost: it is in {archived}/."
                 if archived else "")
        return (f"plan written to {facts.get('root')} ({facts.get('steps')} steps).{where} "
                "Run `maker status` and show the user the plan: its steps, and what runs "
                "first (/maker:step).")
    if outcome_ == "refused":
        return (f"the planner's plan is valid but was NOT written: {facts.get('reason')} "
                "The plan under plans/ is still the old one: do not show it as the new plan. "
                "Tell the user that no new plan was saved, why, and what to do first.")
    if outcome_ == "overran":
        return (f"NO plan was written: the planner was ended ({facts.get('reason')}). Tell "
                "the user; /maker:plan again (with a smaller task, or a larger "
                "subagent_timeout in plans/settings.yaml) makes one.")
    if outcome_ == "rejected":
        return (f"NO plan was written: maker rejected the planner's answer "
                f"{facts.get('attempts')} times. maker's problems with its last answer:\n"
                f"{_problems(facts.get('problems'))}\nTell the user that no plan was written "
                "and quote these problems.")
    return ("the planner returned, but maker recorded no plan from it (its answer did not "
            "reach maker's SubagentStop hook), so no plan was written by this run. Tell the "
            "user, and run `maker status` to show what plans/ holds now.")


# -- the step executor ----------------------------------------------------------------


def votes_said(tally: Any) -> str:
    """The votes so far, in words: \"3 for A, 1 for B\"."""
    listed = [f"{t[1]} for {t[0]}" for t in tally
              if isinstance(t, (list, tuple)) and len(t) == 2] \
        if isinstance(tally, list) else []
    return ", ".join(listed) or "none yet"


def ballot_said(facts: dict[str, Any]) -> str:
    """What became of one executor's answer on a voting step (its ballot's facts)."""
    kind = facts.get("ballot")
    if kind == "duplicate":
        return "its answer was NOT counted (one ballot per executor, within the vote's bound)"
    if facts.get("flag"):
        return f"its answer was flagged and does not vote ({str(facts['flag'])[:300]})"
    return f"its answer was recorded as a vote for {facts.get('answer')}"


def _ballot(store: PlanStore, step: int, facts: dict[str, Any]) -> tuple[str, bool]:
    """The verdict on an executor whose answer was a ballot: ``(text, whole)``;
    ``whole`` False: a note on the vote, which the usual verdict follows. The vote and
    what to do next are read now, once, under the plan lock, not when the ballot was
    cast: the client may run the executors' hooks in any order."""
    k, bound = facts.get("k"), facts.get("bound")
    with store.lock():
        state = vote_state(store, step)
        if state is not None:  # undecided: the step is still in progress
            running = returned(state, str(facts.get("agent") or ""))
            return (f"the executor returned; {ballot_said(facts)}. Votes so far: "
                    f"{votes_said(state.counts())}: no answer leads by {k} yet (the leader "
                    f"needs {state.need} more), after {len(state.tally.ballots)} of at most "
                    f"{bound} executors. The step is still in progress. Next: "
                    f"{launch_instruction(store, step, running, state)}.", True)
    now = outcome(store, step)
    if now["status"] == "failed":
        reasons = now["reasons"] or facts.get("reasons") or []
        return ("FAILED: its vote ended without an accepted answer. Reasons:\n"
                + "\n".join(f"- {r}" for r in reasons)
                + f"\nTell the user that the step failed and why; `maker step reset {step}` "
                "puts it back to try again. End your reply with the line STEP_FAILED.", True)
    vote = VoteRecord.from_dict((store.read_handoff(step) or {}).get("vote"))
    tally = list(vote.tally)
    return (f"decided by a vote (the answer {tally[0][0] if tally else '(not recorded)'} led "
            f"by {k}; votes: {votes_said(tally)}; {vote.samples} executors, "
            f"{vote.flagged} flagged)", False)


def executor_verdict(store: PlanStore, facts: dict[str, Any]) -> str:
    """The verdict on a step executor that returned, from its record's ``facts``."""
    step = facts.get("step")
    if not isinstance(step, int):
        active = store.read_active()
        step = active.get("step") if isinstance(active, dict) else None
    if facts.get("outcome") == "stale":
        return (f"the step executor returned, but it was launched for an earlier run of "
                f"step {step} (it ended, was begun again or taken over), so its answer was "
                "not recorded. Tell the user; `maker status` shows the plan. End your reply "
                "with the line STEP_BLOCKED.")
    if facts.get("outcome") == "unchecked":  # (a broken plans/settings.yaml, say)
        return (f"the step executor of step {step} returned, but maker could not check its "
                f"handoff: {facts.get('error')}. Its answer is kept; the step stays in "
                "progress. Do not launch it again: tell the user what to fix, and that "
                f"/maker:step {step} continues then. End your reply with the line "
                "STEP_BLOCKED.")
    if facts.get("outcome") == "overran":
        return _overran(store, step, facts)
    if facts.get("outcome") == "no-step" or not isinstance(step, int):
        return ("the step executor returned, but no step was in progress, so its answer was "
                "not recorded. Tell the user; `maker status` shows the plan. End your reply "
                "with the line STEP_BLOCKED.")
    vote = ""
    if facts.get("outcome") == "ballot":
        said, whole = _ballot(store, step, facts)
        if whole:
            return f"step {step} ({store.load_step(step).title}): {said}"
        vote = f", {said}"  # (a note on the vote, which the usual verdict follows)
    now = outcome(store, step)
    head = f"step {step} ({now['title']}){vote}"
    if facts.get("outcome") == "failed":
        return (f"{head} FAILED: maker rejected its handoff {facts.get('attempts')} times. "
                f"Reasons:\n{_problems(facts.get('reasons'))}\nTell the user that the step "
                "failed and why; `maker step reset "
                f"{step}` puts it back to try again. End your reply with the line STEP_FAILED.")
    if now.get("deviation"):
        dev = now["deviation"]
        by_code = (" maker's own checks found it (a step it builds on was redone)."
                   if dev.get("forced_by_code") else "")
        return (f"{head}: the executor found that the step as written no longer fits the "
                f"plan (a major deviation) and stopped before any edit.{by_code}\n"
                f"What changed: {dev.get('what_changed')}\n"
                f"The revised step: {dev.get('revised_task')}\n"
                f"Next: {now['next']}.{_ask(now)}")
    if now["status"] == "in-progress":
        why = (f" maker's problems with its last answer:\n{_problems(facts.get('problems'))}\n"
               if facts.get("outcome") == "rejected" else " ")
        if facts.get("outcome") == "gone":
            why = (f" The client reports it {facts.get('status')}: it handed nothing off, and "
                   "the working tree may hold part of its work. ")
        return (f"{head}: the executor returned without an accepted handoff, so the step is "
                f"still in progress.{why}Next: {relaunch_instruction(step)}.")
    said = f"handoff accepted; status: {now['status']}."
    if now["summary"]:
        said += f" Summary: {now['summary']}"
    said += _proposals_said(store, step)
    if now["reasons"]:
        said += "\nReasons:\n" + _problems(now["reasons"])
    sentinel = now.get("sentinel") or SENTINELS.get(now["status"])
    if now["status"] == "awaiting-approval":
        review = (f"\nA review is required ({now['review_why']}): launch maker:reviewer "
                  "as `Next:` says before asking for approval."
                  if now["review_required"] and not now.get("ask") else "")
        if now.get("review_skipped"):
            review = ("\nNo review: STEP_SKIP_REVIEW=1 is set (a person's setting), so the "
                      "reviewer is not launched and the user decides.")
        return f"{head}: {said}{review}\nNext: {now['next']}.{_ask(now)}"
    tell = {"complete": "Tell the user what the step did (the summary).",
            "failed": "Tell the user that the step failed, and why.",
            "blocked": "Tell the user what blocks the step."}.get(now["status"],
                                                                  "Tell the user.")
    return f"{head}: {said}\n{tell} End your reply with the line {sentinel or 'STEP_BLOCKED'}."


def _overran(store: PlanStore, step: Any, facts: dict[str, Any]) -> str:
    """The verdict on a step executor maker ended at its time bound."""
    reason = facts.get("reason") or "it ran past subagent_timeout and was ended"
    if not facts.get("failed") or not isinstance(step, int):
        run = f"Its run of step {step}" if isinstance(step, int) else "The run it worked for"
        return (f"the step executor was ended: {reason}. {run} was over already, so nothing "
                "was recorded. Tell the user; `maker status` shows the plan. End your reply "
                "with the line STEP_BLOCKED.")
    return (f"step {step} ({store.load_step(step).title}) FAILED: {reason}; maker recorded "
            f"the step failed. Tell the user that the step ran out of time and failed; "
            f"`maker step reset {step}` puts it back to try again, and subagent_timeout in "
            "plans/settings.yaml gives a step longer. End your reply with the line "
            "STEP_FAILED.")


def _proposals_said(store: PlanStore, step: int) -> str:
    """The changes of scope step ``step`` proposed that await the user (its sweep)."""
    from maker.executor.protocol.sweep import open_proposals

    mine = [p for p in open_proposals(store) if p.get("from_step") == step]
    if not mine:
        return ""
    return ("\nIt proposes changes of scope, which change nothing until the user decides "
            "(show them; the user types `/maker:proposal accept N` or `/maker:proposal drop "
            "N`):\n" + "\n".join(f"- proposal {p['id']}: {p['text']}" for p in mine))


def _ask(now: dict[str, Any]) -> str:
    """The approval question's input, when the next thing is to ask it: the main agent
    passes it to AskUserQuestion as it is, with no `maker step outcome N` to fetch it."""
    if not now.get("ask"):
        return ""
    return f"\nask: {json.dumps(now['ask'], ensure_ascii=False)}"


def reviewer_verdict(store: PlanStore, facts: dict[str, Any]) -> str:
    """The verdict on the reviewer that returned, from its record's ``facts``."""
    if facts.get("outcome") == "overran":
        step = facts.get("step")
        if not isinstance(step, int):
            return (f"the reviewer was ended: {facts.get('reason')}. No review was recorded. "
                    "Tell the user; `maker status` shows what awaits approval.")
        return (f"the reviewer of step {step} was ended: {facts.get('reason')}. No review "
                f"was recorded. Tell the user. Next: {outcome(store, step)['next']}.")
    if facts.get("outcome") != "recorded" or not isinstance(facts.get("step"), int):
        return ("the reviewer returned, but its review was not recorded (no single step "
                "awaits approval). Tell the user; `maker status` shows the plan.")
    step = int(facts["step"])
    now = outcome(store, step)
    head = f"the review of step {step} is recorded (verdict: {facts.get('verdict')})"
    kind = facts.get("decision")
    if kind == "sent-back":
        said = (f"{head}. RED findings: step {step} was {facts.get('decided')}. Tell the user "
                "in a sentence or two what the reviewer found.")
        return f"{said} {_after_sent_back(store, step, now)}"
    if kind == "approved":
        sentinel = now.get("sentinel") or SENTINELS.get(now["status"]) or "STEP_BLOCKED"
        return (f"{head}, and step {step} was {facts.get('decided')}. Show the user its "
                f"findings, and end your reply with the line {sentinel}.")
    said = f": step {step} is {facts['decided']}" if facts.get("decided") else ""
    return (f"{head}{said}. Show the user its findings. Next: {now['next']}.{_ask(now)}")


def _after_sent_back(store: PlanStore, step: int, now: dict[str, Any]) -> str:
    """What to do about a step the reviewer sent back, as it is now: the reviewer's
    notification may come after the main agent launched the next executor already (its
    Stop hook asks for it as soon as the step is in progress again)."""
    if now["status"] != "in-progress":  # the next attempt returned already
        return f"Its next attempt has returned since: {now['status']}. Next: {now['next']}." \
            + _ask(now)
    from maker.executor.votes.runs import background_running

    if background_running(store, store.read_active() or {}):
        return ("Its next executor was launched already and runs in the background: do not "
                "launch another; end your turn, and maker's verdict on it arrives with its "
                "notification.")
    return (f"Next: {relaunch_instruction(step)} (maker's verdict on it follows, as for the "
            "first executor).")
