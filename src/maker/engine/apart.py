"""What a headless run does for a step run beside others, in a process of its own.

A project's checks (``maker verify``) and a landing (``maker land``, which checks the
merged tree) can take minutes. Run inside ``maker run``'s event loop they would stop
every other session of the wave for as long: each runs as ``python -m maker …`` in a
child process instead (the plan lock is a lock between processes), and the loop goes
on serving the other sessions meanwhile. The child is killed if the run is stopped.
A project with no check to run (``maker.verify.detect``: none found, or all turned off)
has nothing long to keep off the loop: both run in this process, at once, since the
child's start alone (an interpreter and maker's imports, 0.1 to 0.3 s on a busy
machine) would cost more than the work.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from maker.errors import MakerError
from maker.executor.parallel.land import land_step
from maker.store.workspace import step_project
from maker.verify.detect import detect_commands
from maker.verify.runner import recorded_evidence, run_verification

if TYPE_CHECKING:
    from maker.store.plan_store import PlanStore
    from maker.verify.result import VerificationRun

__all__ = ["land_apart", "land_feedback", "verify_apart"]


async def _maker(store: PlanStore, *args: str) -> tuple[int, str]:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "maker", *args, "--plans-dir", str(store.root),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=str(store.project), env=dict(os.environ),
        start_new_session=True)
    try:
        out, _ = await child.communicate()
    except BaseException:  # (Ctrl-C, a budget stop: the child goes with the run)
        if child.returncode is None:
            child.kill()
            await child.wait()
        raise
    return child.returncode or 0, out.decode("utf-8", "replace")


async def verify_apart(store: PlanStore, n: int) -> VerificationRun:
    """``maker verify --step n`` (in the step's worktree), as it recorded the run. A
    project with no check to run is verified here, at once: there is nothing long to
    keep off the loop, and a child process would cost more than the run."""

    where = step_project(store, store.load_step(n))
    if not detect_commands(where):
        return run_verification(store, where, step=n)
    code, said = await _maker(store, "verify", "--step", str(n))
    run = recorded_evidence(store, n)
    if run is None:
        raise MakerError(f"`maker verify --step {n}` recorded nothing (exit {code}): "
                         + said.strip()[-300:])
    return run


async def land_apart(store: PlanStore, n: int) -> dict[str, Any]:
    """``maker land n --json``: how the landing went (``maker.executor.parallel.land.Landing``).
    With no check to run on the merged tree, the landing is a few git calls: it is done
    here, at once, rather than in a child process that would cost more than it."""

    if not detect_commands(store.project):
        return land_step(store, n).to_dict()
    code, said = await _maker(store, "land", str(n), "--json")
    try:
        data = json.loads(said[said.index("{"):])
    except ValueError:
        data = None
    if not isinstance(data, dict) or "kind" not in data:
        raise MakerError(f"`maker land {n}` failed (exit {code}): " + said.strip()[-300:])
    return data


def land_feedback(landing: dict[str, Any]) -> str:
    """What the step's next session is told when its change could not land."""
    return (f"\n\n## Your previous run of this step could not land\n\n{landing['reason']}. "
            "Nothing of it was kept in the main checkout. You now work in a new worktree, "
            "cut from the main checkout as it is now (the other change is in it): do the "
            "step again there.\n")
