"""The files that make code run later, outside any box: what a step's file tools may not
write unless the plan's step names it in its ``writes``.

The box (``maker.tools.box_spec``) keeps a step's Bash off maker's own files, the plan and
the project's git config in the kernel; the file tools (Write, Edit, NotebookEdit) run in
the client, outside it. What they write here would run later, with no box around it:

- the client's own settings, agents, commands, hooks and workflows (``.claude/`` at any
  depth, the person's ``~/.claude/`` and ``~/.claude.json``) and MCP servers
  (``.mcp.json``, existing or not): the next session runs them;
- git's config and hooks in any repository (a nested one's ``.git/``, a ``.git`` file
  that makes a folder a worktree of another, ``.gitmodules``): the person's git, and
  maker's, run what they name;
- what tools run on their own when a person works in the folder: ``.envrc`` (direnv),
  ``.pre-commit-config.yaml``, ``lefthook*``, ``.husky/``, ``.githooks/``, ``.vscode/``
  (tasks, settings), ``.devcontainer*``, package managers' rc files, a ``.pth`` file
  (Python runs it at every start);
- maker's own program, wherever the plugin lies.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

__all__ = ["runs_later"]

_DIRS = {".claude": "the client's settings, agents, commands and hooks",
         ".git": "git's config and hooks", ".husky": "git hooks (husky)",
         ".githooks": "git hooks", ".lefthook": "git hooks (lefthook)",
         ".vscode": "the editor's tasks and settings",
         ".devcontainer": "a dev container's commands"}
_FILES = {".mcp.json": "MCP servers the next session starts",
          ".claude.json": "the client's settings",
          ".git": "a link that makes a folder a repository of its own",
          ".gitmodules": "submodules git fetches and enters",
          ".envrc": "a script direnv runs on entering the folder",
          ".pre-commit-config.yaml": "hooks pre-commit installs and runs",
          ".devcontainer.json": "a dev container's commands",
          ".npmrc": "npm's settings (scripts, registries)", ".yarnrc": "yarn's settings",
          ".yarnrc.yml": "yarn's settings (plugins it runs)", "bunfig.toml": "bun's settings",
          ".pnpmfile.cjs": "code pnpm runs at install", "pip.conf": "pip's settings"}
_PATTERNS = {"lefthook*.yml": "git hooks (lefthook)", "lefthook*.yaml": "git hooks (lefthook)",
             ".lefthook*": "git hooks (lefthook)", "*.pth": "code Python runs at every start"}


def runs_later(path: Path, project: Path, writes: Sequence[str] | None = None,
               home: Path | None = None, program: Path | None = None) -> str | None:
    """What ``path`` (resolved) is, when writing it makes code run later outside the box
    (a few words); None when it is not, or when the step's ``writes`` names it."""
    where = _relative(path, project)
    if where is not None:
        what = _what(where)
        return None if what is None or _named(where, writes or ()) else what
    home = home if home is not None else Path(os.path.expanduser("~"))
    inside_home = _relative(path, home)
    if inside_home is not None and inside_home.parts[:1] in ((".claude",), (".claude.json",)):
        return "the person's own client settings"
    if program is not None and _relative(path, program) is not None and \
            _relative(program, project) is None:
        return "maker's own program (the plugin)"
    return _what(PurePosixPath(path.name))


def _relative(path: Path, root: Path) -> PurePosixPath | None:
    try:
        return PurePosixPath(path.relative_to(os.path.realpath(root)).as_posix())
    except ValueError:
        return None


def _what(where: PurePosixPath) -> str | None:
    parts = where.parts
    for part in parts[:-1]:
        if part in _DIRS:
            return _DIRS[part]
    name = parts[-1] if parts else ""
    if name in _FILES:
        return _FILES[name]
    if name in _DIRS:  # (the folder itself, as a file: as bad)
        return _DIRS[name]
    for pattern, what in _PATTERNS.items():
        if fnmatch.fnmatchcase(name, pattern):
            return what
    return None


def _named(where: PurePosixPath, writes: Sequence[str]) -> bool:
    """Whether a ``writes`` entry names this file itself (or a folder it is in), by the
    very name that makes it protected: ``**`` alone names nothing of these."""
    text = where.as_posix()
    for entry in writes:
        entry = entry.strip().removeprefix("./")
        folder = entry.rstrip("/")
        if not any(part in entry for part in (*_DIRS, *_FILES, "lefthook", ".pth")):
            continue
        if text == folder or text.startswith(folder + "/") or \
                fnmatch.fnmatchcase(text, entry):
            return True
    return False
