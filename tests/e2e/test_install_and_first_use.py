"""A newcomer's first contact, as the README has it: in a fresh home directory, the
plugin added as a marketplace from a clean clone and installed (not `--plugin-dir`), then
an interactive session. Its Python lacks PyYAML and click: the first session sets them up
once, saying so on the screen with the time it took, and gives the person a `maker` for
their terminal (a link in ~/.local/bin, on their PATH); `/maker:` lists maker's commands;
a scripted `/maker:plan` writes its plan; the approval line maker gives a person runs as
written in their terminal; a second session starts without installing."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pexpect
import pytest

from harness.background import finished
from harness.install import (
    PLANNED,
    bare_python,
    first_use_env,
    install_plugin,
    plugin_checkout,
    script_first_plan,
)
from harness.queries import RecordingAPI
from maker_scripted.terminal import start_claude

pytestmark = pytest.mark.e2e

SET_UP = "maker: first use: set up PyYAML and click ("


def test_install_and_first_use_in_a_fresh_home(claude_binary: Path, claude_home: Path,
                                               fake_api: RecordingAPI, project: Path,
                                               tmp_path: Path) -> None:
    checkout = plugin_checkout(tmp_path / "clone" / "maker")
    installed = install_plugin(claude_binary, claude_home, checkout)
    env = first_use_env(bare_python(tmp_path / "python"))
    bindir = claude_home / ".local" / "bin"  # (on the person's PATH; no maker there yet)
    env["PATH"] = os.pathsep.join([str(bindir), *(
        p for p in env["PATH"].split(os.pathsep)
        if p and not os.access(os.path.join(p, "maker"), os.X_OK))])
    cache = claude_home / ".local" / "share" / "maker" / "python"
    script_first_plan(fake_api)

    terminal = start_claude(fake_api, project=project, home=claude_home, env=env,
                            claude=claude_binary, timeout=180)
    try:
        said = " ".join(terminal.wait_for_text(SET_UP, timeout=180).split())
        assert re.search(r"\(\d+\.\d s, once for every session and command\) in "
                         r"~/\.local/share/maker/venv\.", said), said
        assert cache.read_text().splitlines()[0] == str(cache.parent / "venv/bin/python")
        assert "`maker` for your terminal is ~/.local/bin/maker (a link to the plugin's)." \
            in said, said
        terminal.type("/maker:")
        menu = terminal.wait_for_text("/maker:plan")
        assert "/maker:plan" in menu and "(maker) Turn a task into" in menu, menu
        terminal.type("\x7f" * len("/maker:"))  # (the typed text taken back)
        terminal.wait(lambda: "(maker) Turn a task" not in terminal.text(), "the menu gone")
        terminal.submit("/maker:plan add a hello.txt greeting")
        finished(terminal, fake_api, PLANNED)
    finally:
        terminal.close()
    assert (project / "plans" / "PLAN.md").is_file() and (project / "plans" / "steps").is_dir()
    # (to the plugin as the client runs it: from the folder added as its marketplace)
    assert os.readlink(bindir / "maker") == str(checkout.resolve() / "bin" / "maker")
    approved_in_a_terminal(project, claude_home, env["PATH"])
    assert str(installed) not in cache.read_text()  # (one cache: not in the plugin's data)
    assert not list((claude_home / ".claude" / "plugins" / "data").glob("*/python"))
    venv = cache.parent / "venv"
    made = venv.stat().st_mtime_ns

    second = start_claude(fake_api, project=project, home=claude_home, env=env,
                          claude=claude_binary)
    try:
        assert "first use" not in second.text()
    finally:
        second.close()
    assert venv.stat().st_mtime_ns == made


def approved_in_a_terminal(project: Path, home: Path, path: str) -> None:
    """Each line maker gives a person for a terminal, typed as written in a shell of
    theirs (their PATH, no Claude Code around it): `maker step approve 0` for step 0
    brought to their approval; `maker proposal accept 1` for the scope change its sweep
    proposed; and `maker step approve 1` for step 1's major deviation (the revised step)."""
    from harness.step_plans import handoff
    from maker.executor.acceptance.accept import accept_handoff
    from maker.executor.protocol.orient import pending_deviation, record_orient
    from maker.executor.protocol.sweep import open_proposals, read_proposals
    from maker.executor.state.lifecycle import start_step
    from maker.store.plan_store import PlanStore

    store = PlanStore(project / "plans")
    start_step(store, 0)
    record_orient(store, 0, "none")
    (project / "hello.txt").write_text("hello\n")
    assert accept_handoff(store, handoff(0, output={"files": ["hello.txt"]},
                                         files_changed=["hello.txt"],
                                         sweep={"considered": ["an empty file"],
                                                "found": ["no farewell yet"]},
                                         proposals=["Add a farewell.txt step"])).status == \
        "awaiting-approval"
    (proposal,) = open_proposals(store)

    def typed(line: str) -> None:
        shell = pexpect.spawn("bash", ["--norc", "--noprofile", "-c", line],
                              cwd=str(project), env={"PATH": path, "HOME": str(home),
                                                     "TERM": "dumb"},
                              encoding="utf-8", timeout=60)
        shell.expect(pexpect.EOF)
        shell.close()
        assert shell.exitstatus == 0, f"{line}: {shell.before}"

    typed("maker step approve 0")
    assert store.load_step(0).status == "complete"
    typed(f"maker proposal accept {proposal['id']}")
    (decided,) = read_proposals(store)
    assert decided["status"] == "accepted" and open_proposals(store) == []

    # (maker here as in the person's shell: their home holds the key that sealed step 0)
    kept = {k: os.environ.get(k) for k in ("HOME", "XDG_DATA_HOME")}
    os.environ["HOME"] = str(home)
    os.environ.pop("XDG_DATA_HOME", None)
    try:
        start_step(store, 1)
        record_orient(store, 1, "major", what="hello.txt says hi, not hello",
                      revised="Check that hello.txt greets")
    finally:
        for key, value in kept.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert pending_deviation(store.load_step(1)) is not None
    typed("maker step approve 1")
    record = store.load_step(1)
    assert pending_deviation(record) is None and record.status == "in-progress"
    assert record.meta["deviation"]["status"] == "approved"
    assert record.meta["revised_task"] == "Check that hello.txt greets"
