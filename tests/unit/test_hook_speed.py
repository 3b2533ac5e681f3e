"""The Stop hook's lean path: it reads a step's status and title
without PyYAML or the plan model, and says the same as the full read."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.import_graph import make_package, module_imports
from harness.step_plans import linear, make_step, step_spec, write
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.__main__ import EVENTS
from maker.hooks.handlers import HANDLERS
from maker.store.state import PlanState
from maker.store.step_peek import peek_step
from maker_scripted.scenarios import handoff

ROOT = Path(__file__).resolve().parents[2]

TITLES = ["Write hello.txt", "Réparer l'accès (v2)", "Step: with a colon", "123 numbers first",
          "yes", "it's quoted", "'quoted' at the start", "a # hash", "ends with a colon:",
          "x" * 130, "- looks like a list", "[brackets]", "null", "~", "@at",
          "trailing space ", "Deploy to prod, then verify"]


@pytest.mark.parametrize("title", TITLES)
def test_the_peek_never_disagrees_with_the_full_read(tmp_path: Path, title: str) -> None:
    store = write(tmp_path, [make_step(0, 1, title=title), make_step(1, -1)])
    start_step(store, 0, force=True, session_id="s")
    for n in (0, 1):
        record = store.load_step(n)
        peeked = peek_step(record.path, n)
        assert peeked in (None, (record.status, record.title)), (title, peeked)
    # maker's usual titles are taken as written, without the full read.
    if title in ("Write hello.txt", "Deploy to prod, then verify", "it's quoted"):
        assert peek_step(store.step_path(0), 0) == ("in-progress", title)


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("status: in-progress", "status: 'in-progress'"),  # still valid YAML
    lambda t: t.replace("status: in-progress", "status: in-progres"),     # a typo
    lambda t: t.replace("title: Step number 1", "title: Step number 1\n  continued"),
    lambda t: t.replace("step: 1", "step: 2"),
    lambda t: t.replace("step: 1", "step: 1.0"),
    lambda t: t.replace("\n---\n", "\n", 1) if t.count("\n---\n") else t,
    lambda t: t.replace("## Task", "## Tasks"),
    lambda t: t.replace("title: Step", "title:  Step"),
    lambda t: t.replace("status:", "status :"),
])
def test_a_hand_edited_step_file_is_read_in_full(tmp_path: Path, edit: object) -> None:
    store = linear(tmp_path, 2)
    path = store.step_path(1)
    start_step(store, 1, session_id="s")
    text = path.read_text()
    assert peek_step(path, 1) == ("in-progress", "Step number 1")
    assert callable(edit)
    path.write_text(edit(text))
    assert peek_step(path, 1) is None


def test_the_state_view_reads_the_step_as_the_store_does(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    start_step(store, 2, force=True, session_id="s")
    state = PlanState(store.root)
    assert state.step_status(2) == ("in-progress", "Step number 2")
    assert state.step_status(3) == ("pending", "Step number 3")
    assert state.read_active() == store.read_active()
    path = store.step_path(3)  # an unusual form: read in full, same answer
    path.write_text(path.read_text().replace("title: Step number 3",
                                             "title: \"Step number 3\""))
    assert state.step_status(3) == ("pending", "Step number 3")


def test_every_event_has_one_handler() -> None:
    from importlib import import_module

    assert set(EVENTS) == set(HANDLERS)
    for event, (module, name) in EVENTS.items():
        assert getattr(import_module(module), name) is HANDLERS[event], event


@pytest.mark.parametrize("tasks", [
    None,  # `claude -p`, the SDK: no background task; the hook blocks
    # an interactive session while the step's executor runs: the hook lets the turn end
    [{"id": "agent-1", "type": "subagent", "status": "running",
      "agent_type": "maker:step-executor"}],
], ids=["foreground", "executor-in-the-background"])
def test_the_busy_stop_hook_imports_neither_pyyaml_nor_the_plan_model(
        tmp_path: Path, tasks: list[dict[str, str]] | None) -> None:
    store = linear(tmp_path, 3)
    start_step(store, 2, force=True, session_id="s")
    stdin = json.dumps({"session_id": "s", "hook_event_name": "Stop", "cwd": str(tmp_path),
                        "stop_hook_active": False,
                        **({"background_tasks": tasks} if tasks is not None else {})})
    out, imported = hook_imports(tmp_path, "stop", stdin)
    if tasks is None:
        assert json.loads(out)["decision"] == "block", out
    else:
        assert out == "", out
    heavy = {"yaml", "click", "dataclasses", "maker.core.models", "maker.store.plan_store",
             "maker.hooks.handlers", "maker.executor.state.lifecycle",
             # nor what a plain write, the lock and a committed journal do without
             "tempfile", "shutil", "threading", "runpy", "importlib.util",
             # nor typing: the type checker's names are the type checker's
             "typing"}
    assert imported and not imported & heavy, sorted(imported & heavy)


def hook_imports(tmp_path: Path, event: str, stdin: str) -> tuple[str, set[str]]:
    """The hook's output for ``event`` and the modules it imported, run as scripts/launch
    runs it, with the folders scripts/bootstrap found PyYAML and click in: site never
    runs (nor the .pth files of whatever site-packages they are in)."""
    import click
    import yaml

    deps = tmp_path / "deps"
    deps.write_text("\n".join([sys.executable, *{str(Path(m.__file__).parent.parent)
                                                  for m in (yaml, click)}]) + "\n")
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(ROOT / "scripts" / "run_module.py"),
         "--deps", str(deps), "-m", "maker.hooks", event], input=stdin,
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False)
    return result.stdout, {line.split("|")[-1].strip() for line in result.stderr.splitlines()
                           if line.startswith("import time:")}


def test_a_handoffs_arrival_loads_no_event_loop(tmp_path: Path) -> None:
    """SubagentStop with a step executor's complete handoff: the vote's tally and the
    landing are on its path, their event loop and the project's checks are not (asyncio
    with logging and concurrent.futures was 27 ms of a 199 ms event)."""
    store = write(tmp_path, [step_spec(n, n + 1 if n < 2 else -1, primary_tools=["Read", "Write"],
                                       output_schema="{files: [string]}") for n in range(3)])
    start_step(store, 1, force=True, session_id="s")
    record_orient(store, 1, "none")
    (tmp_path / "f1.txt").write_text("one\n")
    stdin = json.dumps({"session_id": "s", "hook_event_name": "SubagentStop",
                        "cwd": str(tmp_path), "agent_id": "a1",
                        "agent_type": "maker:step-executor",
                        "last_assistant_message": handoff(1, {"files": ["f1.txt"]},
                                                          files=["f1.txt"])})
    _, imported = hook_imports(tmp_path, "subagent-stop", stdin)
    assert store.load_step(1).status in ("awaiting-approval", "complete")  # (it did its work)
    assert "maker.executor.verdicts.arrival" in imported
    assert not imported & {"asyncio", "logging", "concurrent.futures", "claude_agent_sdk"}, \
        sorted(imported & {"asyncio", "logging", "concurrent.futures", "claude_agent_sdk"})


def test_the_state_view_finds_each_step_file_as_the_store_does(tmp_path: Path) -> None:
    store = linear(tmp_path, 12)  # steps 1 to 12: "1" is in many of their names
    state = PlanState(store.root)
    for n in range(1, 13):
        assert state.step_path(n) == store.step_path(n), n
    assert state.step_path(13) is None
    (store.steps_dir / "0013-padded-more.md").write_text("x")  # any zero padding
    assert state.step_path(13) == store.step_path(13) == store.steps_dir / "0013-padded-more.md"


# -- imports at the top, except where a hook defers one ----------------------------------

# Imported inside a function anywhere: an optional dependency, absent from the plugin's
# install (the engine's SDK, the demo's scripted model), is asked for only when used.
OPTIONAL = ("claude_agent_sdk", "maker_scripted", "pexpect", "pyte")


def _far_round(edges: dict[str, set[str]], start: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(edges.get(module, ()))
    return seen


def launcher_loads() -> frozenset[str]:
    """What a hook's process has loaded before maker's code runs: the interpreter's start
    (``-I -S``) and the top-level imports of ``scripts/run_module.py``, which runs it."""
    tree = ast.parse((ROOT / "scripts" / "run_module.py").read_text(encoding="utf-8"))
    names = [a.name for node in tree.body if isinstance(node, ast.Import) for a in node.names]
    code = "".join(f"import {n}\n" for n in ["sys", *names]) + "print(*sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return frozenset(out.split())


def deferred_imports(root: Path, at_start: frozenset[str] = frozenset(),
                     processes: frozenset[str] = frozenset()) -> list[str]:
    """Each import written inside a function that should sit at the top of its module.

    A hook is a process of its own on every event, so a module a hook can reach (through
    any import, far round) may defer into a function an import that its own top-level
    imports do not load already: that keeps an event to what it needs; so may a script
    run as a process of its own on every call of something (``processes``: the box's
    setup). Anywhere else, for a module already loaded, and for one the process loaded
    ``at_start``, the import goes at the top. Optional dependencies aside."""
    edges: dict[str, set[str]] = {}
    for imp in module_imports(root):
        edges.setdefault(imp.source, set()).add(imp.target)
    package = root.name
    hooked = _far_round(edges, {m for m in edges if m.startswith(f"{package}.hooks")})
    hooked |= processes
    at_import: dict[str, set[str]] = {}
    for imp in module_imports(root, "import"):
        at_import.setdefault(imp.source, set()).add(imp.target)
    inside: dict[str, dict[str, set[str]]] = {}  # module -> file:line -> targets
    for imp in module_imports(root, "functions"):
        inside.setdefault(imp.source, {}).setdefault(imp.where, set()).add(imp.target)
    stray = []
    for path in sorted(root.rglob("*.py")):  # imports of outside packages (json, shutil)
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                names = ([a.name for a in inner.names] if isinstance(inner, ast.Import)
                         else [inner.module or ""] if isinstance(inner, ast.ImportFrom)
                         else [])
                if not names or any(n.startswith((package, *OPTIONAL)) for n in names):
                    continue
                if module not in hooked or all(n in at_start for n in names):
                    stray.append(f"{path.relative_to(root.parent)}:{inner.lineno}")
    for module, places in inside.items():
        loaded = _far_round(at_import, at_import.get(module, set()))
        for where, targets in places.items():
            if module not in hooked or targets <= loaded:
                stray.append(where)
    return sorted(set(stray))


def test_an_import_waits_in_a_function_only_where_a_hook_needs_it_to() -> None:
    import maker

    stray = deferred_imports(Path(maker.__file__).resolve().parent, launcher_loads(),
                             BOX_SETUP)
    assert not stray, ("an import inside a function that belongs at the top of its module "
                       "(no hook reaches the module, or its top-level imports or the hook's "
                       "launcher load it already):\n" + "\n".join(stray))


# A script of its own, run by ``python -I -S`` for every boxed Bash call of a step, and
# the part it reads from beside it.
BOX_SETUP = frozenset({"maker.tools.box.box_setup", "maker.tools.box.box_after",
                       "maker.tools.box.box_walk", "maker.tools.box.box_sites"})


def test_the_boxs_setup_loads_no_module_it_does_without(tmp_path: Path) -> None:
    """Each boxed call starts it: ``typing`` (one annotation), ``signal``'s enum and
    ``fnmatch``'s ``re`` were two thirds of its Python (about 17 ms a call)."""
    from maker.tools.box.box_install import BOX

    setup = BOX.with_name("box_setup.py")
    code = ("import importlib.util, sys\n"
            "before = set(sys.modules)\n"
            f"spec = importlib.util.spec_from_file_location('box', {str(setup)!r})\n"
            "box = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(box)\n"
            "lists = {'gitdir': [], 'later': [], 'laterdir': [sys.argv[1]], 'index': [], "
            "'git': [], 'deeper': ['.envrc', '.claude/', 'lefthook*.yml'], "
            "'rw': [sys.argv[1]], 'temp': [], 'laterok': [], 'laterokname': [], "
            "'laterskip': [], 'since': ['0']}\n"
            "after = box._after()\n"
            "after.hold(lists)\n"
            "assert after(lists).undo() == [], 'nothing was made'\n"
            "print(*(set(sys.modules) - before))")
    (tmp_path / "sub/venv").mkdir(parents=True)  # (the walk's: a folder, a venv, an .envrc)
    (tmp_path / "sub/venv/pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "sub/.envrc").write_text("export A=1\n")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path)],
                         capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert "ctypes" in out  # (it ran)
    assert not {"typing", "re", "enum", "signal", "fnmatch", "socket", "shutil",
                "subprocess"} & set(out)


@pytest.mark.parametrize(("files", "stray"), [
    # a module no hook reaches: every import at the top
    ({"cli/a.py": "def f():\n    import json\n    from maker.core import b\n"},
     ["maker/cli/a.py:2", "maker/cli/a.py:3"]),
    # a hook's module may defer what it does not load
    ({"hooks/h.py": "def f():\n    import json\n    from maker.core import b\n"}, []),
    # ... but not what its top-level imports load already
    ({"hooks/h.py": "from maker.core import c\n\ndef f():\n    from maker.core import b\n"},
     ["maker/hooks/h.py:4"]),
    # reached from a hook, far round, through an import inside a function
    ({"hooks/h.py": "def f():\n    from maker.core import c\n",
      "core/c.py": "def g():\n    from maker.core import b\n"}, []),
    # optional dependencies wait anywhere
    ({"cli/a.py": "def f():\n    import claude_agent_sdk\n"}, []),
    # what the hook's process loaded before maker's code runs never waits
    ({"hooks/h.py": "def f():\n    import os\n    import json\n    from maker.core import b\n"},
     ["maker/hooks/h.py:2"]),
])
def test_the_check_knows_which_imports_may_wait(tmp_path: Path, files: dict[str, str],
                                               stray: list[str]) -> None:
    root = make_package(tmp_path, {"cli/__init__.py": "", "hooks/__init__.py": "",
                                   "core/__init__.py": "", "core/b.py": "",
                                   "core/c.py": "from maker.core import b\n", **files})
    assert deferred_imports(root, frozenset({"os", "sys"})) == stray
