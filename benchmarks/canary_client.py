"""The end-to-end tests against another Claude Code client: the newest claude-agent-sdk
release (or the one given), before the pin in pyproject.toml's dev extra moves to it.

A throwaway venv in a temporary directory gets this checkout (editable), the dev extra's
tools and the candidate claude-agent-sdk; `tests/e2e` then runs in that venv, so
`find_claude` finds the candidate's bundled CLI and the SDK tests import the candidate's
Python package. The project's own .venv is not touched (the editable install refreshes
the checkout's ignored *.egg-info, nothing else; no bytecode and no pytest cache are
written). Printed: the pinned client and the candidate (claude-agent-sdk and the Claude
Code it bundles), whether they differ, and the result: the counts, and each failing
test with the first lines of its failure. Exits 1 when a test fails, 2 when the run
could not be made (an install failed, nothing was collected, --timeout ran out).

    .venv/bin/python benchmarks/canary_client.py [VERSION] [-n 2] [--timeout 1800] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from importlib.metadata import requires
from pathlib import Path

from maker_scripted.claude_cli import Client, installed_client, pinned_sdk

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
SDK = "claude-agent-sdk"
INSTALL_TIMEOUT = 900.0
FAILURE_LINES = 4

_NAME = re.compile(r"[A-Za-z0-9._-]+")
_DEV = re.compile(r"""extra\s*==\s*["']dev["']""")
_PROBE = ("import json; from maker_scripted.claude_cli import installed_client; "
          "c = installed_client(); print(json.dumps([c.sdk, c.claude_code]))")


class CannotRun(Exception):
    """The canary could not run the tests (an install, the collection, the time)."""


def dev_tools() -> list[str]:
    """The dev extra's requirements, as this interpreter's install of maker lists them, but
    for claude-agent-sdk (the candidate replaces it)."""
    dev = [r.split(";")[0].strip() for r in requires("maker") or [] if _DEV.search(r)]
    return [r for r in dev
            if (m := _NAME.match(r)) and m.group(0).lower().replace("_", "-") != SDK]


def make_venv(where: Path, candidate: str | None) -> Path:
    """A venv at ``where`` with this checkout, the dev tools and the candidate SDK; its
    python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    wanted = f"{SDK}=={candidate}" if candidate else SDK
    _pip(python, "-e", str(REPO), *dev_tools(), wanted)
    if (REPO / "dev" / "pyproject.toml").is_file():  # maker_scripted, a distribution of its own
        _pip(python, "--no-deps", "-e", str(REPO / "dev"))
    return python


def _pip(python: Path, *args: str) -> None:
    try:
        done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args],
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise CannotRun(f"pip install outlived {INSTALL_TIMEOUT:.0f} s") from exc
    if done.returncode != 0:
        raise CannotRun(f"pip install {' '.join(args)} failed:\n{done.stderr.strip()}")


def client_in(python: Path) -> Client:
    """The client ``python`` imports, read by that interpreter."""
    out = subprocess.run([str(python), "-c", _PROBE], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    sdk, claude_code = json.loads(out)
    return Client(sdk, claude_code)


def run_e2e(python: Path, scratch: Path, workers: str, timeout: float,
            select: list[str]) -> tuple[Path, Path, float]:
    """``tests/e2e`` under ``python``, killed with its whole process group after
    ``timeout`` s: (the junit report, the log, the seconds it took)."""
    report, log = scratch / "junit.xml", scratch / "pytest.log"
    # PATH as it is: with the venv's bin/ first, its `maker` script would shadow the
    # plugin's, and maker's hook would rewrite the executor's `maker …` calls.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    args = [str(python), "-m", "pytest", "tests/e2e", "-n", workers, "-p", "no:cacheprovider",
            f"--junitxml={report}", *select]
    began = time.monotonic()
    with log.open("w") as out, subprocess.Popen(
            args, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True) as process:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise CannotRun(f"the tests outlived --timeout {timeout:.0f} s; the log ends:\n"
                            + _tail(log)) from exc
        finally:
            try:  # nothing the run started (workers, CLIs, hooks) outlives it
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if not report.is_file():
        raise CannotRun("pytest wrote no report; its log ends:\n" + _tail(log))
    return report, log, time.monotonic() - began


def _tail(log: Path, lines: int = 25) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def results(report: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The counts (passed, failed, skipped), and each failing test's id with the first
    lines of its failure."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failing: list[tuple[str, str]] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            counts["failed"] += 1
            said = (bad.get("message") or bad.text or "").strip().splitlines()
            failing.append((_test_id(case), "\n".join(said[:FAILURE_LINES])))
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failing


def _test_id(case: ET.Element) -> str:
    """``tests/e2e/test_x.py::[Class::]test_y`` from junit's dotted ``classname``."""
    parts = (case.get("classname") or "").split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (REPO / path).is_file():
            return "::".join([path, *parts[cut:], case.get("name") or "?"])
    return f"{case.get('classname')}::{case.get('name')}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", help="the claude-agent-sdk release to try "
                        "(default: the newest released)")
    parser.add_argument("-n", dest="workers", default="2", help="pytest-xdist workers")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds the tests may take, in all")
    parser.add_argument("-k", dest="keyword", help="only the tests pytest -k selects")
    parser.add_argument("--keep", action="store_true",
                        help="keep the throwaway venv and the log (their path is printed)")
    args = parser.parse_args()
    pin = pinned_sdk(PYPROJECT)
    here = installed_client()
    pinned = here if here.sdk == pin else Client(pin, None)
    print(f"pinned:    {pinned}" + ("" if here.sdk == pin else
                                     "  (its Claude Code: not installed in this venv)"))
    scratch = Path(tempfile.mkdtemp(prefix="maker-canary-"))
    try:
        python = make_venv(scratch / "venv", args.version)
        candidate = client_in(python)
        print(f"candidate: {candidate}")
        print(compare(pin, pinned, candidate))
        select = ["-k", args.keyword] if args.keyword else []
        report, log, took = run_e2e(python, scratch, args.workers, args.timeout, select)
        counts, failing = results(report)
        print(next((line for line in log.read_text(errors="replace").splitlines()
                    if line.startswith("client: ")), "client: (the suite's header is missing)"))
    except CannotRun as exc:
        print(f"result: NOT RUN: {exc}")
        return 2
    finally:
        if args.keep:
            print(f"kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return report_result(counts, failing, took, log if args.keep else None)


def compare(pin: str | None, pinned: Client, candidate: Client) -> str:
    """Whether the candidate is the pinned client, in words."""
    if candidate.sdk == pin and pinned.claude_code in (None, candidate.claude_code):
        return "the same client as the pin"
    return (f"differs from the pin: claude-agent-sdk {pin} -> {candidate.sdk}, Claude Code "
            f"{pinned.claude_code or '?'} -> {candidate.claude_code}")


def report_result(counts: dict[str, int], failing: list[tuple[str, str]], took: float,
                  log: Path | None) -> int:
    """Print the result; the exit code."""
    if not sum(counts.values()):
        print("result: NOT RUN: pytest collected no test")
        return 2
    print(f"result: {'FAILED' if failing else 'passed'}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped in {took:.0f} s")
    for name, said in failing:
        print(f"  FAILED {name}")
        for line in said.splitlines():
            print(f"      {line}")
    if log is not None:
        print(f"log: {log}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
