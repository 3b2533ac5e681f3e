"""maker's box as it runs: a copy of its files in maker's data dir, compiled there.

A step's writable places may hold maker's own source (maker working on itself), and a
box a step could rewrite would hold for one call only: so the box that runs is a copy,
by content, in maker's data dir (read-only in every box), with its Python compiled
beside it for the interpreter that runs it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from maker.core.paths import data_dir

__all__ = ["BOX", "box_stamp", "installed_box"]

BOX = Path(__file__).with_name("maker-box")
_PARTS = ("box_setup", "box_after", "box_walk", "box_sites")
_BOX_FILES = (BOX, *(BOX.with_name(f"{n}.py") for n in _PARTS))


@functools.lru_cache(maxsize=1)
def box_stamp() -> str:
    """What the cached probe was made with: the box's files, by content, and the Python
    that compiles them for it (read once a process: every boxed call asks, through the
    probe's cache, the wrap and the unwrap)."""
    digest = hashlib.sha256(sys.version.encode())
    for part in _BOX_FILES:
        try:
            digest.update(part.read_bytes())
        except OSError:
            return ""
    return digest.hexdigest()


def installed_box() -> Path:
    """The ``maker-box`` that runs: a copy of maker's box files in maker's data dir,
    by content (read-only to every step: its writable places may hold maker's own source,
    and a box a step could rewrite would hold for one call only); the source itself
    when no copy can be made."""
    stamp = box_stamp()
    if not stamp:
        return BOX
    home = data_dir() / f"box-{stamp[:16]}"
    box = home / BOX.name
    if all((home / part.name).is_file() for part in _BOX_FILES):
        return box
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".box-", dir=home.parent))
        for part in _BOX_FILES:
            shutil.copy2(part, scratch / part.name)
        _compiled(scratch)
        os.replace(scratch, home)
    except OSError:
        return box if box.is_file() else BOX  # (another process made it meanwhile)
    return box


def _compiled(folder: Path) -> None:
    """The box's Python compiled beside it (``maker-box`` runs ``box_setup.pyc``, which
    reads ``box_after.pyc``): every boxed call would otherwise compile them anew, about
    a quarter of what the box costs it. The copy's name holds this Python's version."""
    import py_compile  # (once a box is installed)

    for name in _PARTS:
        try:
            py_compile.compile(str(folder / f"{name}.py"), cfile=str(folder / f"{name}.pyc"),
                               doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        except py_compile.PyCompileError as exc:
            raise OSError(f"{name}.py does not compile: {exc.msg}") from exc
