"""One guarded YAML parse: every untrusted YAML text goes through ``load_yaml``.

libyaml's composer overflows the C stack on deep nesting (the process dies: no
exception, no message). Each way a deeply nested document reaches maker (a model's
plan, a handoff, a step file edited by hand) ends in a message naming the problem, never
a crash or a RecursionError; and nothing in ``src/`` but ``yaml_cleaner/load.py`` calls
a YAML loader, so a new parse cannot bypass the guard.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import maker
from harness.step_plans import make_step, write

SRC = Path(maker.__file__).resolve().parent
GUARDED = SRC / "yaml_cleaner" / "load.py"
# A YAML loader, however it is reached: the module's functions or a Loader class.
_PARSE = re.compile(r"\byaml\s*\.\s*(?:safe_|full_|unsafe_)?load(?:_all)?\b"
                    r"|\byaml\s*\.\s*(?:compose|parse|scan)(?:_all)?\b"
                    r"|\b(?:C?SafeLoader|CLoader|CFullLoader|FullLoader|UnsafeLoader)\b"
                    r"|\bfrom\s+yaml\s+import\b")
DEEP = "[" * 100_000


def test_no_module_but_the_guarded_loader_parses_yaml() -> None:
    found = [f"{path.relative_to(SRC)}:{n}: {line.strip()}"
             for path in sorted(SRC.rglob("*.py")) if path != GUARDED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _PARSE.search(line)]
    assert not found, ("parse YAML with maker.yaml_cleaner.load.load_yaml, the one guarded "
                       "loader:\n" + "\n".join(found))


def _maker(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    # Run apart: a crash in libyaml would take the test process with it.
    return subprocess.run([sys.executable, "-m", "maker", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


def _clear(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode in (1, 2), (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    return result.stdout + result.stderr


@pytest.mark.parametrize("args", [["plan", "lint", "-"], ["handoff", "check", "-"]],
                         ids=["plan", "handoff"])
def test_a_deeply_nested_answer_is_a_clear_error(tmp_path: Path, args: list[str]) -> None:
    write(tmp_path, [make_step(0, -1)])
    out = _clear(_maker(args, tmp_path, stdin=f"step: 0\nstatus: {DEEP}\n"))
    assert "invalid YAML: nested too deeply" in out


def test_a_step_file_nested_deeply_by_hand_is_a_clear_error(tmp_path: Path) -> None:
    store = write(tmp_path, [make_step(0, -1)])
    path = next(store.steps_dir.glob("00-*.md"))
    path.write_text(path.read_text().replace("---\n", f"---\ndeep: {DEEP}\n", 1))
    out = _clear(_maker(["status"], tmp_path))
    assert f"{path}: front matter: invalid YAML: nested too deeply" in out
