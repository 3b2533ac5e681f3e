"""One job per module: no module in ``src/maker`` grows past about 350 lines.

A module that outgrows this holds more than one job: split it by job (see the module
map in docs/architecture.md) rather than raise the limit.
"""

from __future__ import annotations

from pathlib import Path

import maker

SRC = Path(maker.__file__).resolve().parent
MAX_LINES = 350


def test_no_module_is_over_the_limit() -> None:
    over = {str(p.relative_to(SRC)): n for p in sorted(SRC.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not over, f"split these by job (over {MAX_LINES} lines): {over}"
