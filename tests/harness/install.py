"""Installing the plugin as a person does: a checkout of what a clone of the repository
holds, added as a marketplace and installed with the real CLI; and a Python that lacks
maker's dependencies, for its first use."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from harness.scenarios import find_plugin_root
from maker_scripted import FakeMessagesAPI
from maker_scripted.claude_cli import isolated_env

__all__ = ["PLANNED", "PLUGIN_PARTS", "bare_python", "claude", "first_use_env", "install_plugin",
           "plugin_checkout", "script_first_plan"]

# What a clone of the repository holds that the plugin needs (no .venv, no caches).
PLUGIN_PARTS = (".claude-plugin", "agents", "bin", "commands", "hooks", "scripts", "src",
                "README.md", "pyproject.toml")


def claude(binary: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with ``args`` (``plugin install …``), in the fresh home ``home``."""
    env = isolated_env("http://127.0.0.1:9", home)
    return subprocess.run([str(binary), *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def plugin_checkout(dest: Path, root: Path | None = None) -> Path:
    """``dest`` holding the plugin (of ``root``: this checkout by default) as a clone of
    the repository does."""
    dest.mkdir(parents=True)
    root = root or find_plugin_root()
    for part in PLUGIN_PARTS:
        source = root / part
        if source.is_dir():
            shutil.copytree(source, dest / part, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, dest / part)
    return dest


def install_plugin(binary: Path, home: Path, checkout: Path) -> Path:
    """The README's install: ``marketplace add`` the checkout, ``install`` maker from it;
    the installed copy's path."""
    import json

    added = claude(binary, home, "plugin", "marketplace", "add", str(checkout))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = claude(binary, home, "plugin", "install", "maker@maker-plugins")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    record = json.loads((home / ".claude/plugins/installed_plugins.json").read_text())
    (entry,) = record["plugins"]["maker@maker-plugins"]
    return Path(entry["installPath"])


def bare_python(dest: Path) -> Path:
    """A ``bin/`` folder whose ``python3`` is this machine's Python with no site-packages
    (no PyYAML, no click): its standard library linked, its own prefix."""
    base = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    prefix = base.parents[1]
    lib = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (dest / "bin").mkdir(parents=True)
    (dest / "lib" / lib / "site-packages").mkdir(parents=True)
    shutil.copy2(base, dest / "bin" / base.name)
    if base.name != "python3":
        (dest / "bin" / "python3").symlink_to(base.name)
    for entry in (prefix / "lib").glob("lib*"):
        (dest / "lib" / entry.name).symlink_to(entry)
    for entry in (prefix / "lib" / lib).iterdir():
        if entry.name != "site-packages":
            (dest / "lib" / lib / entry.name).symlink_to(entry)
    return dest / "bin"


PLANNED = "Run /maker:step to start the first step."
"""The last line of the scripted `/maker:plan` (:func:`script_first_plan`)."""


def first_use_env(bare: Path) -> dict[str, str]:
    """The CLI's environment for a first use: ``bare``'s ``python3`` first on PATH, no
    interpreter named (maker finds and sets up its own)."""
    return {"PATH": f"{bare}{os.pathsep}{os.environ['PATH']}", "MAKER_PYTHON": ""}


def script_first_plan(api: FakeMessagesAPI) -> None:
    """A newcomer's `/maker:plan add a hello.txt greeting`, scripted: the main agent
    launches the planner, waits, runs `maker status` and reports it (its last line
    ``PLANNED``); the planner hands back the greeting plan."""
    from harness.scenarios import (
        MAIN,
        PLANNER,
        greeting_plan,
        handback,
        main_launches_planner,
        main_reports_status,
        main_runs,
        main_waits,
        to_yaml,
    )

    api.script(MAIN, main_launches_planner(), main_waits(), main_runs("maker status"),
               main_reports_status())
    api.script(PLANNER, handback(to_yaml(greeting_plan())))
