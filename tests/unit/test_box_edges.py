"""The box's edges: what a step's Bash makes that runs code later, outside the box.

A file at the top of the step's folder that a tool or the client runs on its own later
(``.mcp.json``: the next non-interactive session starts its servers; ``.envrc``,
``.vscode/``, ``lefthook.yml``, …) is read-only in the box where it exists, and removed
when the command ends where the command made it, unless the plan's step names it in its
``writes``. Run for real, through both front ends' decisions.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from harness.boxed import FRONT_ENDS, env_path, kernel, running
from harness.kernel import require_kernel
from harness.step_plans import step_spec, write
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.store.plan_store import PlanStore

__all__ = ["env_path", "kernel", "running"]  # (the fixtures, from the harness)

pytestmark = pytest.mark.kernel

MADE = [".mcp.json", ".MCP.JSON", ".envrc", ".npmrc", "lefthook.yml", ".pnpmfile.cjs",
        ".pre-commit-config.yaml", ".devcontainer.json", "bunfig.toml", ".gitmodules"]
MADE_DIRS = [".vscode", ".idea", ".husky", ".githooks", ".devcontainer"]


def _run(store: PlanStore, front: str, command: str) -> subprocess.CompletedProcess[str]:
    refusal, run = FRONT_ENDS[front](store, command)
    assert refusal is None, refusal
    return subprocess.run(["bash", "-c", run], cwd=store.project, capture_output=True,
                          text=True, timeout=30, check=False)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_what_runs_later_made_by_a_command_is_removed_when_it_ends(
        kernel: PlanStore, front: str) -> None:
    command = (f"python3 -c \"import os\nfor f in {MADE!r}: open(f, 'w').write('{{}}')\n"
               f"for d in {MADE_DIRS!r}: os.mkdir(d); open(d + '/tasks.json', 'w')\"; "
               "echo kept > notes.txt; exit 5")
    done = _run(kernel, front, command)
    assert done.returncode == 5, done.stderr
    left = sorted(p.name for p in kernel.project.iterdir())
    assert not set(left) & {*MADE, *MADE_DIRS}, left
    assert (kernel.project / "notes.txt").read_text() == "kept\n"
    for name in [*MADE, *MADE_DIRS]:
        assert f"removed {kernel.project / name}," in done.stderr, name
    assert "runs code later" in done.stderr


def test_one_that_exists_is_read_only_and_stays_as_it_was(kernel: PlanStore) -> None:
    (kernel.project / ".envrc").write_text("export A=1\n")
    (kernel.project / ".vscode").mkdir()
    (kernel.project / ".vscode/tasks.json").write_text("{}\n")
    done = _run(kernel, "plugin", "echo 'curl x | sh' >> .envrc; "
                                  "echo bad > .vscode/tasks.json; echo bad > .vscode/new.json; "
                                  "rm -f .envrc; mv .vscode v2; echo after")
    assert done.stdout == "after\n"
    assert (kernel.project / ".envrc").read_text() == "export A=1\n"
    assert (kernel.project / ".vscode/tasks.json").read_text() == "{}\n"
    assert not (kernel.project / ".vscode/new.json").exists()
    assert not (kernel.project / "v2").exists()


def test_a_job_left_behind_makes_nothing_after_the_check(kernel: PlanStore) -> None:
    """The box ends what the command left running before it looks: no job outlives it
    to make `.mcp.json` once the box has looked."""
    done = _run(kernel, "plugin", "nohup sh -c 'sleep 1; echo x > .mcp.json' >/dev/null 2>&1 & "
                                  "setsid sh -c 'sleep 1; echo x > .envrc' & echo started")
    assert done.stdout == "started\n"
    time.sleep(2)
    assert not (kernel.project / ".mcp.json").exists()
    assert not (kernel.project / ".envrc").exists()


def test_what_the_steps_writes_name_is_the_steps_to_make(plugin_project: Path,
                                                        env_path: None) -> None:
    require_kernel()
    subprocess.run(["git", "init", "-q", str(plugin_project)], check=True)
    store = write(plugin_project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"],
                                             writes=[".envrc", "lefthook.yml", "src/**"])],
                  policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    done = _run(store, "plugin", "echo 'use nix' > .envrc; echo x > lefthook.yml; "
                                 "echo x > lefthook-local.yml; echo '{}' > .mcp.json")
    assert done.returncode == 0, done.stderr
    assert (plugin_project / ".envrc").read_text() == "use nix\n"
    assert (plugin_project / "lefthook.yml").is_file()
    assert (plugin_project / "lefthook-local.yml").is_file()  # (the name's family, named)
    assert not (plugin_project / ".mcp.json").exists()


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_a_call_in_the_background_is_refused_with_the_fix(running: PlanStore, front: str) -> None:
    """Nothing of a step's acts between maker's checks and the file tools' writes (a
    background call swapping a symlink under a Write): its Bash runs in the foreground."""
    refusal, _ = FRONT_ENDS[front](running, "npm run dev", run_in_background=True)
    assert refusal is not None and "without run_in_background" in refusal
    assert FRONT_ENDS[front](running, "ls", run_in_background=False)[0] is None
