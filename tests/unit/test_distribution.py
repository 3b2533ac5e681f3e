"""What a wheel of maker carries, and how the development install brings the rest: the
product's wheel holds the ``maker`` package alone; the scripted model (``dev/``,
``maker-scripted``) is a distribution of its own, which the README's set-up commands,
``.ci/run`` and ``maker demo``'s advice all install beside maker."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from maker.cli.demo_cmd import NO_DEMO

ROOT = Path(__file__).resolve().parents[2]
SET_UP = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' -e ./dev"


def _clone(dest: Path) -> Path:
    """What a clone holds that a build reads, copied (a build writes ``build/`` and
    ``*.egg-info`` beside its sources: not in the checkout the other tests read)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    dest.mkdir()
    for part in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / part, dest / part)
    for part in ("src", "dev"):
        shutil.copytree(ROOT / part, dest / part, ignore=ignore)
    return dest


def _wheel(project: Path, out: Path) -> set[str]:
    """The names in the wheel pip builds of ``project``, offline (no build isolation:
    the development install brings the build backend)."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         str(project), "-w", str(out)],
        capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _packages(names: set[str]) -> set[str]:
    return {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}


def test_a_wheel_of_maker_carries_maker_alone(tmp_path: Path) -> None:
    names = _wheel(_clone(tmp_path / "maker"), tmp_path / "wheels")

    assert _packages(names) == {"maker"}
    assert {"maker/errors.py", "maker/cli/demo_cmd.py", "maker/py.typed"} <= names
    assert not [n for n in names if "maker_scripted" in n or n.startswith("dev/")]


def test_the_scripted_model_is_a_distribution_of_its_own(tmp_path: Path) -> None:
    names = _wheel(_clone(tmp_path / "maker") / "dev", tmp_path / "wheels")

    assert _packages(names) == {"maker_scripted"}
    assert {"maker_scripted/errors.py", "maker_scripted/fake_api.py"} <= names
    assert any(n.startswith("maker_scripted-") and n.endswith(".dist-info/METADATA")
               for n in names)


def test_every_set_up_command_installs_both() -> None:
    readme = [line for line in (ROOT / "README.md").read_text().splitlines()
              if line.startswith("python3 -m venv")]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.startswith("python3 -m venv")]

    assert f"{SET_UP} && .venv/bin/maker demo" in readme
    assert f"{SET_UP} && .venv/bin/pytest" in readme
    assert all(line.startswith(f"{SET_UP} && ") for line in readme), readme
    assert ci == [f"{SET_UP} || exit 1"]
    assert f"{SET_UP} && .venv/bin/maker demo" in NO_DEMO


def test_the_sdk_is_installed_beside_the_python_maker_runs_on() -> None:
    """A plugin-only person's `maker run` (or /maker:run's engine) without the SDK is told
    the one command that installs it where maker runs: that interpreter's own pip, and
    the requirement pyproject's `sdk` extra names."""
    import re

    from maker.core.sdk import SDK_REQUIREMENT, install_sdk

    extra = re.search(r"^sdk = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert extra is not None and extra[1] == f'"{SDK_REQUIREMENT}"'  # (3.10: no tomllib)
    assert install_sdk().startswith(f"{sys.executable} -m pip install ")
    assert install_sdk().endswith(f"'{SDK_REQUIREMENT}'")
