"""The files that make code run later, outside any box: what a step's file tools may not
write unless the plan's step names it in its ``writes``.

The box (``maker.tools.box.box_spec``) keeps a step's Bash off maker's own files, the plan and
the project's git config in the kernel; the file tools (Write, Edit, NotebookEdit) run in
the client, outside it. What they write here would run later, with no box around it:

- the client's own settings, agents, commands, hooks and workflows (``.claude/`` at any
  depth, the person's ``~/.claude/`` and ``~/.claude.json``) and MCP servers
  (``.mcp.json``, existing or not): the next session runs them;
- git's config and hooks in any repository (a nested one's ``.git/``, a ``.git`` file
  that makes a folder a worktree of another, ``.gitmodules``, a ``HEAD`` that makes a
  folder a bare repository): the person's git, and maker's, run what they name;
- what tools run on their own when a person works in the folder: ``.envrc`` (direnv),
  ``.pre-commit-config.yaml``, ``lefthook*``, ``.husky/``, ``.githooks/``, ``.vscode/``
  (tasks, settings), ``.idea/``, ``.devcontainer*``, package managers' rc files, a ``.pth``
  file or ``sitecustomize.py`` in ``site-packages`` (Python runs it at every start),
  ``.pdbrc``;
- maker's own program, wherever the plugin lies.

The box holds the same list for a step's Bash (:func:`at_the_top`): what lies at the top
of the step's folder is read-only, and what a command makes there is removed when it ends.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

__all__ = ["anywhere", "at_the_top", "hooks_folder", "named_places", "runs_later"]

_DIRS = {".claude": "the client's settings, agents, commands and hooks",
         ".git": "git's config and hooks", ".husky": "git hooks (husky)",
         ".githooks": "git hooks", ".vscode": "the editor's tasks and settings",
         ".devcontainer": "a dev container's commands",
         ".idea": "the editor's run configurations", ".zed": "the editor's tasks and settings",
         ".cargo": "cargo's settings (a compiler wrapper it runs)"}
_FILES = {".mcp.json": "MCP servers the next session starts",
          ".claude.json": "the client's settings",
          ".git": "a link that makes a folder a repository of its own",
          ".gitmodules": "submodules git fetches and enters",
          "head": "a file that makes its folder a bare repository, whose config git runs",
          ".pdbrc": "commands Python's debugger runs when started in the folder",
          ".envrc": "a script direnv runs on entering the folder",
          ".pre-commit-config.yaml": "hooks pre-commit installs and runs",
          ".pre-commit-config.yml": "hooks pre-commit installs and runs",
          ".devcontainer.json": "a dev container's commands",
          ".npmrc": "npm's settings (scripts, registries)", ".yarnrc": "yarn's settings",
          ".yarnrc.yml": "yarn's settings (plugins it runs)", "bunfig.toml": "bun's settings",
          "pip.conf": "pip's settings", "pip.ini": "pip's settings",
          ".exrc": "commands vim runs when started in the folder",
          ".nvimrc": "commands Neovim runs when started in the folder",
          ".nvim.lua": "commands Neovim runs when started in the folder",
          "rust-toolchain": "the Rust toolchain rustup runs in the folder (its path)",
          "rust-toolchain.toml": "the Rust toolchain rustup runs in the folder (its path)",
          ".dir-locals.el": "code Emacs evaluates in the folder",
          ".dir-locals-2.el": "code Emacs evaluates in the folder"}
# (the file tools' only: a box's commands make them, a venv's, a cache's, where they must)
_MARKERS = {"pyvenv.cfg": "a mark that makes maker's box pass the folder by (a venv's)",
            "cachedir.tag": "a mark that makes maker's box pass the folder by (a cache's)"}
# (names and folders, any case: a file system that ignores case reads `.Claude` as `.claude`)
_PATTERNS = {**{f"lefthook*.{k}": "git hooks (lefthook)" for k in ("yml", "yaml", "json",
                                                                      "jsonc", "toml")},
             ".lefthook*": "git hooks (lefthook)", ".pnpmfile.*": "code pnpm runs at install",
             "mise.*toml": "mise's settings (the hooks it runs on entering the folder)",
             ".mise*": "mise's settings (the hooks it runs on entering the folder)",
             "*.pyc": "compiled Python, which python runs in place of its source"}
_SITE = ("site-packages", "dist-packages")  # (where Python runs a `.pth` file at start)
_STARTUP = ("sitecustomize.py", "usercustomize.py")  # (imported at start from there too)
_HOME = {".gitconfig": "the person's git config", ".bashrc": "the person's shell start-up",
         ".bash_profile": "the person's shell start-up", ".profile": "the person's shell "
         "start-up", ".zshrc": "the person's shell start-up", ".zprofile": "the person's "
         "shell start-up", ".zshenv": "the person's shell start-up",
         ".config": "the person's tools' settings", ".ssh": "the person's ssh settings",
         ".local": "the person's programs (~/.local/bin is on their PATH; maker's own "
                   "terminal command is there)", "bin": "the person's programs (on their "
                                                       "PATH)"}


def at_the_top(folder: Path, writes: Sequence[str] | None = None) -> tuple[str, ...]:
    """The names (``fnmatch`` patterns, lower case) that run code later when they lie at
    the top of ``folder``, the step's own (its ``writes`` may name some: those are not
    among them): what the box keeps read-only where they exist, and removes when a
    command made them. ``.git`` and ``.claude`` are the box's own (bound, or made)."""
    names = [n for n in (*_DIRS, *_FILES) if n not in (".git", ".claude")]
    firsts = [e.strip().removeprefix("./").split("/")[0].lower() for e in writes or ()]
    out = [n for n in names if n not in firsts]  # (named, or a file inside it named)
    out += [p for p in _PATTERNS if not any(fnmatch.fnmatchcase(f, p) for f in firsts if f)]
    return tuple(dict.fromkeys(out))


