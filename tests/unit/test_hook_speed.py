"""The Stop hook's lean path (issue 10, Speed): it reads a step's status and title
without PyYAML or the plan model, and says the same as the full read."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.step_plans import linear, make_step, write
from maker.executor.state.lifecycle import start_step
from maker.hooks.__main__ import EVENTS
from maker.hooks.handlers import HANDLERS
from maker.store.state import PlanState
from maker.store.step_peek import peek_step

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
    # As scripts/launch runs it, with the folders scripts/bootstrap found PyYAML and click
    # in: site never runs (nor the .pth files of whatever site-packages they are in).
    import click
    import yaml

    deps = tmp_path / "deps"
    deps.write_text("\n".join([sys.executable, *{str(Path(m.__file__).parent.parent)
                                                  for m in (yaml, click)}]) + "\n")
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(ROOT / "scripts" / "run_module.py"),
         "--deps", str(deps), "-m", "maker.hooks", "stop"], input=stdin,
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False)
    if tasks is None:
        assert json.loads(result.stdout)["decision"] == "block", result.stderr
    else:
        assert result.stdout == "", result.stdout
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    heavy = {"yaml", "click", "dataclasses", "maker.core.models", "maker.store.plan_store",
             "maker.hooks.handlers", "maker.executor.state.lifecycle",
             # nor what a plain write, the lock and a committed journal do without
             "tempfile", "shutil", "threading", "runpy", "importlib.util",
             # nor typing: the type checker's names are the type checker's
             "typing"}
    assert imported and not imported & heavy, sorted(imported & heavy)


def test_the_state_view_finds_each_step_file_as_the_store_does(tmp_path: Path) -> None:
    store = linear(tmp_path, 12)  # steps 1 to 12: "1" is in many of their names
    state = PlanState(store.root)
    for n in range(1, 13):
        assert state.step_path(n) == store.step_path(n), n
    assert state.step_path(13) is None
    (store.steps_dir / "0013-padded-more.md").write_text("x")  # any zero padding
    assert state.step_path(13) == store.step_path(13) == store.steps_dir / "0013-padded-more.md"


# -- imports at the top, except on the hook paths ------------------------------------

# Imported inside a function anywhere: an optional dependency, absent from the plugin's
# install (the engine's SDK, the demo's scripted model), is asked for only when used.
OPTIONAL = ("claude_agent_sdk", "maker_scripted", "pexpect", "pyte")


def _function_level_imports(root: Path) -> dict[str, list[str]]:
    """Module -> the ``file:line`` of each import written inside one of its functions
    (optional dependencies aside)."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                else:
                    continue
                if not all(name.startswith(OPTIONAL) for name in names):
                    found.setdefault(module, set()).add(
                        f"{path.relative_to(root.parent)}:{node.lineno}")
    return {module: sorted(places) for module, places in found.items()}


def _loaded_at_import(module: str) -> set[str]:
    """The maker modules that importing ``module`` runs (its top-level imports, far round:
    what every hook of its event pays)."""
    code = (f"import sys; import {module}; "
            "print('\\n'.join(m for m in sys.modules if m.startswith('maker')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    return set(done.stdout.split())


def _busy_stop_loads(tmp_path: Path, with_run: bool) -> set[str]:
    """The maker modules a busy Stop hook loads, measured as ``scripts/launch`` runs it."""
    from maker.executor.state.run import begin_run
    from maker.store.atomic import plan_lock

    store = linear(tmp_path, 3)
    start_step(store, 2, force=True, session_id="s")
    if with_run:
        with plan_lock(store.root):
            begin_run(store, "s", None)
    stdin = json.dumps({"session_id": "s", "hook_event_name": "Stop", "cwd": str(tmp_path),
                        "stop_hook_active": False})
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "scripts" / "run_module.py"),
         "-m", "maker.hooks", "stop"], input=stdin, capture_output=True, text=True,
        cwd=tmp_path, timeout=60, check=False)
    assert '"decision": "block"' in result.stdout, result.stderr
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:") and "maker" in line}


def test_imports_inside_functions_only_on_the_hook_paths(tmp_path: Path) -> None:
    """Everywhere else imports sit at the top. A hook imports only what its event needs:
    its modules (``maker.hooks``), what importing each event's module loads, and what the
    busy Stop hook loads as measured here, may defer an import into the function that
    needs it."""
    import maker

    hook_paths = _loaded_at_import("maker.hooks.__main__")
    for module, _ in EVENTS.values():
        hook_paths |= _loaded_at_import(module)
    hook_paths |= _busy_stop_loads(tmp_path / "idle", with_run=False)
    hook_paths |= _busy_stop_loads(tmp_path / "run", with_run=True)
    root = Path(maker.__file__).resolve().parent
    stray = [where for module, places in _function_level_imports(root).items()
             if module not in hook_paths and not module.startswith("maker.hooks")
             for where in places]
    assert not stray, ("an import inside a function, off the hook paths: move it to the "
                       "top of its module:\n" + "\n".join(stray))


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    root = tmp_path / "maker"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(
        "import os\n\ndef f():\n    import json\n    from claude_agent_sdk import x\n"
        "    def g():\n        from maker.pkg import b\n")
    found = _function_level_imports(root)
    assert found == {"maker.pkg.a": ["maker/pkg/a.py:4", "maker/pkg/a.py:7"]}
