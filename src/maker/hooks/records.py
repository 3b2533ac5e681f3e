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

__all__ = ["bind_run", "delivered", "delivering", "ended", "first_seen", "read_record",
           "record", "take_record", "write"]

_MAX_AGE_S = 8 * 24 * 3600  # (past the longest bound a subagent may have: 7 days)
_TEXT_CHARS = 4000
_HELD = False  # whether this process holds ``delivering``
_ITEMS = 60


def _verdict_path(agent_id: str) -> Path:
    from maker.core.paths import data_dir

    safe = "".join(c for c in agent_id if c.isalnum() or c in "-_")[:100] or "no-agent"
    return data_dir() / "verdicts" / f"{safe}.json"


def read_record(agent_id: str, strict: bool = False) -> dict[str, Any]:
    """This subagent's record; {} when there is none or it cannot be read (bounded, a
    regular file only). ``strict``: a record that is there but cannot be read raises
    InputError (what binds an agent must not take it for a new one)."""
    if not agent_id:
        return {}
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError

    path = _verdict_path(agent_id)
    try:
        data = json.loads(read_regular_file(path, 1 << 20))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError, InputError) as exc:
        if strict:
            raise InputError(f"maker's record of subagent {agent_id} cannot be read "
                             f"({type(exc).__name__})") from None
        return {}
    if not isinstance(data, dict) and strict:
        raise InputError(f"maker's record of subagent {agent_id} is not a mapping")
    return data if isinstance(data, dict) else {}


def _bounded(value: Any, depth: int = 0) -> Any:
    """A record's value cut to size: what an agent wrote (its problems, its reasons) can
    be of any size, and a record too large to read would look like none at all."""
    if isinstance(value, str):
        return value if len(value) <= _TEXT_CHARS else value[:_TEXT_CHARS] + " …(cut)"
    if depth > 4:
        return None
    if isinstance(value, (list, tuple)):
        return [_bounded(v, depth + 1) for v in list(value)[:_ITEMS]]
    if isinstance(value, dict):
        return {str(k)[:100]: _bounded(v, depth + 1) for k, v in list(value.items())[:_ITEMS]}
    return value


def write(agent_id: str, data: dict[str, Any]) -> None:
    """Replace this subagent's record (and remove those not written for
    ``_MAX_AGE_S``: longer than any subagent may run)."""
    from maker.store.atomic import atomic_write

    path = _verdict_path(agent_id)
    atomic_write(path, json.dumps(_bounded(data), ensure_ascii=False, default=str),
                 durable=False)
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
    bound = read_record(agent_id, strict=True).get("run")
    if isinstance(bound, list):
        return bound
    with delivering():  # (read again under the lock: another hook may have bound it)
        data = read_record(agent_id, strict=True)
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
    began = _began(read_record(agent_id, strict=True))
    if began is not None:
        return began
    with delivering():  # (read again under the lock: the launch's hook may have noted it)
        data = read_record(agent_id, strict=True)
        began = _began(data)
        if began is not None:
            return began
        now = time.time()
        fresh = {"agent_type": agent_type, "outcome": "running", "final": False, "at": now}
        write(agent_id, {**(data or fresh), "began": now})
    return now


def _began(data: dict[str, Any]) -> float | None:
    """A record's start, if it notes one. A start that is not a time, or lies ahead, is
    the epoch: its bound has passed (a bad record never lifts the bound)."""
    began = data.get("began")
    if began is None:
        return None
    ok = isinstance(began, (int, float)) and not isinstance(began, bool) \
        and 0 < began <= time.time() + 60
    return float(began) if ok else 0.0


def ended(agent_id: str) -> None:
    """Note that the client said this subagent ended (its notification): a wait on its
    bound is over, whatever it delivered."""
    data = read_record(agent_id)
    if data and not data.get("ended"):
        write(agent_id, {**data, "ended": True})


@contextlib.contextmanager
def delivering(timeout: float = 30.0) -> Iterator[None]:
    """Held while a deliverable is gated, so that two at once (two SubagentHandback
    calls in one message, a stop racing a hand-back) are gated one after the other and
    the second sees the first (``delivered``); and while a record is read and written
    back (``bind_run``, ``first_seen``: two hooks of one launch run at once). One lock
    for every agent, taken once per process however deep: a gate takes a fraction of a
    second; after ``timeout`` it goes on without it (a hook never wedges)."""
    from maker.core.paths import data_dir
    from maker.store.atomic import exclusive_lock

    global _HELD
    if _HELD:  # (held by this process already: a flock taken twice would wait on itself)
        yield
        return
    folder = data_dir() / "verdicts"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+") as fh:
        exclusive_lock(fh, timeout, poll=0.02)
        _HELD = True
        try:
            yield
        finally:
            _HELD = False


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
