"""The main agent's Bash in its own box while a plan exists.

A step's files are the work of a model maker does not trust until a person approves
them, and some of them run when the main agent runs the project's commands: a
``conftest.py`` under ``pytest``, a build script under ``make``, a test under ``npm
test``. Unboxed, they would run with the person's rights: rewrite ``plans/``, read the
sealing key, plant what runs later. So any agent that is not maker's (the main one
included) runs each command but maker's own in a box of its own rules:

- held as a step's box holds them: ``plans/`` and maker's data read-only, the sealing
  key hidden, maker's own program, the repository's config and hooks, the client's
  settings and the files at the project's top that run code later read-only (removed
  when the command made them), the home folder read-only but for build caches;
- shared, unlike a step's: the machine's ``/tmp`` and network, and the ssh-agent (a
  ``git push``); the project stays writable, and its ``.git`` for a command that runs
  git alone (``git commit`` works) where git finds no repository of a step's to enter;
  for any other it is read-only, so a ``conftest.py`` under ``pytest`` makes no
  ``commondir`` that a git of the person's would read meanwhile.

A read-only command runs there too (what ``git status`` runs is what git's config, or a
``.git`` a step left in a folder, names); maker's own plumbing runs as before, unboxed. A
path the box cannot name (a line break in it) refuses the command rather than unbox it.
A person turns this off with ``main_boundary: off`` in ``plans/settings.yaml``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from maker.core.paths import project_of
from maker.tools.box import boundary
from maker.tools.box.boundary import unwrap_at, wrap, write_spec
from maker.tools.box.box_spec import SPEC_DIR, Spec, spec_for
from maker.tools.box.main_git import gits_alone

__all__ = ["MAIN_GIT_SPEC", "MAIN_SPEC", "main_boxed", "main_unwrap"]

MAIN_SPEC = "main.spec"  # under plans/.maker/box/, beside each step's
MAIN_GIT_SPEC = "main-git.spec"  # a command that is git's alone: the project's .git writable
NOTE = ("the command ran in maker's box for the main agent, where plans/, maker's data, "
        "git's config and hooks (and its whole folder, but for a command that is git's alone "
        "in the project and no repository of its own in it), the client's settings and the home "
        "folder (but its caches) are read-only and a process started before it cannot be "
        "seen; if that is why it failed, run it in a terminal yourself, or set "
        "main_boundary: off in plans/settings.yaml")


def _spec_path(plans_root: Path, git: bool = False) -> Path:
    return plans_root / ".maker" / SPEC_DIR / (MAIN_GIT_SPEC if git else MAIN_SPEC)


def main_boxed(plans_root: Path, command: str, *, nested: Callable[[Path], bool],
               setting: str = "auto", cwd: Path | None = None
               ) -> tuple[str | None, str | None]:
    """``(refusal, command wrapped in the main agent's box)`` for the plan in
    ``plans_root``; ``(None, None)`` where the person's ``setting`` is ``off`` or the
    machine can make no box (as without maker); refused where a path the box must
    protect cannot be written into its spec (a line break in its name: a step could make
    one to turn the box off). ``nested(project)``: whether git finds a repository of
    its own in the project (``maker.tools.box.main_git``)."""
    if setting == "off" or not boundary.protection().kernel:  # (looked up at each call)
        return None, None
    git = gits_alone(command, Path(project_of(plans_root)), cwd, nested)  # (.git writable)
    spec = spec_for(plans_root, signs=True, commits=git, nested=True)
    broken = next((p for _, p in spec.entries if "\n" in p), None)
    if broken is not None:
        return (f"maker: {broken!r} holds a line break, so maker's box for the main agent "
                "cannot protect it, and no command runs unboxed while a plan exists. Remove "
                "or rename it (a step may have made it to turn the box off), or set "
                "main_boundary: off in plans/settings.yaml."), None
    spec = Spec((*spec.entries, ("note", NOTE)))
    path = _spec_path(plans_root, git)
    write_spec(path, spec)
    return None, wrap(command, path)


def main_unwrap(command: str, plans_root: Path) -> str | None:
    """The command inside ``command`` when it is exactly :func:`main_boxed`'s wrapper (a
    call the client asks the model to send again as a hook changed it); else None."""
    for git in (False, True):
        inner = unwrap_at(command, _spec_path(plans_root, git))
        if inner is not None:
            return inner
    return None
