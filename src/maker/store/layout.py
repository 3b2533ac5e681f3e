"""The shape of a plans directory: which entries are folders and which are files.

A hand edit or a stray command can leave ``plans/.maker`` as a file, ``handoffs`` as a
file or ``.maker/lock`` as a folder. Every command and hook checks the shape first
(``check_layout``), so such a plan is one clear error naming the path and the fix,
never a traceback from deep inside a write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from maker.errors import PlanFileError

__all__ = ["check_layout"]

# Relative path -> True for a folder, False for a regular file.
_SHAPE: dict[str, bool] = {
    "steps": True,
    "handoffs": True,
    "archive": True,
    ".maker": True,
    ".maker/lock": False,
    ".maker/active.json": False,
    ".maker/runs": True,  # each run's record (maker.executor.votes.run_record)
    "PLAN.md": False,
    "NOTES.md": False,
}


# What maker makes again by itself, so removing the wrong entry loses nothing.
_REMAKES = {"lock": "maker creates the lock itself",
            "active.json": "maker rebuilds the step-in-progress marker from the step files"}


def check_layout(root: Path) -> None:
    """Raise PlanFileError when ``root`` or one of maker's entries in it has the wrong
    kind (a file where a folder belongs, or the reverse). Missing entries are fine."""
    _check(root, True, root)
    for relative, folder in _SHAPE.items():
        _check(root / relative, folder, root)


def _check(path: Path, folder: bool, root: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except NotADirectoryError:  # a parent is a file: reported for the parent
        return
    except OSError as exc:
        raise PlanFileError(path, f"cannot be read ({exc.strerror or exc})",
                            fix="check its permissions") from None
    if folder and not stat.S_ISDIR(mode):
        raise PlanFileError(path, "is a file, but maker keeps a folder there",
                            fix=_move_away(path, root))
    if not folder and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        fix = _REMAKES.get(path.name)
        raise PlanFileError(path, f"is {kind}, but maker keeps a file there",
                            fix=f"remove it (`rm -r {path}`): {fix}" if fix and
                            path.parent.name == ".maker" else _move_away(path, root))


def _move_away(path: Path, root: Path) -> str:
    if path == root:
        return (f"move it away (`mv {path} {path}.bak`) or choose another plans folder "
                "with --plans-dir / MAKER_PLANS_DIR")
    return f"move it away (`mv {path} {path}.bak`), then run the command again"
