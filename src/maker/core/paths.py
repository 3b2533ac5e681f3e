"""Where the plans live: ``plans/`` at the project root, unless told otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["find_plans_dir", "find_project_root"]


def find_project_root(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """``CLAUDE_PROJECT_DIR``, else the enclosing git root, else the current directory."""
    env = os.environ if env is None else env
    project = env.get("CLAUDE_PROJECT_DIR")
    if project:
        return Path(project).resolve()
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def find_plans_dir(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None,
                   env: Mapping[str, str] | None = None) -> Path:
    """The plans directory: ``explicit`` (``--plans-dir``), ``MAKER_PLANS_DIR``, or
    ``plans/`` at the project root (see ``find_project_root``). Always absolute."""
    env = os.environ if env is None else env
    chosen = explicit or env.get("MAKER_PLANS_DIR")
    base = cwd or Path.cwd()
    if chosen:
        path = Path(chosen)
        return (path if path.is_absolute() else base / path).resolve()
    return find_project_root(cwd, env) / "plans"
