"""Which commands verify a project: format, lint, build, test (seed 004,
docs/architecture.md#the-seeds), in that order.

``FORMAT_CMD``, ``LINT_CMD``, ``BUILD_CMD`` and ``TEST_CMD`` win when set. Set but
empty (``TEST_CMD=``) means "this check is deliberately off": it is neither run nor
detected, and every message says so (``off_text``). Unset, each kind is detected from
the project's files, the first detector that knows it winning: Python, Node, Rust, Go,
then a Makefile.

The format command *formats* (``ruff format .``, not ``--check``): seed 004 formats
before it gathers evidence, so that the evidence is about the code as it will be
committed, and a formatting nit never fails a step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from maker.core.bounded import read_text_file
from maker.errors import InputError

__all__ = ["ENV_VARS", "KINDS", "VerifyCommand", "detect_commands", "off_text", "turned_off"]

KINDS: tuple[str, ...] = ("format", "lint", "build", "test")
ENV_VARS: dict[str, str] = {kind: f"{kind.upper()}_CMD" for kind in KINDS}

# npm's placeholder for a package without tests: running it proves nothing.
_NPM_NO_TEST = "no test specified"
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class VerifyCommand:
    """One shell command of one kind (``format`` | ``lint`` | ``build`` | ``test``)."""

    kind: str
    command: str
    source: str = ""  # why this command: "env TEST_CMD", "pyproject.toml", ...


def detect_commands(project_dir: Path, env: Mapping[str, str] | None = None
                    ) -> list[VerifyCommand]:
    """The verification commands for ``project_dir``, in KINDS order ([] when none known)."""
    env = os.environ if env is None else env
    project = Path(project_dir)
    found: dict[str, VerifyCommand] = {}
    overridden: set[str] = set()
    for kind, var in ENV_VARS.items():
        if var in env:
            overridden.add(kind)
            value = env[var].strip()
            if value:
                found[kind] = VerifyCommand(kind, value, f"env {var}")
    for detector in _DETECTORS:
        if len(found) + len(overridden - set(found)) == len(KINDS):
            break
        for cmd in detector(project, env):
            if cmd.kind not in found and cmd.kind not in overridden:
                found[cmd.kind] = cmd
    return [found[kind] for kind in KINDS if kind in found]


_NOUNS = {"format": "formatting", "lint": "linting", "build": "the build", "test": "tests"}


def turned_off(env: Mapping[str, str] | None = None) -> list[str]:
    """The kinds whose variable is set empty (``TEST_CMD=``): deliberately off."""
    env = os.environ if env is None else env
    return [kind for kind, var in ENV_VARS.items() if var in env and not env[var].strip()]


def off_text(kinds: list[str]) -> str:
    """``TEST_CMD is set empty: tests are off`` (each kind, joined); "" for none."""
    return "; ".join(f"{ENV_VARS[k]} is set empty: {_NOUNS[k]} "
                     f"{'are' if k == 'test' else 'is'} off" for k in kinds)


# -- detectors -----------------------------------------------------------------------


def _python(project: Path, env: Mapping[str, str]) -> list[VerifyCommand]:
    pyproject = _read(project / "pyproject.toml")
    setup_cfg = _read(project / "setup.cfg")
    markers = [n for n in ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")
               if (project / n).is_file()]
    if not markers:
        return []
    source = markers[0]
    out: list[VerifyCommand] = []

    if (_section(pyproject, "tool.ruff") is not None or (project / "ruff.toml").is_file()
            or (project / ".ruff.toml").is_file()):
        ruff = _tool(project, "ruff", env)
        out.append(VerifyCommand("format", f"{ruff} format .", source))
        out.append(VerifyCommand("lint", f"{ruff} check .", source))
    elif _section(pyproject, "tool.black") is not None:
        out.append(VerifyCommand("format", f"{_tool(project, 'black', env)} .", source))
    if not any(c.kind == "lint" for c in out) and (
            (project / ".flake8").is_file() or _ini_section(setup_cfg, "flake8")):
        out.append(VerifyCommand("lint", _tool(project, "flake8", env), source))

    mypy_cfg = _section(pyproject, "tool.mypy")
    if mypy_cfg is not None or (project / "mypy.ini").is_file() or _ini_section(setup_cfg,
                                                                              "mypy"):
        has_files = bool(re.search(r"^\s*files\s*=", mypy_cfg or "", re.MULTILINE)) or \
            bool(re.search(r"^\s*files\s*=", _read(project / "mypy.ini"), re.MULTILINE))
        mypy = _tool(project, "mypy", env)
        out.append(VerifyCommand("build", mypy if has_files else f"{mypy} .", source))

    if _has_python_tests(project, pyproject, setup_cfg):
        python = _python_exe(project, env)
        out.append(VerifyCommand("test", f"{python} -m pytest -q", source))
    return out


def _has_python_tests(project: Path, pyproject: str, setup_cfg: str) -> bool:
    if _section(pyproject, "tool.pytest.ini_options") is not None:
        return True
    if (project / "pytest.ini").is_file() or (project / "conftest.py").is_file():
        return True
    if _ini_section(setup_cfg, "tool:pytest") or _ini_section(_read(project / "tox.ini"),
                                                               "pytest"):
        return True
    for name in ("tests", "test"):
        if (project / name).is_dir():
            return True
    # pytest exits 5 when it collects nothing: without tests, running it proves nothing.
    return any(project.glob("test_*.py")) or any(project.glob("*_test.py"))


def _node(project: Path, env: Mapping[str, str]) -> list[VerifyCommand]:
    path = project / "package.json"
    if not path.is_file():
        return []
    try:
        data = json.loads(_read(path) or "{}")
    except ValueError:
        return []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    pm = _node_package_manager(project)

    def run(script: str) -> str:
        if script == "test" and pm == "npm":
            return "npm test"
        return f"{pm} run {script}"

    wanted = {"format": ("format", "fmt"), "lint": ("lint",), "build": ("build", "typecheck"),
              "test": ("test",)}
    out: list[VerifyCommand] = []
    for kind, names in wanted.items():
        for name in names:
            body = scripts.get(name)
            if isinstance(body, str) and body.strip() and not (
                    name == "test" and _NPM_NO_TEST in body):
                out.append(VerifyCommand(kind, run(name), "package.json"))
                break
    return out


def _node_package_manager(project: Path) -> str:
    for lockfile, pm in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"),
                         ("bun.lockb", "bun"), ("bun.lock", "bun")):
        if (project / lockfile).is_file():
            return pm
    return "npm"


def _rust(project: Path, env: Mapping[str, str]) -> list[VerifyCommand]:
    if not (project / "Cargo.toml").is_file():
        return []
    return [VerifyCommand("format", "cargo fmt", "Cargo.toml"),
            VerifyCommand("lint", "cargo clippy --all-targets", "Cargo.toml"),
            VerifyCommand("build", "cargo build", "Cargo.toml"),
            VerifyCommand("test", "cargo test", "Cargo.toml")]


def _go(project: Path, env: Mapping[str, str]) -> list[VerifyCommand]:
    if not (project / "go.mod").is_file():
        return []
    return [VerifyCommand("format", "gofmt -w .", "go.mod"),
            VerifyCommand("lint", "go vet ./...", "go.mod"),
            VerifyCommand("build", "go build ./...", "go.mod"),
            VerifyCommand("test", "go test ./...", "go.mod")]


def _make(project: Path, env: Mapping[str, str]) -> list[VerifyCommand]:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _read(project / name)
        if text:
            break
    else:
        return []
    targets = set(_MAKE_TARGET.findall(text))
    wanted = {"format": ("format", "fmt"), "lint": ("lint",), "build": ("build",),
              "test": ("test", "check")}
    out: list[VerifyCommand] = []
    for kind, names in wanted.items():
        for target in names:
            if target in targets:
                out.append(VerifyCommand(kind, f"make {target}", name))
                break
    return out


_DETECTORS: tuple[Callable[[Path, Mapping[str, str]], list[VerifyCommand]], ...] = (
    _python, _node, _rust, _go, _make)


# -- helpers ---------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return read_text_file(path, errors="replace")
    except (OSError, InputError):
        return ""


def _section(toml_text: str, name: str) -> str | None:
    """The body of TOML table ``[name]`` (and its sub-tables), or None if absent.

    A line scan, not a TOML parse: Python 3.10 has no tomllib, and presence is all
    detection needs.
    """
    header = re.compile(r"^\[\s*" + re.escape(name) + r"\s*(?:\]|\.)", re.MULTILINE)
    m = header.search(toml_text)
    if m is None:
        return None
    rest = toml_text[m.end():]
    nxt = re.search(r"^\[(?!\s*" + re.escape(name) + r"\s*[\].])", rest, re.MULTILINE)
    return rest[:nxt.start()] if nxt else rest


def _ini_section(text: str, name: str) -> bool:
    return re.search(r"^\[" + re.escape(name) + r"\]", text, re.MULTILINE) is not None


def _tool(project: Path, name: str, env: Mapping[str, str]) -> str:
    """The project's own copy of a tool (its virtualenv's), else the one on PATH."""
    for venv in (".venv", "venv"):
        if (project / venv / "bin" / name).is_file():
            return f"{venv}/bin/{name}"
    if shutil.which(name, path=env.get("PATH")) is None:
        # Not on PATH: the project's interpreter may still have it as a module.
        return f"{_python_exe(project, env)} -m {name}"
    return name


def _python_exe(project: Path, env: Mapping[str, str]) -> str:
    for venv in (".venv", "venv"):
        if (project / venv / "bin" / "python").exists():
            return f"{venv}/bin/python"
    return "python" if shutil.which("python", path=env.get("PATH")) else "python3"
