"""What the installed plugin runs, and nothing else: its launcher puts the plugin's
``src/`` on the path, which holds the ``maker`` package only. The demo's scripted model
(``maker_scripted``, in ``dev/``) comes with the development install: the plugin cannot
import it, and ``maker demo`` run from the plugin says where the demo runs.

The plugin runs here as it runs once bootstrapped: ``bin/maker`` through
``scripts/launch``, with the interpreter and the folders of its PyYAML and click cached
in the plugin's data dir (``scripts/bootstrap`` writes that file).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import click
import yaml

ROOT = Path(__file__).resolve().parents[2]


def plugin(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``bin/maker ARGS`` as a bootstrapped plugin runs it."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    deps = dict.fromkeys(os.path.dirname(os.path.dirname(str(m.__file__)))
                         for m in (yaml, click))
    (data / "python").write_text("\n".join([sys.executable, *deps]) + "\n")
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "CLAUDE_PLUGIN_DATA": str(data)}
    return subprocess.run([str(ROOT / "bin" / "maker"), *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_plugins_src_holds_the_maker_package_only() -> None:
    tops = {p.name for p in (ROOT / "src").iterdir()
            if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert tops == {"maker"}
    scripted = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*scripted*"))
    assert not scripted
    # Only the demo command imports the scripted model, and only when it runs.
    importing = sorted(str(p.relative_to(ROOT / "src")) for p in (ROOT / "src").rglob("*.py")
                       if "maker_scripted" in _imported(p))
    assert importing == ["maker/cli/demo_cmd.py"]


def _imported(module: Path) -> set[str]:
    """The top-level names of the packages ``module`` imports, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.partition(".")[0])
    return names


def test_the_plugin_cannot_import_the_scripted_model(tmp_path: Path) -> None:
    found = plugin(tmp_path, "--version")
    assert found.returncode == 0, found.stderr  # maker itself runs
    probe = ROOT / "scripts" / "launch"
    code = ("import importlib.util, maker; print(importlib.util.find_spec('maker_scripted'), "
            "maker.__file__)")
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"],
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    out = subprocess.run([str(probe), "-c", code], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["None", str(ROOT / "src" / "maker" / "__init__.py")]


def test_maker_demo_in_the_plugin_says_where_the_demo_runs(tmp_path: Path) -> None:
    result = plugin(tmp_path, "demo")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "runs from a clone of the maker repository with the development install" \
        in result.stderr and ".venv/bin/maker demo" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
