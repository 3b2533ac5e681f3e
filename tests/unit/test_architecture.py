"""maker's packages depend in one direction: down the layers drawn in ``maker/__init__.py``.

Every module under ``src/maker`` is parsed with ``ast`` and every import counts: at the
top, inside a function (a lazy import is still a dependency, only a later one), and
under ``if TYPE_CHECKING:``. A type-only import counts because the module's interface
is written in the other package's types: it cannot be read, checked (mypy follows it)
or moved without that package, and a cycle hidden behind ``TYPE_CHECKING`` is how
cycles start. A subpackage may import only subpackages of a lower layer; peers in one
layer do not import each other. The top-level modules count as nodes of their own
(``errors``, ``__main__``).

``.venv/bin/pytest tests/unit/test_architecture.py`` proves it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import maker

SRC = Path(maker.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

# Top to bottom. A new subpackage gets a layer here, and the drawing is regenerated
# from this table (see test_the_drawing_is_the_table).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("engine", "hooks"),
    ("executor",),
    ("handoff",),
    ("verify",),
    ("store",),
    ("planner",),
    ("tools", "red_flag"),
    ("core",),
    ("prompts", "voting", "yaml_cleaner"),
    ("errors",),
)


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


# -- the package -------------------------------------------------------------------


def test_every_node_has_a_layer() -> None:
    declared = {name for layer in LAYERS for name in layer}
    missing = sorted(nodes(SRC) - declared)
    assert not missing, (f"src/maker has {missing} but LAYERS in {__file__} does not: "
                         "give each a layer (what may it import? what imports it?)")


def test_the_package_graph_is_acyclic() -> None:
    found = cycle(list(imports(SRC)))
    assert not found, "the packages import each other in a cycle:\n" + "\n".join(
        map(str, found))


def test_every_import_points_down_the_layers() -> None:
    problems = layer_problems(list(imports(SRC)), LAYERS)
    assert not problems, ("imports against the layers of maker/__init__.py (move the code "
                          "to the lower package, or pass it in):\n" + "\n".join(problems))


def test_the_drawing_is_the_table() -> None:
    picture = drawing(LAYERS)
    assert picture in (maker.__doc__ or ""), (
        f"maker/__init__.py's docstring must show the layers as:\n{picture}")
    assert picture in DOC.read_text(encoding="utf-8"), (
        f"{DOC} must show the layers as:\n{picture}")


# -- the checker, on a package made for it --------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "maker"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("how", [
    "from maker.high.top import thing\n",
    "import maker.high.top\n",
    "def later():\n    from maker.high import top\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from maker.high.top import T\n",
    "from ..high import top\n",
])
def test_a_back_edge_is_named_by_file_and_line(tmp_path: Path, how: str) -> None:
    root = _package(tmp_path, {"low/__init__.py": "", "low/base.py": "import os\n" + how,
                               "high/__init__.py": "",
                               "high/top.py": "from maker.low import base\n"})
    found = list(imports(root))
    layers = (("high",), ("low",))
    problems = layer_problems(found, layers)
    assert len(problems) == 1 and problems[0].startswith("maker/low/base.py:")
    assert " low imports high " in problems[0] and "above it" in problems[0]
    assert {(i.source, i.target) for i in cycle(found)} == {("low", "high"), ("high", "low")}


def test_peers_do_not_import_each_other(tmp_path: Path) -> None:
    root = _package(tmp_path, {"a/__init__.py": "from maker import b\n", "b/__init__.py": ""})
    problems = layer_problems(list(imports(root)), (("a", "b"),))
    assert problems == ["maker/a/__init__.py:1: a imports b (maker.b): b is a peer in its layer"]
    assert nodes(root) == {"a", "b"}
