"""One job per module: no module in ``src/maker`` (or ``dev/maker_scripted``, the demo's
scripted model) grows past about 350 lines.

A module that outgrows this holds more than one job: split it by job (see the module
map in docs/architecture.md) rather than raise the limit.
"""

from __future__ import annotations

from pathlib import Path

import maker
import maker_scripted

PACKAGES = [Path(m.__file__).resolve().parent for m in (maker, maker_scripted)]
MAX_LINES = 350


def test_no_module_is_over_the_limit() -> None:
    over = {str(p.relative_to(root.parent)): n for root in PACKAGES
            for p in sorted(root.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not over, f"split these by job (over {MAX_LINES} lines): {over}"
