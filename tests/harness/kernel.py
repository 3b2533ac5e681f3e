"""The tests that run commands in maker's OS boundary need a machine that can make one.

Elsewhere they are skipped, saying why; where the machine is known to make one (CI sets
``CI_EXPECTS_KERNEL=1``), a machine that cannot is a failure, not a skip.
"""

from __future__ import annotations

import os

import pytest

from maker.tools.box.boundary import protection

__all__ = ["require_kernel"]


def require_kernel() -> None:
    """Skip (or, where CI expects a boundary, fail) unless this machine makes one."""
    found = protection(refresh=True)
    if found.kernel:
        return
    why = f"this machine cannot make maker's OS boundary: {found.how}"
    if os.environ.get("CI_EXPECTS_KERNEL") == "1":
        pytest.fail(why)
    pytest.skip(why)