def anywhere(writes: Sequence[str] | None = None, nested: bool = False) -> tuple[str, ...]:
    """The names (lower case, ``*`` for any run of characters; ``name/`` a folder's) that
    run code later wherever they lie below the top of a step's folder: what the box holds
    there (``box_walk``). ``nested``: the main agent's box, where a nested repository is
    the person's to make (``.git``, ``HEAD`` left out)."""
    names = [*(f"{d}/" for d in _DIRS), *_FILES, *_PATTERNS, ".lefthook*/", ".mise*/"]
    if nested:
        names = [n for n in names if n not in (".git/", ".git", "head")]
    return tuple(dict.fromkeys(names))


def named_places(folder: Path, writes: Sequence[str] | None = None) -> list[str]:
    """The places the step's ``writes`` name by their own path, no wildcard in it (as
    written: a link there leads nowhere else), each below ``folder``: what lies in one is
    the step's to write, below the top of ``folder`` too (an entry with a wildcard names
    no file that runs code later there)."""
    places = []
    for entry in writes or ():
        rel = os.path.normpath(entry.strip()) if isinstance(entry, str) else "."
        if rel not in (".", "") and not rel.startswith(("..", "/")) and \
                not any(c in rel for c in "*?[\n"):
            places.append(os.path.join(folder, rel))
    return places


def hooks_folder(project: Path, home: Path | None = None) -> Path | None:
    """The folder ``core.hooksPath`` names for the project's repository (its own config,
    then the person's ``~/.gitconfig``), when it lies inside the project: git runs the
    hooks there on the person's next commit. Read as text (no git runs); None if none."""
    home = home if home is not None else Path(os.path.expanduser("~"))
    for config in (project / ".git" / "config", home / ".gitconfig"):
        try:
            text = config.read_text(errors="replace")[:1 << 20]
        except OSError:
            continue
        section = ""
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
            elif section == "core" and line.lower().replace(" ", "").startswith("hookspath="):
                value = line.split("=", 1)[1].strip().strip('"')
                folder = Path(os.path.expanduser(value))
                folder = Path(os.path.realpath(folder if folder.is_absolute()
                                               else project / folder))
                inside = _relative(folder, project)
                return folder if inside is not None and inside.parts else None
    return None


