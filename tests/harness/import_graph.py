"""maker's import graph, read with ``ast``: the edges between packages (for the layers) and
between modules (for cycles), every import counted: at the top, inside a function, and under
``if TYPE_CHECKING:``. ``tests/unit/test_architecture.py`` and
``tests/unit/test_module_cycles.py`` hold ``src/maker`` to it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Import", "cycle", "drawing", "imports", "layer_problems", "make_package",
           "module_imports", "nodes"]


@dataclass(frozen=True)
class Import:
    where: str  # file:line, relative to src/
    source: str  # the importing node (subpackage or top-level module)
    target: str  # the imported node
    name: str  # the module as imported

    def __str__(self) -> str:
        return f"{self.where}: {self.source} imports {self.target} ({self.name})"


def _node(module: str) -> str | None:
    """The graph node of a ``maker.…`` module name: its subpackage, or None (``maker``)."""
    parts = module.split(".")
    if parts[0] != "maker" or len(parts) == 1:
        return None
    return parts[1]


def imports(root: Path) -> Iterator[Import]:
    """Every import between two nodes of the package at ``root`` (``…/maker``)."""
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[:-1]
        if parts[-1] == "__init__":
            parts = package
        source = _node(".".join(parts))
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[: len(package) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                # `from maker import errors` names a module; `from maker.x import y`, x.
                names = ([f"{base}.{alias.name}" for alias in node.names]
                         if _node(base) is None else [base])
            for name in names:
                target = _node(name)
                if target is not None and target != source:
                    where = f"{path.relative_to(root.parent)}:{node.lineno}"
                    yield Import(where, source, target, name)


def nodes(root: Path) -> set[str]:
    """The subpackages and top-level modules of the package at ``root``."""
    found = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    found |= {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    return found


def layer_problems(found: list[Import], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Each import that does not point to a lower layer, named by file:line."""
    rank = {name: len(layers) - i for i, layer in enumerate(layers) for name in layer}
    out = []
    for imp in found:
        if imp.source not in rank or imp.target not in rank:
            continue  # reported by test_every_node_has_a_layer
        if rank[imp.target] >= rank[imp.source]:
            how = "a peer in its layer" if rank[imp.target] == rank[imp.source] else "above it"
            out.append(f"{imp}: {imp.target} is {how}")
    return out


def cycle(found: list[Import]) -> list[Import]:
    """One cycle of the node graph, as the imports that make it; [] when acyclic."""
    edges: dict[str, dict[str, Import]] = {}
    for imp in found:
        edges.setdefault(imp.source, {}).setdefault(imp.target, imp)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[Import] = []

    def visit(node: str) -> list[Import]:
        state[node] = 1
        for target, imp in sorted(edges.get(node, {}).items()):
            path.append(imp)
            if state.get(target) == 1:
                start = next(i for i, p in enumerate(path) if p.source == target)
                return path[start:]
            if target not in state and (found_cycle := visit(target)):
                return found_cycle
            path.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state and (found_cycle := visit(node)):
            return found_cycle
    return []


def drawing(layers: tuple[tuple[str, ...], ...]) -> str:
    """The layers as drawn in the docs: top to bottom, each importing only below it."""
    width = max(len("   ".join(layer)) for layer in layers)
    rows = ["   ".join(layer).center(width).rstrip() for layer in layers]
    return f"\n{'│'.center(width).rstrip()}\n".join(rows)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _at_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported: not in a function, not under
    ``if TYPE_CHECKING:``."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _at_import(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _at_import([n for n in inner if isinstance(n, ast.AST)])


def _in_functions(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports written inside a function (each once, however deep)."""
    seen: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                    seen.add(id(node))
                    yield node


def _imports(tree: ast.AST, which: str) -> Iterator[ast.Import | ast.ImportFrom]:
    """``all``: every import (at the top, in a function, under ``TYPE_CHECKING``);
    ``import``: those that run when the module is imported; ``functions``: those inside
    a function."""
    if which == "import":
        yield from _at_import(getattr(tree, "body", []))
    elif which == "functions":
        yield from _in_functions(tree)
    else:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node


def module_imports(root: Path, which: str = "all") -> Iterator[Import]:
    """Every import between two modules of the package at ``root`` (``…/maker``), with
    the package ``__init__`` each one runs on the way (``which``: see :func:`_imports`)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for source, path in modules.items():
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree, which):
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


def make_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "maker"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
