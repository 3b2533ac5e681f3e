"""No two modules of ``src/maker`` import each other, however far round: the module graph
has no cycle, inside a package as well as across packages (``test_architecture.py``
holds the packages to their layers; it cannot see a cycle inside one).

Every import counts: at the top of a module, inside a function (a lazy import is still a
dependency, only a later one) and under ``if TYPE_CHECKING:`` (it never runs, but the
module's interface is written in the other module's types: two modules that name each
other's types cannot be read or moved apart). Importing ``maker.x.y`` also runs the
package ``maker.x``'s ``__init__``: that is an edge too, unless the importer is inside
``maker.x`` (its own package is already being imported).

``.venv/bin/pytest tests/unit/test_module_cycles.py`` proves it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import maker
from harness.import_graph import cycle, make_package, module_imports

SRC = Path(maker.__file__).resolve().parent


def test_no_two_modules_of_maker_import_each_other() -> None:
    found = cycle(list(module_imports(SRC)))
    assert not found, ("modules of src/maker import each other in a cycle (move what both "
                       "need to a module below them, or pass it in):\n"
                       + "\n".join(map(str, found)))


# -- the checker, on a package made for it --------------------------------------------


@pytest.mark.parametrize("back", [
    "from maker.pkg.a import thing\n",
    "import maker.pkg.a\n",
    "def later():\n    from maker.pkg import a\n",
    "from . import a\n",
    "class K:\n    def m(self):\n        from .a import thing\n",
])
def test_a_cycle_inside_a_package_is_named_by_file_and_line(tmp_path: Path, back: str) -> None:
    root = make_package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from maker.pkg import b\n",
                               "pkg/b.py": "import os\n" + back})
    found = cycle(list(module_imports(root)))
    assert {(i.source, i.target) for i in found} == {("maker.pkg.a", "maker.pkg.b"),
                                                     ("maker.pkg.b", "maker.pkg.a")}
    assert any(str(i).startswith("maker/pkg/b.py:") for i in found)


@pytest.mark.parametrize("guarded", [
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from maker.pkg.a import T\n",
    "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from maker.pkg import a\n",
    "import typing\nif typing.TYPE_CHECKING:\n    import maker.pkg.a\n",
])
def test_a_type_checking_import_counts(tmp_path: Path, guarded: str) -> None:
    root = make_package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from maker.pkg import b\n",
                               "pkg/b.py": guarded})
    found = cycle(list(module_imports(root)))
    assert {(i.source, i.target) for i in found} == {("maker.pkg.a", "maker.pkg.b"),
                                                     ("maker.pkg.b", "maker.pkg.a")}


def test_a_package_init_that_imports_back_is_a_cycle(tmp_path: Path) -> None:
    root = make_package(tmp_path, {"pkg/__init__.py": "from maker.other.c import x\n",
                               "pkg/a.py": "", "other/__init__.py": "",
                               "other/c.py": "from maker.pkg.a import y\n"})
    found = cycle(list(module_imports(root)))
    assert {(i.source, i.target) for i in found} == {("maker.pkg", "maker.other.c"),
                                                     ("maker.other.c", "maker.pkg")}
    # A module's own package is no edge: maker.pkg.a is imported as part of maker.pkg.
    inner = make_package(tmp_path / "inner", {"pkg/__init__.py": "from maker.pkg.a import x\n",
                                          "pkg/a.py": "from maker.pkg.b import y\n",
                                          "pkg/b.py": ""})
    assert cycle(list(module_imports(inner))) == []


def test_no_module_forwards_a_name_it_imports() -> None:
    """A module's ``__all__`` lists what it defines: a name imported from another maker
    module and listed again would have two import paths (a package's ``__init__``, its
    one public face, is the exception, and so is a path the seeds name, kept as an
    alias that only re-exports: ``test_architecture.SEED_ALIASES``)."""
    forwarded = []
    aliases = {f"maker/executor/{name}.py" for name in ("agent_runner", "context_builder")}
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "__init__.py" or str(path.relative_to(SRC.parent)) in aliases:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.asname or alias.name for node in tree.body
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "maker") for alias in node.names}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", "") == "__all__" for t in node.targets):
                names = [e.value for e in getattr(node.value, "elts", [])
                         if isinstance(e, ast.Constant)]
                forwarded += [f"{path.relative_to(SRC.parent)}: {n}" for n in names
                              if n in imported]
    assert not forwarded, "import these from where they are defined:\n" + "\n".join(forwarded)