def runs_later(path: Path, project: Path, writes: Sequence[str] | None = None,
               home: Path | None = None, program: Path | None = None) -> str | None:
    """What ``path`` (resolved) is, when writing it makes code run later outside the box
    (a few words); None when it is not, or when the step's ``writes`` names it."""
    where = _relative(path, project)
    hooks = hooks_folder(Path(os.path.realpath(project)), home) if where is not None else None
    if hooks is not None and _relative(path, hooks) is not None and \
            not _named(where.parts if where else (), writes or ()):
        return "git hooks (the folder core.hooksPath names), which the person's git runs"
    home = home if home is not None else Path(os.path.expanduser("~"))
    inside_home = _relative(path, home)
    in_home = inside_home is not None and bool(inside_home.parts) and \
        inside_home.parts[0].lower() in _HOME  # (the person's start-up files, wherever
    #                                            the project lies: the home folder itself)
    if where is not None:
        what = _what(where.parts) or (_HOME[inside_home.parts[0].lower()]
                                      if in_home and inside_home else None)
        return None if what is None or _named(where.parts, writes or ()) else what
    if in_home and inside_home is not None:
        return _HOME[inside_home.parts[0].lower()]
    if program is not None and _relative(path, program) is not None and \
            _relative(program, project) is None:
        return "maker's own program (the plugin)"
    return _what(PurePosixPath(path).parts[1:])  # (elsewhere: every folder on the way)


def _relative(path: Path, root: Path) -> PurePosixPath | None:
    try:
        return PurePosixPath(path.relative_to(os.path.realpath(root)).as_posix())
    except ValueError:
        return None


def _protected(part: str, last: bool) -> str | None:
    """What one path segment makes the path (``last``: the file's own name)."""
    name = part.lower()
    if name in _DIRS and (not last or name != ".git"):
        return _DIRS[name]
    if last and (name in _FILES or name in _MARKERS):
        return _FILES.get(name) or _MARKERS[name]
    for pattern, what in _PATTERNS.items():
        if fnmatch.fnmatchcase(name, pattern):
            return what
    return None


def _what(parts: Sequence[str]) -> str | None:
    for i, part in enumerate(parts):
        what = _protected(part, i == len(parts) - 1)
        if what is not None:
            return what
    if parts and (parts[-1].lower().endswith(".pth") or parts[-1].lower() in _STARTUP) \
            and any(p.lower() in _SITE for p in parts[:-1]):
        return "code Python runs at every start"
    return None


def _named(parts: Sequence[str], writes: Sequence[str]) -> bool:
    """Whether a ``writes`` entry names this file itself (or a folder it is in), each
    segment that makes it protected written out as it is: no wildcard stands for one
    (``**`` and ``.git*`` name none of these)."""
    for entry in writes:
        segments = [s for s in entry.strip().removeprefix("./").split("/") if s]
        if not segments:
            continue
        if _matches(segments, list(parts)):
            return True
        if segments[-1] != "**" and any(_matches(segments, list(parts[:k]))
                                        for k in range(1, len(parts))):
            return True  # (a folder the file is in, named)
    return False


def _matches(entry: list[str], parts: list[str]) -> bool:
    """Whether ``entry``'s segments match the path's, all of them (``**``: any number of
    segments, none of them protected; a protected segment only by its own name)."""
    if not entry:
        return not parts
    head, rest = entry[0], entry[1:]
    if head == "**":
        return _matches(rest, parts) or (bool(parts) and _protected(parts[0], len(parts) == 1)
                                         is None and _matches(entry, parts[1:]))
    if not parts:
        return False
    if _protected(parts[0], len(parts) == 1) is not None:
        same = head == parts[0]
    else:
        same = fnmatch.fnmatchcase(parts[0], head)
    return same and _matches(rest, parts[1:])
