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
import re
from pathlib import Path

import pytest

import maker
import maker.executor
import maker.tools
from harness.import_graph import (
    Import,
    cycle,
    drawing,
    imports,
    layer_problems,
    make_package,
    module_imports,
    nodes,
)

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


# -- inside executor: the protocol's phases -------------------------------------------

# Top to bottom, as ``maker/executor/__init__.py`` lists them: each sub-package imports
# only from those below it (a peer in the same row is no dependency either way).
EXECUTOR_LAYERS: tuple[tuple[str, ...], ...] = (
    ("loop",),
    ("verdicts",),
    ("launch", "parallel"),
    ("votes",),
    ("acceptance",),
    ("protocol",),
    ("state",),
    ("rules",),
)


# The paths the seeds write (``from maker.executor.agent_runner import AgentRunner``) are
# public: where the code moved into a sub-package, the seed's path stays as an alias
# module that only re-exports (STYLE.md: a public import path is an API).
SEED_ALIASES: dict[str, str] = {
    "maker.executor.agent_runner": "maker.executor.launch.agent_runner",
    "maker.executor.context_builder": "maker.executor.launch.context_builder",
}


def test_a_seed_alias_only_re_exports() -> None:
    for alias, home in SEED_ALIASES.items():
        path = SRC.joinpath(*alias.split(".")[1:]).with_suffix(".py")
        tree = ast.parse(path.read_text())
        body = [node for node in tree.body
                if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
        kinds = {type(node).__name__ for node in body}
        sources = {node.module for node in body if isinstance(node, ast.ImportFrom)}
        assert kinds <= {"ImportFrom", "Assign"} and sources == {home}, (
            f"{path} is the seeds' public path: it re-exports {home} and holds no code")


def subpackage_imports(package: str, skip: tuple[str, ...] = ()) -> list[Import]:
    """Each import between two of ``maker.<package>``'s sub-packages (every import
    counted; from a module in ``skip``, none)."""
    def sub(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[:2] == ["maker", package] else None

    found = []
    for imp in module_imports(SRC):
        if imp.source in skip:
            continue
        source, target = sub(imp.source), sub(imp.target)
        if source and target and source != target:
            found.append(Import(imp.where, source, target, imp.name))
    return found


def executor_imports() -> list[Import]:
    """Each import between two of executor's sub-packages (a seed alias re-exports its
    home: ``test_a_seed_alias_only_re_exports``)."""
    return subpackage_imports("executor", tuple(SEED_ALIASES))


def test_executor_is_its_subpackages_in_layers() -> None:
    top = sorted(p.name for p in (SRC / "executor").glob("*.py")
                 if p.stem != "__init__" and f"maker.executor.{p.stem}" not in SEED_ALIASES)
    assert not top, f"every module of executor/ belongs to a sub-package: {top}"
    declared = {name for layer in EXECUTOR_LAYERS for name in layer}
    aliases = {alias.rpartition(".")[2] for alias in SEED_ALIASES}
    missing = sorted(nodes(SRC / "executor") - declared - aliases)
    assert not missing, f"give {missing} a row in EXECUTOR_LAYERS ({__file__})"
    problems = layer_problems(executor_imports(), EXECUTOR_LAYERS)
    assert not problems, ("executor's sub-packages import against their order (move the "
                          "code down, or pass it in):\n" + "\n".join(problems))
    index = maker.executor.__doc__ or ""
    order = [name for layer in reversed(EXECUTOR_LAYERS) for name in layer]
    listed = sorted(order, key=lambda name: index.find(f"- ``{name}``"))
    assert all(f"- ``{name}``" in index for name in order) and listed == order, (
        f"maker/executor/__init__.py lists the sub-packages, bottom first, as {order}")


# -- inside tools: the command model, git, the box, the guards on top ----------------

# Top to bottom, as ``maker/tools/__init__.py`` lists them; ``registry`` (the seeds' path,
# a module of tools itself) lies below them all.
TOOLS_LAYERS: tuple[tuple[str, ...], ...] = (
    ("guards",),
    ("box", "git"),
    ("command",),
    ("registry",),
)


def test_tools_is_its_subpackages_in_layers() -> None:
    top = sorted(p.name for p in (SRC / "tools").glob("*.py")
                 if p.stem not in ("__init__", "registry"))
    assert not top, f"every module of tools/ belongs to a sub-package: {top}"
    declared = {name for layer in TOOLS_LAYERS for name in layer}
    missing = sorted(nodes(SRC / "tools") - declared)
    assert not missing, f"give {missing} a row in TOOLS_LAYERS ({__file__})"
    problems = layer_problems(subpackage_imports("tools"), TOOLS_LAYERS)
    assert not problems, ("tools' sub-packages import against their order (move the code "
                          "down, or pass it in):\n" + "\n".join(problems))
    index = maker.tools.__doc__ or ""
    order = [name for layer in TOOLS_LAYERS[:-1] for name in layer]
    assert all(f"- ``{name}``" in index for name in order), (
        f"maker/tools/__init__.py lists the sub-packages: {order}")


# -- the module map ------------------------------------------------------------------


def map_rows(text: str) -> dict[str, str]:
    """The module map's rows: package path (``executor/state``) to its cell of modules."""
    section = text.partition("## Module map")[2].partition("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def unmapped(root: Path, rows: dict[str, str]) -> list[str]:
    """Each module under ``root`` (``…/maker``) the map leaves out: its package has no
    row, or the row does not name it in backticks."""
    missing = []
    for path in sorted(root.rglob("*.py")):
        if path.stem == "__init__":
            continue
        package = "/".join(path.parent.relative_to(root).parts) or "maker"
        if f"`{path.stem}`" not in rows.get(package, ""):
            missing.append(str(path.relative_to(root.parent)))
    return missing


def test_the_module_map_names_every_module() -> None:
    missing = unmapped(SRC, map_rows(DOC.read_text(encoding="utf-8")))
    assert not missing, (f"{DOC.name}'s module map leaves out (give each a few words in its "
                         "package's row):\n" + "\n".join(missing))


def test_the_map_check_sees_a_module_left_out(tmp_path: Path) -> None:
    root = make_package(tmp_path, {"errors.py": "", "a/__init__.py": "", "a/one.py": "",
                                   "a/b/__init__.py": "", "a/b/two.py": ""})
    text = ("## Module map\n\n| package | modules |\n| --- | --- |\n"
            "| `maker` | `errors` |\n| `a` | `one` (the first) |\n| `a/b` | `three` |\n\n"
            "## Next\n| `a/b` | `two` |\n")
    assert unmapped(root, map_rows(text)) == ["maker/a/b/two.py"]


# -- the checker, on a package made for it --------------------------------------------


@pytest.mark.parametrize("how", [
    "from maker.high.top import thing\n",
    "import maker.high.top\n",
    "def later():\n    from maker.high import top\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from maker.high.top import T\n",
    "from ..high import top\n",
])
def test_a_back_edge_is_named_by_file_and_line(tmp_path: Path, how: str) -> None:
    root = make_package(tmp_path, {"low/__init__.py": "", "low/base.py": "import os\n" + how,
                               "high/__init__.py": "",
                               "high/top.py": "from maker.low import base\n"})
    found = list(imports(root))
    layers = (("high",), ("low",))
    problems = layer_problems(found, layers)
    assert len(problems) == 1 and problems[0].startswith("maker/low/base.py:")
    assert " low imports high " in problems[0] and "above it" in problems[0]
    assert {(i.source, i.target) for i in cycle(found)} == {("low", "high"), ("high", "low")}


def test_peers_do_not_import_each_other(tmp_path: Path) -> None:
    root = make_package(tmp_path, {"a/__init__.py": "from maker import b\n", "b/__init__.py": ""})
    problems = layer_problems(list(imports(root)), (("a", "b"),))
    assert problems == ["maker/a/__init__.py:1: a imports b (maker.b): b is a peer in its layer"]
    assert nodes(root) == {"a", "b"}


# -- what the code says of itself ------------------------------------------------------

ISSUE = re.compile(r"\bissues? #?\d+", re.I)


def test_code_and_docs_say_what_it_does_not_which_issue_brought_it() -> None:
    """Docstrings and docs describe the code; the tracker's numbers mean nothing to a reader
    of a clone (``git log`` keeps the history)."""
    top = SRC.parents[1]
    places = [*SRC.rglob("*.py"), *(top / "dev").rglob("*.py"), *(top / "docs").glob("*.md"),
              top / "README.md", *(top / "commands").glob("*.md"), *(top / "agents").glob("*.md"),
              *(top / "tests").rglob("*.py"), *(top / "benchmarks").rglob("*.py")]
    named = [f"{path.relative_to(top)}:{n}: {line.strip()[:80]}" for path in places
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if ISSUE.search(line)]
    assert not named, "say what the code does, not which issue brought it:\n" + "\n".join(named)


def test_the_readme_stays_a_first_read() -> None:
    """At most 250 lines: what maker is, the set-up, the first commands; the rest is in
    docs/, linked from it."""
    readme = SRC.parents[1] / "README.md"
    lines = readme.read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move the detail into docs/ and link it"


SEED = re.compile(r"\bseeds? 00\d\b", re.I)
SEEDS_PAGE = "docs/architecture.md#the-seeds"


def _code_and_docs() -> list[Path]:
    top = SRC.parents[1]
    return [*SRC.rglob("*.py"), *(top / "dev").rglob("*.py"), *(top / "tests").rglob("*.py"),
            *(top / "benchmarks").rglob("*.py"), *(top / "docs").glob("*.md"),
            top / "README.md", *(top / "commands").glob("*.md"), *(top / "agents").glob("*.md")]


def test_code_and_docs_cite_no_design_brief_outside_the_repository() -> None:
    """DESIGN.md is not in the repository: a fact it held is cited where it lives here (a
    page of docs/, or the test that pins the client's behaviour)."""
    top = SRC.parents[1]
    named = [f"{path.relative_to(top)}:{n}" for path in _code_and_docs()
             if path != Path(__file__).resolve()  # (this test names it)
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "DESIGN.md" in line]
    assert not named, "cite the doc or test that says it here instead:\n" + "\n".join(named)


def test_a_file_that_cites_a_seed_says_where_the_seeds_are_described() -> None:
    """The seeds are not in the repository: a file that cites one ("seed 004") points, once,
    to the table that says what each specified and where it lives in maker."""
    section = DOC.read_text(encoding="utf-8").partition("\n## The seeds\n")[2]
    described = re.findall(r"^\| (\d{3}) ", section.partition("\n## ")[0], re.M)
    assert described == ["000", "001", "002", "003", "004"], (
        f"{DOC.name} has a section '## The seeds' with a row per seed")
    top = SRC.parents[1]
    unpointed = [str(path.relative_to(top)) for path in _code_and_docs()
                 if path.suffix == ".py" and SEED.search(text := path.read_text(encoding="utf-8"))
                 and SEEDS_PAGE not in text]
    assert not unpointed, (f"these cite a seed: name {SEEDS_PAGE} once in each, where it "
                           "first cites one:\n" + "\n".join(unpointed))
