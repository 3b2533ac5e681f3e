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

__all__ = ["PROJECT_RECORD", "data_dir", "find_plans_dir", "find_project_root",
           "forget_step_tmp", "has_plan", "project_to_be", "project_of", "project_record",
           "seal_key_path", "step_tmp_dir", "worktree_plans"]

SEAL_KEY_FILE = "seal.key"


PROJECT_RECORD = os.path.join(".maker", "project")  # under the plans folder


def project_record(plans: Path, cwd: Path | None = None,
                   env: Mapping[str, str] | None = None) -> str | None:
    """What a new plan records of the project it is made for (``PROJECT_RECORD``): the
    project root that :func:`find_project_root` finds where the plan is made, as a path
    up from the plans folder (``../..``); None when that root is the plans folder's
    parent (the default layout) or the plans folder is not inside it."""
    root = find_project_root(cwd, env)
    here = plans.resolve()
    if root == here.parent or root not in here.parents:
        return None
    return os.path.relpath(root, here)


def project_of(plans: Path) -> Path:
    """The project a plans folder's plan is for, where its checks run and its steps
    work: the root recorded with the plan (:func:`project_record`), else the plans
    folder's parent. So ``plans/`` at a project's root (the default) gives that root, and
    a plan made at a project's root with ``MAKER_PLANS_DIR=docs/plans`` (seed 004's
    example, docs/architecture.md#the-seeds) that root, not ``docs/``. A record that is not
    a climb (``..`` only) is not maker's, and is ignored."""
    from maker.core.bounded import read_regular_file
    from maker.errors import InputError

    try:
        rel = read_regular_file(plans / PROJECT_RECORD, 4096).decode("utf-8").strip()
    except (OSError, InputError, UnicodeDecodeError):
        return plans.parent
    parts = rel.split("/")
    if not rel or len(parts) > 64 or any(part != ".." for part in parts):
        return plans.parent
    return Path(os.path.normpath(plans.resolve() / rel))


def project_to_be(plans: Path) -> Path:
    """The project a plan still to be made in ``plans`` will be for: the root
    :func:`project_record` will record (found from here), or the plans folder's parent.
    (``maker run "<task>"`` plans there, before any record exists.)"""
    root = find_project_root()
    return root if root in plans.resolve().parents else plans.parent


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
    plans = worktree_plans(here)
    if plans is not None:
        return project_of(plans)
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
        # (a relative MAKER_PLANS_DIR is the project's: under Claude Code, from its root,
        # whatever folder a call runs in; --plans-dir is the caller's, from its cwd)
        project = env.get("CLAUDE_PROJECT_DIR") if not explicit else None
        anchor = Path(project) if project and os.path.isdir(project) else base
        return (path if path.is_absolute() else anchor / path).resolve()
    plans = worktree_plans(base.resolve()) if not env.get("CLAUDE_PROJECT_DIR") else None
    return plans or find_project_root(cwd, env) / "plans"


def worktree_plans(here: Path) -> Path | None:
    """The plans folder whose step worktree holds ``here``
    (``<plans>/.maker/worktrees/<step>/…``: a step run beside others works there, and
    its maker commands find the plan it belongs to), else None."""
    for candidate in (here, *here.parents):
        if candidate.parent.name == "worktrees" and candidate.parent.parent.name == ".maker":
            plans = candidate.parent.parent.parent
            return plans if (plans / "steps").is_dir() else None
    return None


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


def step_tmp_dir(plans_root: Path, step: int, key: str = "") -> Path:
    """Where step ``step`` of the plan in ``plans_root`` keeps its box's own ``/tmp``: in
    a folder of the person's alone (``maker.tools.box.boundary.step_tmp`` makes both);
    ``key``: one of the step's workspaces (a sample of a vote on its code), its own."""
    import hashlib

    name = hashlib.sha256(os.fsencode(os.path.realpath(plans_root))).hexdigest()[:16]
    return Path("/tmp") / f"maker-{os.getuid()}" / f"{name}-step-{step}{'-' + key if key else ''}"


def forget_step_tmp(plans_root: Path, step: int) -> None:
    """The step's own ``/tmp`` removed, once the step is no longer worked on (its next
    attempt gets a fresh one); nothing when there is none (a link is not followed)."""
    import shutil

    own = step_tmp_dir(plans_root, step)
    shutil.rmtree(own, ignore_errors=True)
    for keyed in own.parent.glob(f"{own.name}-*"):  # (its workspaces')
        if keyed.is_dir() and not keyed.is_symlink():
            shutil.rmtree(keyed, ignore_errors=True)

