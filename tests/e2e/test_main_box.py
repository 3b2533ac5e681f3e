"""The main agent's Bash in its own box while a plan exists, in the real client
(interactive, auto mode): a `conftest.py` a step left runs when the main agent runs the
tests, and reaches neither the plan, the sealing key nor git's folder; the tests still
run, the project stays the main agent's to write, and its commit (as the client writes
one) works."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.background import finished, settled
from harness.claude_fixtures import StartInteractive
from harness.kernel import require_kernel
from harness.plugin import write_plan
from harness.prompts import answer_prompts
from harness.queries import RecordingAPI
from harness.scenarios import MAIN, resent_as_changed, tool
from maker.store.seal import key_path, seal
from maker_scripted import RecordedRequest, Reply

pytestmark = pytest.mark.e2e

CONFTEST = """import os
key = os.path.join(os.environ.get('XDG_DATA_HOME', ''), 'ma' + 'ker', 'seal.key')
for what, act in (('key', lambda: open('stolen.bin', 'wb').write(open(key, 'rb').read())),
                  ('plan', lambda: open(os.path.join('pla' + 'ns', 'PWNED'), 'w').write('x')),
                  ('git', lambda: open(os.path.join('.gi' + 't', 'commondir'), 'w').write('x'))):
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

    commit = ("git add -A && git -c user.name=a -c user.email=a@b commit -q -m "
              "\"$(cat <<'EOF'\nThe tests run\n\nWith a body.\nEOF\n)\"")

    def commits(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "REACHED" not in said and "HELD plan OSError" in said and "1 passed" in said, said
        assert "HELD git OSError" in said, said
        return tool("Bash", command=commit, description="Commit")

    def commit_sent_again(request: RecordedRequest) -> Reply:
        changed = resent_as_changed(request)
        assert "main-git.spec" in changed["command"] and commit in changed["command"]
        return Reply.tool("Bash", changed)

    def reports(request: RecordedRequest) -> Reply:
        assert not request.tool_results[-1].is_error, request.tool_results[-1].text
        return Reply.text("The tests pass.\n\nTESTS_RAN")

    fake_api.script(MAIN, tool("Bash", command=command, description="Run the tests"),
                    sends_again, commits, commit_sent_again, reports)
    terminal = interactive(env={"PYTHONDONTWRITEBYTECODE": "1"})
    terminal.submit("run the tests")
    finished(terminal, fake_api, "TESTS_RAN")
    fake_api.assert_done()
    assert (project / "ran.txt").read_text() == "the conftest ran"  # (the project: writable)
    assert not (project / ".git" / "commondir").exists()
    log = subprocess.run(["git", "log", "--format=%B"], cwd=project, capture_output=True,
                         text=True, check=True).stdout
    assert log.strip() == "The tests run\n\nWith a body."
    assert not (project / "plans" / "PWNED").exists()
    stolen = project / "stolen.bin"
    assert not stolen.exists() or key_path().read_bytes() not in stolen.read_bytes()
    assert sorted((p.relative_to(project), p.read_bytes())
                  for p in (project / "plans").rglob("*")
                  if p.is_file() and "/.maker/" not in str(p)) == plans_before
    assert os.path.getsize(key_path()) > 0


def test_in_default_mode_the_persons_own_rules_still_decide(
        interactive: StartInteractive, fake_api: RecordingAPI, project: Path) -> None:
    """The client matches its rules to the command as a hook changed it, which no rule of
    the person's names: maker applies them to the command as the main agent wrote it. An
    allow rule runs the command boxed with no prompt; a deny rule refuses it, naming the
    rule; a command no rule names is asked, under the box's one line."""
    require_kernel()
    write_plan(project)
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash(python3 -m pytest:*)"], "deny": ["Bash(rm:*)"]}}))
    (project / "conftest.py").write_text(CONFTEST)
    (project / "test_x.py").write_text("def test_x():\n    assert True\n")
    (project / "build").mkdir()

    def tests_ran(request: RecordedRequest) -> Reply:
        said = request.tool_results[-1].text
        assert "1 passed" in said and "REACHED" not in said, said
        return tool("Bash", command="cd build && rm -rf ../build", description="Clean")

    def rm_refused(request: RecordedRequest) -> Reply:
        result = request.tool_results[-1]
        assert result.is_error and "Bash(rm:*)" in result.text, result.text
        return tool("Bash", command="python3 -c 'print(7)' > seven.txt", description="Note")

    def noted(request: RecordedRequest) -> Reply:
        assert not request.tool_results[-1].is_error, request.tool_results[-1].text
        return Reply.text("Done.\n\nRULES_HELD")

    fake_api.script(MAIN, tool("Bash", command="python3 -m pytest -q -s -p no:cacheprovider "
                               "test_x.py", description="Run the tests"),
                    tests_ran, rm_refused, noted)
    terminal = interactive(args=["--permission-mode", "default"])
    terminal.submit("run the tests, clean, and note seven")
    prompts = answer_prompts(terminal, lambda: settled(terminal, fake_api, "RULES_HELD"))
    fake_api.assert_done()
    assert [p.what for p in prompts] == ["Bash command"], prompts  # (the note's, alone)
    assert "/bin/sh /" in prompts[0].subject and "/box-" in prompts[0].subject  # (the box)
    assert "seven.txt" in prompts[0].screen  # (the command as written, below)
    assert (project / "build").is_dir() and (project / "seven.txt").read_text() == "7\n"
    assert not (project / "plans" / "PWNED").exists()
