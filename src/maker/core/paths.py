"""Where the plans live: ``plans/`` at the project root, unless told otherwise.

Claude Code tells hooks the project (``CLAUDE_PROJECT_DIR``) but not the Bash tool
or a command's ``!`…``` lines, which run in the session's directory. Both must find
the same ``plans/``: so without that variable, the nearest enclosing directory that
already holds a maker plan wins (up to the git root), then the git root, then the
current directory.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["PROJECT_MARKERS", "data_dir", "find_plans_dir", "find_project_root", "has_plan",
           "project_of", "seal_key_path"]

SEAL_KEY_FILE = "seal.key"


# What makes a folder a project's root: its checks live there (maker.verify.detect).
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "package.json",
                   "Cargo.toml", "go.mod", "Makefile", "pytest.ini", "tox.ini")


def project_of(plans: Path, env: Mapping[str, str] | None = None) -> Path:
    """The project a plans folder belongs to, where its checks run and its steps work:
    the plans folder's parent when it looks like a project's root (one of
    :data:`PROJECT_MARKERS`); else the nearest folder above that does, which is at the
    latest the repository's root (``.git``), and never above ``CLAUDE_PROJECT_DIR``
    (the project then, when the plans folder is in it); else the parent. So ``plans/``
    at a project's root (the default) gives that root, and ``MAKER_PLANS_DIR=docs/plans``
    (seed 004's example) the project above ``docs/``."""
    env = os.environ if env is None else env
    plans = Path(os.path.abspath(plans))
    parent = plans.parent
    if any((parent / marker).exists() for marker in PROJECT_MARKERS):
        return parent
    ceiling = Path(os.path.abspath(env["CLAUDE_PROJECT_DIR"])) \
        if env.get("CLAUDE_PROJECT_DIR") else None
    if ceiling == parent:
        return parent
    if ceiling is not None and ceiling not in parent.parents:
        ceiling = None  # the plans folder is not in the client's project
    for candidate in parent.parents:  # (never out of the repository, nor the client's project)
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
        if candidate == ceiling:
            return ceiling
    return parent


def has_plan(plans: Path) -> bool:
    """Whether ``plans`` holds a maker plan (or its state)."""
    return any((plans / part).exists() for part in ("PLAN.md", "steps", ".maker"))


def find_project_root(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """``CLAUDE_PROJECT_DIR``; else the nearest directory up to the git root whose
    ``plans/`` holds a plan; else the enclosing git root; else the current directory."""
    env = os.environ if env is None else env
    project = env.get("CLAUDE_PROJECT_DIR")
    if project:
        return Path(project).resolve()
    here = (cwd or Path.cwd()).resolve()
    git_root: Path | None = None
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            git_root = candidate
            break
    for candidate in (here, *here.parents):
        if has_plan(candidate / "plans"):
            return candidate
        if candidate == git_root or git_root is None:
            break
    return git_root or here


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


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The plugin's persistent data dir (``CLAUDE_PLUGIN_DATA``, else ~/.local/share/maker)."""
    env = os.environ if env is None else env
    if env.get("CLAUDE_PLUGIN_DATA"):
        return Path(env["CLAUDE_PLUGIN_DATA"])
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(base) / "maker"


def seal_key_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the sealing key is kept: ``data_dir`` without ``CLAUDE_PLUGIN_DATA``, then
    ``seal.key`` (the same for hooks and for the Bash tool, see ``maker.store.seal``)."""
    env = os.environ if env is None else env
    return _seal_key_path(env.get("XDG_DATA_HOME"), env.get("HOME"))


@functools.lru_cache(maxsize=8)
def _seal_key_path(xdg: str | None, home: str | None) -> Path:
    found = {k: v for k, v in (("XDG_DATA_HOME", xdg), ("HOME", home)) if v is not None}
    return data_dir(found) / SEAL_KEY_FILE
