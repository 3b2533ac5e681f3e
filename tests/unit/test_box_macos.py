"""The box on macOS: the same spec as a Seatbelt profile, run by ``sandbox-exec`` with the
same supervision. These machines are Linux: the profile is checked as text, and the
macOS path of ``box_setup.py`` runs here with a stand-in for ``/usr/bin/sandbox-exec``
that records the profile it is given and runs the command (no Seatbelt: what a Mac
enforces is not proven here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maker.tools.box import boundary
from maker.tools.box.box_install import BOX

SETUP = BOX.with_name("box_setup.py")


def _seatbelt(lists: dict[str, list[str]]) -> str:
    sys.path.insert(0, str(SETUP.parent))
    try:
        import box_setup
    finally:
        sys.path.pop(0)
    return box_setup.seatbelt({"gitdir": [], **lists})


def test_the_profile_denies_every_write_but_the_writable_places_and_not_what_is_protected(
        tmp_path: Path) -> None:
    project = tmp_path / "pro ject"
    (project / "plans").mkdir(parents=True)
    (project / ".git" / "hooks").mkdir(parents=True)
    profile = _seatbelt({"rw": [str(project), "/var/tmp"],
                         "ro": [str(project / "plans"), str(project / ".git" / "hooks")],
                         "hide": [str(tmp_path / "key")]})
    lines = profile.splitlines()
    assert lines[:4] == ["(version 1)", "(allow default)", "(deny file-write*)",
                         '(allow file-write* (subpath "/dev"))']
    real = os.path.realpath
    assert lines[4] == (f'(allow file-write* (subpath "{real(project)}") '
                        f'(subpath "{real("/var/tmp")}"))')
    # (the last rule that matches wins: the protected places come after the writable)
    deny = lines[5]
    assert deny.startswith("(deny file-write* ")
    assert f'(subpath "{real(project / "plans")}")' in deny
    # A folder above a protected place, inside a writable one, may not be renamed away
    # and back (rules name paths): the project itself and its .git.
    assert f'(literal "{real(project)}")' in deny
    assert f'(literal "{real(project / ".git")}")' in deny
    assert f'(literal "{real(tmp_path)}")' not in deny  # (not in a writable place)
    assert lines[6] == f'(deny file-read* file-write* (subpath "{real(tmp_path / "key")}"))'
    assert lines[7] == ("(deny network-outbound (remote unix-socket (subpath "
                        f'"{real(tmp_path / "key")}")))')


def test_a_path_cannot_break_out_of_its_string(tmp_path: Path) -> None:
    odd = tmp_path / 'a"b\\c) (allow file-write* (subpath "'
    odd.mkdir()
    profile = _seatbelt({"rw": [], "ro": [str(odd)], "hide": []})
    deny = profile.splitlines()[4]
    escaped = str(odd).replace("\\", "\\\\").replace('"', '\\"')
    assert deny == f'(deny file-write* (subpath "{escaped}"))'


@pytest.mark.kernel  # (the machine's own protection, not the unit tests' guard alone)
def test_on_a_mac_without_sandbox_exec_the_guard_holds_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(boundary, "SANDBOX_EXEC", "/nonexistent/sandbox-exec")
    found = boundary.protection(refresh=True)
    assert not found.kernel and "Seatbelt" in found.how
    monkeypatch.setattr(sys, "platform", "sunos5")
    assert "Linux namespaces and macOS's Seatbelt" in boundary.protection(refresh=True).how


_DRIVER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("box_setup", sys.argv[1])
box = importlib.util.module_from_spec(spec)
spec.loader.exec_module(box)
box.SANDBOX_EXEC = sys.argv[2]
sys.platform = "darwin"
sys.argv = ["box_setup.py", sys.argv[3]]
box.main()
"""


def test_the_mac_path_runs_the_command_under_the_profile_and_supervises_it(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    git = project / ".git"
    git.mkdir(parents=True)
    (project / "plans").mkdir()
    fake = tmp_path / "sandbox-exec"
    fake.write_text(f'#!/bin/sh\n[ "$1" = -p ] || exit 99\nprintf %s "$2" > {tmp_path}/profile\n'
                    'shift 2\nexec "$@"\n')
    fake.chmod(0o755)
    spec = tmp_path / "spec"
    spec.write_text(f"python {sys.executable}\nshell /bin/sh\nrw {project}\n"
                    f"ro {project / 'plans'}\ngitdir {git}\n")
    left = tmp_path / "left.pid"
    command = (f"pwd > {tmp_path}/where; cat > {tmp_path}/stdin; "
               f"sleep 60 & echo $! > {left}; : > {git}/commondir; exit 7")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", _DRIVER, str(SETUP), str(fake),
                           str(spec)], input=command, text=True, capture_output=True,
                          cwd=tmp_path, env={**os.environ, "MAKER_BOX_CWD": str(project)},
                          timeout=30, check=False)
    assert done.returncode == 7, done.stderr
    assert (tmp_path / "profile").read_text() == _seatbelt(
        {"rw": [str(project)], "ro": [str(project / "plans")], "hide": []})
    assert (tmp_path / "where").read_text().strip() == str(project)
    assert (tmp_path / "stdin").read_text() == ""  # (its stdin is /dev/null)
    assert not (git / "commondir").exists() and "removed" in done.stderr
    pid = int(left.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "what the command left running outlived it"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False
