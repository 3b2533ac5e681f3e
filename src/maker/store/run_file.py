"""The record of a ``/maker:run``: ``plans/.maker/run.json``, sealed.

One file holds the run: when it began and in which session, its ``--parallel``, each
step it ran (began, ended, how it ended, who approved it, the client's tokens and time),
the approval policy a person chose for the rest of the run, whether it stopped for a
person and why, and when it ended. maker seals it (``maker.store.seal``): a file written
by anyone else reads as no run at all, so no model can hand itself a run's policy.

Its meaning (what a run does next) is ``maker.executor.loop``'s; this module only reads
and writes the file, whole, atomically.
"""

from __future__ import annotations

# (seal and atomic are imported on use: the Stop hook asks only whether a run exists)

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any

    from maker.store.state import StateDir

__all__ = ["RUN_FILE", "read_run", "write_run"]

RUN_FILE = "run.json"
# A run of a 10,000-step plan records 10,000 small entries: well under this.
_LIMIT = 8 * 2**20


def read_run(store: StateDir) -> dict[str, Any]:
    """The run as maker sealed it; ``{}`` when there is none, it cannot be read or its
    seal does not hold."""
    path = store.state_dir / RUN_FILE
    if not path.exists():
        return {}
    from maker.store.seal import read_sealed

    return read_sealed(path, _LIMIT)


def write_run(store: StateDir, run: dict[str, Any]) -> dict[str, Any]:
    """Seal ``run`` and write it in place of the old record; the sealed record. Raises
    PlanFileError when something other than a file is in its place."""
    path = store.state_dir / RUN_FILE
    if path.is_dir() or (path.exists() and not path.is_file()):
        from maker.errors import PlanFileError

        raise PlanFileError(path, "is not a file, but maker keeps the record of a "
                            "/maker:run there", fix=f"remove it (`rm -r {path}`): the run "
                            "begins again from where the plan stands")
    import json

    from maker.store.atomic import atomic_write
    from maker.store.seal import seal

    sealed = seal(run)
    atomic_write(path, json.dumps(sealed, indent=1, ensure_ascii=False))
    return sealed
