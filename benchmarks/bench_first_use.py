"""The first `/maker:plan` of a fresh install: how long a newcomer waits, how many times
maker installs its dependencies, and whether the person is told.

Each side (this checkout, and a baseline commit's plugin, in the same run) is installed
as the README says (marketplace from a clean clone, a fresh home directory), on a Python
that lacks PyYAML and click (this machine's, without site-packages); then an interactive
session (the real CLI in a pseudo-terminal) starts, and a scripted `/maker:plan` runs to
its end. Timed: the session's start to its prompt, and `/maker:plan` from Enter to its
last line. Counted: the venvs maker made (each is one install of PyYAML and click).
Told: whether the screen said that maker set itself up.

    .venv/bin/python benchmarks/bench_first_use.py [--base COMMIT]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness.background import finished  # noqa: E402
from harness.install import (  # noqa: E402
    PLANNED,
    bare_python,
    first_use_env,
    install_plugin,
    plugin_checkout,
    script_first_plan,
)
from harness.queries import RecordingAPI  # noqa: E402
from maker_scripted.claude_cli import find_claude  # noqa: E402
from maker_scripted.terminal import start_claude  # noqa: E402

BASE = "e9f99f0"  # (the last commit before one first use)


def measure(root: Path, work: Path) -> dict[str, object]:
    claude = find_claude()
    home, project = work / "home", work / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install_plugin(claude, home, plugin_checkout(work / "clone" / "maker", root))
    env = first_use_env(bare_python(work / "python"))
    with RecordingAPI() as api:
        script_first_plan(api)
        began = time.monotonic()
        terminal = start_claude(api, project=project, home=home, env=env, claude=claude,
                                timeout=240)
        try:
            started = time.monotonic()
            terminal.submit("/maker:plan add a hello.txt greeting")
            screen = finished(terminal, api, PLANNED, timeout=240)
            planned = time.monotonic()
        finally:
            terminal.close()
    venvs = [p for p in home.rglob("venv/bin/python")]
    return {"start": started - began, "plan": planned - started, "installs": len(venvs),
            "told": "first use" in " ".join(screen.split())}


def baseline(commit: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help="the baseline commit")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="maker-first-use-") as scratch:
        base = baseline(args.base, Path(scratch, "base"))
        for label, root in ((f"before ({args.base})", base), ("after (this checkout)", REPO)):
            work = Path(scratch, label.split()[0])
            work.mkdir()
            rows.append((label, measure(root, work)))
    print(f"first /maker:plan of a fresh install ({os.cpu_count()} cores); Python without "
          "PyYAML and click\n")
    print("| plugin | session start s | first /maker:plan s | total s | installs | "
          "told on screen |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for label, m in rows:
        start, plan = float(m["start"]), float(m["plan"])  # type: ignore[arg-type]
        print(f"| {label} | {start:.1f} | {plan:.1f} | {start + plan:.1f} | {m['installs']} "
              f"| {'yes' if m['told'] else 'no'} |")
    after = rows[-1][1]
    met = after["installs"] == 1 and after["told"]
    print(f"\ngoal: one install, and the person told: {'met' if met else 'MISSED'}")
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
