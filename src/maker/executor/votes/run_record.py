"""The record of one run of the step in progress, in ``plans/.maker/runs/step-NN.json``:
its turns, its executor launches and, on a step decided by a vote, their ballots
(``maker.executor.votes.runs``, ``maker.executor.votes.ballots``). One file holds the whole run,
and an event reads it once (:func:`load_run`) and writes it back whole
(:meth:`Run.save`, under the plan lock).

A run is the step's ``started_at``: a record of an earlier run, a missing or a broken
one reads as a fresh record (a vote in progress then starts again).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from maker.errors import InputError, PlanFileError
from maker.store.atomic import atomic_write

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

    from maker.store.state import StateDir

__all__ = ["Run", "load_run", "read_record"]


# A run's record holds at most 20 launches and, on a vote, the text of the first answer
# of each kind (each within the hook input's limit). A bigger file reads as a fresh
# record, marked ``overflow``: a vote on it fails rather than start again.
_RECORD_LIMIT = 16 << 20


class Run:
    """One run of the step in progress (``active.json``'s step and ``started_at``) and
    its record, read once; :meth:`save` writes it back (under the plan lock)."""

    def __init__(self, store: StateDir, active: dict[str, Any], data: dict[str, Any]) -> None:
        self.store = store
        self.step: int = active["step"]
        self.owner = active.get("session_id")
        self.data = data

    @property
    def turns(self) -> list[Any]:
        return self.data["turns"]  # type: ignore[no-any-return]

    @property
    def launches(self) -> list[dict[str, Any]]:
        return self.data["launches"]  # type: ignore[no-any-return]

    @property
    def ballots(self) -> list[dict[str, Any]]:
        return self.data["ballots"]  # type: ignore[no-any-return]

    def ours(self, launch: dict[str, Any]) -> bool:
        """Whether ``launch`` belongs to the run's owner session (a launch of a session
        the step was taken over from is void)."""
        return not (self.owner and launch.get("session_id") not in (None, self.owner))

    def running(self, launch_id: str = "") -> list[dict[str, Any]]:
        """The run's launches that have not returned, ``launch_id`` left out."""
        return [x for x in self.launches if not x.get("done") and x.get("id") != launch_id
                and self.ours(x)]

    def save(self, durable: bool = False) -> None:
        path = _path(self.store, self.step)
        if path.is_dir():  # an atomic write cannot replace a folder: say how to fix it
            raise PlanFileError(path, "is a folder, but maker keeps the record of the "
                                "step's run in a file there", fix=f"remove it (`rm -r "
                                f"{path}`): the executors and votes of step {self.step}'s "
                                "run start again")
        # A record that holds ballots is written durably, whatever changed in it.
        atomic_write(path, json.dumps(self.data, indent=1, ensure_ascii=False),
                     durable=durable or bool(self.ballots))


def _path(store: StateDir, step: int) -> Path:
    return store.state_dir / "runs" / f"step-{step:02d}.json"


def _valid_ballot(ballot: Any) -> bool:
    return (isinstance(ballot, dict) and isinstance(ballot.get("agent"), str)
            and isinstance(ballot.get("text"), str)
            and (ballot.get("flag") is None or isinstance(ballot.get("flag"), str)))


def read_record(store: StateDir, step: int, started_at: str) -> dict[str, Any]:
    """This run's record (a fresh one when the file is missing, broken or older)."""
    fresh: dict[str, Any] = {"step": step, "started_at": started_at, "turns": [],
                             "launches": [], "ballots": []}
    from maker.core.bounded import read_regular_file

    path = _path(store, step)
    try:  # bounded, a regular file only: a FIFO or a huge file must not hang a hook
        data = json.loads(read_regular_file(path, _RECORD_LIMIT))
    except InputError:
        with contextlib.suppress(OSError):  # over the limit: a vote must not restart
            fresh["overflow"] = path.is_file() and path.stat().st_size > _RECORD_LIMIT
        return fresh
    except (OSError, ValueError, RecursionError):
        return fresh
    if not isinstance(data, dict) or data.get("started_at") != started_at:
        return fresh
    for key in ("turns", "launches", "ballots"):
        if not isinstance(data.get(key), list):
            data[key] = []
    data["launches"] = [x for x in data["launches"] if isinstance(x, dict) and all(
        isinstance(x.get(key) or "", str) for key in ("id", "agent", "session_id"))]
    data["ballots"] = [b for b in data["ballots"] if _valid_ballot(b)]
    return data


def load_run(store: StateDir, step: int | None = None,
             active: dict[str, Any] | None = None) -> Run | None:
    """The run of the step in progress (of step ``step`` only, if given), or None.
    ``active``: the marker, when the caller has read it already."""
    if active is None:
        active = store.read_active()  # type: ignore[attr-defined]
    if not isinstance(active, dict):
        return None
    if step is not None and step != active.get("step"):
        from maker.store.active import member

        active = member(active, step) or active  # (one step of a wave: its own run)
    number = active.get("step")
    if not isinstance(number, int) or (step is not None and number != step):
        return None
    return Run(store, active, read_record(store, number, str(active.get("started_at") or "")))
