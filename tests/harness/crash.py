"""A state change killed part way: run in a forked child that dies (``os._exit``, as a
SIGKILL would leave it: no cleanup, no ``finally``) just before its N-th file-system
change (``run_killed``), for the crash tests."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable

from maker.store.plan_store import PlanStore

# The file-system changes a kill is placed before, and the child's exit status when killed.
MUTATORS = ("replace", "rename", "unlink", "remove", "mkdir", "rmdir", "link", "symlink")
DIED = 137


def die_before_change(n: int) -> None:
    """Arm this process to exit (status ``DIED``) just before its n-th call of ``MUTATORS``."""
    calls = [0]

    def arm(real: Callable[..., object]) -> Callable[..., object]:
        def wrapped(*args: object, **kwargs: object) -> object:
            calls[0] += 1
            if calls[0] == n:
                os._exit(DIED)
            return real(*args, **kwargs)
        return wrapped

    for name in MUTATORS:
        setattr(os, name, arm(getattr(os, name)))


def run_killed(op: Callable[[PlanStore], object], store: PlanStore, n: int,
               arm: Callable[[int], None] | None = None) -> bool:
    """Run ``op`` in a child killed before its n-th change (``arm(n)`` sets the kill up:
    by default, before the n-th rename, unlink, mkdir, rmdir or link); True if it was
    killed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (xdist)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            (arm or die_before_change)(n)
            op(store)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, DIED), f"the operation failed on its own (exit {code})"
    return code == DIED
