"""The main agent's Bash in its own box while a plan exists, in the real client
(interactive, auto mode): a `conftest.py` a step left runs when the main agent runs the
tests, and reaches neither the plan nor the sealing key; the tests still run, and the
project stays the main agent's to write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.background import finished
from harness.claude_fixtures import StartInteractive
from harness.kernel import require_kernel
from harness.plugin import write_plan
from harness.queries import RecordingAPI
from harness.scenarios import MAIN, resent_as_changed, tool
from maker.store.seal import key_path, seal
from maker_scripted import RecordedRequest, Reply

pytestmark = pytest.mark.e2e

CONFTEST = """import os
key = os.path.join(os.environ.get('XDG_DATA_HOME', ''), 'ma' + 'ker', 'seal.key')
for what, act in (('key', lambda: open('stolen.bin', 'wb').write(open(key, 'rb').read())),
                  ('plan', lambda: open(os.path.join('pla' + 'ns', 'PWNED'), 'w').write('x'))):
    try:
        print('REACHED' if act() else 'HELD (nothing read)', what)
    except OSError as exc:
        print('HELD', what, type(exc).__name__)
open('ran.txt', 'w').write('the conftest ran')
"""


def test_the_main_agents_pytest_runs_a_steps_conftest_in_its_box(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    require_kernel()
    write_plan(project)
    seal({"warm": "the key"})  # (a sealing key exists to be stolen)
    (project / "conftest.py").write_text(CONFTEST)
    (project / "test_x.py").write_text("def test_x():\n    assert True\n")
    plans_before = sorted((p.relative_to(project), p.read_bytes())
                          for p in (project / "plans").rglob("*")
                          if p.is_file() and "/.maker/" not in str(p))
    command = "python3 -m pytest -q -s -p no:cacheprovider test_x.py"

    def sends_again(request: RecordedRequest) -> Reply:
        changed = resent_as_changed(request)
        assert "main.spec" in changed["command"] and command in changed["command"]
        return Reply.tool("Bash", changed)

    def reports(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "REACHED" not in said and "HELD plan OSError" in said and "1 passed" in said, said
        return Reply.text("The tests pass.\n\nTESTS_RAN")

    fake_api.script(MAIN, tool("Bash", command=command, description="Run the tests"),
                    sends_again, reports)
    terminal = interactive(env={"PYTHONDONTWRITEBYTECODE": "1"})
    terminal.submit("run the tests")
    finished(terminal, fake_api, "TESTS_RAN")
    fake_api.assert_done()
    assert (project / "ran.txt").read_text() == "the conftest ran"  # (the project: writable)
    assert not (project / "plans" / "PWNED").exists()
    stolen = project / "stolen.bin"
    assert not stolen.exists() or key_path().read_bytes() not in stolen.read_bytes()
    assert sorted((p.relative_to(project), p.read_bytes())
                  for p in (project / "plans").rglob("*")
                  if p.is_file() and "/.maker/" not in str(p)) == plans_before
    assert os.path.getsize(key_path()) > 0
