"""What maker recorded of each of its subagents, by ``agent_id``: its gated deliverable
(the outcome the main agent's verdict is worded from), its Agent call, and the run of a
step it works for.

- A subagent's deliverable is gated once: a record that is ``final`` (anything but a
  refusal the subagent is asked to correct) makes a second stop of the same subagent,
  or a SubagentHandback after a final answer, change nothing (``delivered``); gates run
  one at a time (``delivering``).
- An executor is bound to the run it was launched for (``bind_run``): its step, when
  that run began, and the session that owns it.

The records live in the plugin's data dir, not under plans/: a rejected plan must not
create plans/ (whose presence wakes every later hook). Agent ids are unique; records
older than a day are removed.
"""

from __future__ import annotations

import contextlib
import json
import time

TYPE_CHECKING = False  # typing's, without importing typing: the Stop hook reads records

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from maker.hooks.protocol import HookInput

__all__ = ["bind_run", "delivered", "delivering", "first_seen", "read_record", "record",
           "take_record", "write"]

_MAX_AGE_S = 24 * 3600


def _verdict_path(agent_id: str) -> Path:
    from maker.core.paths import data_dir

    safe = "".join(c for c in agent_id if c.isalnum() or c in "-_")[:100] or "no-agent"
    return data_dir() / "verdicts" / f"{safe}.json"


def read_record(agent_id: str) -> dict[str, Any]:
    """This subagent's record; {} when there is none or it cannot be read (bounded, a
    regular file only)."""
    if not agent_id:
        return {}
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError

    try:
        data = json.loads(read_regular_file(_verdict_path(agent_id), 1 << 20))
    except (OSError, ValueError, InputError):
        return {}
    return data if isinstance(data, dict) else {}


def write(agent_id: str, data: dict[str, Any]) -> None:
    """Replace this subagent's record (and remove those older than a day)."""
    from maker.store.atomic import atomic_write

    path = _verdict_path(agent_id)
    atomic_write(path, json.dumps(data, ensure_ascii=False, default=str), durable=False)
    for old in path.parent.glob("*.json"):
        try:
            if old.stat().st_mtime < time.time() - _MAX_AGE_S:
                old.unlink()
        except OSError:
            pass


def record(hook: HookInput, outcome: str, *, final: bool = True, **facts: Any) -> None:
    """Record what maker did with this subagent's answer (SubagentStop, or its
    SubagentHandback call). ``final``: False for a refusal the subagent is asked to
    correct; anything else is its one gated deliverable."""
    if not hook.agent_id:
        return
    kept = {k: v for k, v in read_record(hook.agent_id).items()
            if k in ("launch_id", "run", "began")}
    write(hook.agent_id, {**kept, "agent_type": hook.agent_type, "outcome": outcome,
                           "final": final, "at": time.time(), **facts})


def bind_run(agent_id: str, agent_type: str, run: list[Any]) -> list[Any] | None:
    """The run this executor works for: ``run`` the first time maker sees the agent
    (its background launch, else its first tool call or answer), the same ever after.
    None without an agent id (nothing to bind)."""
    if not agent_id:
        return None
    data = read_record(agent_id)
    bound = data.get("run")
    if isinstance(bound, list):
        return bound
    fresh = {"agent_type": agent_type, "outcome": "running", "final": False,
             "at": time.time()}
    write(agent_id, {**(data or fresh), "run": run})
    return run


def first_seen(agent_id: str, agent_type: str) -> float | None:
    """When maker first saw this subagent (its background launch, else its first tool
    call): the start of its bound (``maker.executor.state.overrun``). None without an id."""
    if not agent_id:
        return None
    data = read_record(agent_id)
    began = data.get("began")
    if isinstance(began, (int, float)) and not isinstance(began, bool):
        return float(began)
    now = time.time()
    fresh = {"agent_type": agent_type, "outcome": "running", "final": False, "at": now}
    write(agent_id, {**(data or fresh), "began": now})
    return now


@contextlib.contextmanager
def delivering(timeout: float = 30.0) -> Iterator[None]:
    """Held while a deliverable is gated, so that two at once (two SubagentHandback
    calls in one message, a stop racing a hand-back) are gated one after the other and
    the second sees the first (``delivered``). One lock for every agent: a gate takes a
    fraction of a second; after ``timeout`` it gates without it (a hook never wedges)."""
    from maker.core.paths import data_dir
    from maker.store.atomic import exclusive_lock

    folder = data_dir() / "verdicts"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+") as fh:
        exclusive_lock(fh, timeout, poll=0.02)
        yield


def delivered(agent_id: str) -> bool:
    """Whether this subagent's deliverable was already gated (a final record)."""
    return bool(agent_id) and read_record(agent_id).get("final") is True


def take_record(agent_id: str) -> dict[str, Any]:
    """The record, noted as told to the main agent (kept: a later stop of the same
    subagent must still see that its deliverable was gated)."""
    data = read_record(agent_id)
    if data and not data.get("told"):
        write(agent_id, {**data, "told": True})
    return data
