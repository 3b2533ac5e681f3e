"""No two modules of ``src/maker`` import each other, however far round: the module graph
has no cycle, inside a package as well as across packages (``test_architecture.py``
holds the packages to their layers; it cannot see a cycle inside one).

Every import counts, at the top of a module or inside a function (a lazy import is
still a dependency, only a later one), except one under ``if TYPE_CHECKING:``, which
never runs. Importing ``maker.x.y`` also runs the package ``maker.x``'s ``__init__``:
that is an edge too, unless the importer is inside ``maker.x`` (its own package is
already being imported).

``.venv/bin/pytest tests/unit/test_module_cycles.py`` proves it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import maker

from .test_architecture import Import, _package, cycle

SRC = Path(maker.__file__).resolve().parent


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports of ``tree`` that can run: all but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:
                yield from _runtime_imports(other)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _runtime_imports(node)


def module_imports(root: Path) -> Iterator[Import]:
    """Every import between two modules of the package at ``root`` (``…/maker``), with
    the package ``__init__`` each one runs on the way."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for source, path in modules.items():
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                # `from maker.x import y`: y is a module of its own, or a name in maker.x
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                         for a in node.names]
            for name in names:
                parts = name.split(".")
                reached = [".".join(parts[:i]) for i in range(2, len(parts) + 1)]
                for target in reached:
                    if target not in modules or target == source \
                            or source.startswith(target + "."):
                        continue
                    where = f"{path.relative_to(root.parent)}:{node.lineno}"
                    yield Import(where, source, target, name)


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
    root = _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from maker.pkg import b\n",
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
def test_a_type_checking_import_never_runs_and_is_no_cycle(tmp_path: Path, guarded: str) -> None:
    root = _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from maker.pkg import b\n",
                               "pkg/b.py": guarded})
    assert cycle(list(module_imports(root))) == []


def test_a_package_init_that_imports_back_is_a_cycle(tmp_path: Path) -> None:
    root = _package(tmp_path, {"pkg/__init__.py": "from maker.other.c import x\n",
                               "pkg/a.py": "", "other/__init__.py": "",
                               "other/c.py": "from maker.pkg.a import y\n"})
    found = cycle(list(module_imports(root)))
    assert {(i.source, i.target) for i in found} == {("maker.pkg", "maker.other.c"),
                                                     ("maker.other.c", "maker.pkg")}
    # A module's own package is no edge: maker.pkg.a is imported as part of maker.pkg.
    inner = _package(tmp_path / "inner", {"pkg/__init__.py": "from maker.pkg.a import x\n",
                                          "pkg/a.py": "from maker.pkg.b import y\n",
                                          "pkg/b.py": ""})
    assert cycle(list(module_imports(inner))) == []


def test_no_module_forwards_a_name_it_imports() -> None:
    """A module's ``__all__`` lists what it defines: a name imported from another maker
    module and listed again would have two import paths (a package's ``__init__``, its
    one public face, is the exception)."""
    forwarded = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "__init__.py":
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
