"""Each ``maker`` command loads the module that defines it, and that module's imports are
what its commands need: the plugin runs ``maker`` several times a step, so a command that
loads another's imports makes every step wait for them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import click
import pytest

from maker.cli import main
from maker.cli.main import cli, loop, step

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "maker" / "cli"


def _load_all() -> None:
    for name in {*main._COMMAND_MODULES.values(), *main._STEP_MODULES.values(),
                 *main._LOOP_MODULES.values()}:
        importlib.import_module(name)


@pytest.mark.parametrize(("group", "modules"), [(cli, main._COMMAND_MODULES),
                                                (step, main._STEP_MODULES),
                                                (loop, main._LOOP_MODULES)],
                         ids=["maker", "maker step", "maker loop"])
def test_each_command_is_mapped_to_the_module_that_defines_it(
        group: click.Group, modules: dict[str, str]) -> None:
    _load_all()
    defined = {name: cmd.callback.__module__ for name, cmd in group.commands.items()
               if cmd.callback is not None and name not in ("step", "loop")}
    assert defined == modules


def test_every_command_module_is_in_the_map() -> None:
    mapped = {m.rsplit(".", 1)[1] for m in (*main._COMMAND_MODULES.values(),
                                            *main._STEP_MODULES.values(),
                                            *main._LOOP_MODULES.values())}
    on_disk = {p.stem for p in CLI.glob("*.py")} - {"__init__", "main", "_common"}
    assert on_disk == mapped


def _loaded_by(args: list[str], tmp_path: Path) -> set[str]:
    """The maker modules ``maker ARGS`` imports, run as the console script runs it."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c",
         "import sys; from maker.cli.main import main; sys.argv[0] = 'maker'; main()", *args],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False)
    loaded = {line.split("|")[-1].strip() for line in result.stderr.splitlines()
              if line.startswith("import time:")}
    assert any(m.startswith("maker.cli.") and m != "maker.cli.main" for m in loaded), \
        result.stderr[-2000:]
    return {m for m in loaded if m.startswith("maker.")}


BRIEF = "maker.executor.launch.brief"
LEDGER = "maker.engine.ledger"
BEGIN = "maker.executor.parallel.wave_begin"


@pytest.mark.parametrize(("args", "never"), [
    (["request", "plan", "--session", "s"], {BRIEF, LEDGER, BEGIN, "maker.store.plan_store"}),
    (["next"], {BRIEF, LEDGER, BEGIN}),
    (["orient", "1"], {BRIEF, LEDGER, BEGIN}),
    (["status"], {BRIEF, BEGIN}),
    (["loop", "begin", "--session", "s"], {LEDGER, "maker.engine.orchestrator"}),
    (["policy"], {BRIEF, LEDGER, BEGIN}),
    (["step", "approve", "1"], {BRIEF, LEDGER, BEGIN}),
])
def test_a_command_loads_none_of_the_others_imports(
        args: list[str], never: set[str], tmp_path: Path) -> None:
    loaded = _loaded_by(args, tmp_path)
    assert not loaded & never, sorted(loaded & never)


@pytest.mark.parametrize("module", ["maker", "maker.cli.main"])
def test_run_as_a_module_every_command_is_found(module: str, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", module, "status"], capture_output=True,
                            text=True, cwd=tmp_path, timeout=60, check=False)
    assert "No such command" not in result.stderr, result.stderr
    assert "no plan in" in result.stderr + result.stdout, result.stderr
