"""maker's own commands its agents may run: one list, and every guard reads it.

The planner's and reviewer's read-only check, the step's tool list and the executor's
guard once each kept a list of their own, with different contents (`maker plan show`
passed the guard but not the tool list; `maker handoff check` passed the tool list but
not the read-only check). Each command of the one list passes each check that should let
it through, and the guard's message names exactly the commands it lets through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.tools.command.maker_commands import EXECUTOR_COMMANDS, READ_COMMANDS, listed
from maker.tools.command.readonly import why_not_read_only
from maker.tools.guards.guard import bash_refusal
from maker.tools.guards.permissions import permits

STATE_MOVERS = ["maker step start 2", "maker step approve 1", "maker handoff accept h.yaml",
                "maker plan write -", "maker request x", "maker plan adopt"]


def _line(command: tuple[str, ...]) -> str:
    return "maker " + " ".join(command) + (" 1" if command in (("verify",), ("context",))
                                           else "")


def _guard(command: str, tmp_path: Path) -> str | None:
    return bash_refusal(command, cwd=tmp_path, plans_root=tmp_path / "plans",
                        data_dirs=(tmp_path / "data",), home=tmp_path)


def test_the_reads_are_the_executors_commands_but_verify_orient_and_land() -> None:
    # (land: a step run beside others brings its change back; code checks every file)
    assert set(EXECUTOR_COMMANDS) - set(READ_COMMANDS) == {("verify",), ("orient",),
                                                           ("land",)}


@pytest.mark.parametrize("command", READ_COMMANDS, ids=" ".join)
def test_a_read_command_is_read_only(command: tuple[str, ...]) -> None:
    assert why_not_read_only(_line(command)) is None


@pytest.mark.parametrize("command", EXECUTOR_COMMANDS, ids=" ".join)
def test_an_executor_command_passes_the_tool_list_and_the_guard(
        command: tuple[str, ...], tmp_path: Path) -> None:
    line = _line(command)
    assert permits(["Read"], "Bash", {"command": line})
    assert _guard(line, tmp_path) is None


@pytest.mark.parametrize("line", STATE_MOVERS)
def test_a_command_that_moves_the_state_passes_no_check(line: str, tmp_path: Path) -> None:
    assert why_not_read_only(line) is not None
    assert not permits(["Read"], "Bash", {"command": line})
    assert _guard(line, tmp_path) is not None


def test_verify_is_not_read_only() -> None:
    assert why_not_read_only("maker verify --step 1") is not None


def test_the_guards_message_names_the_commands_it_lets_through(tmp_path: Path) -> None:
    reason = _guard("maker step start 2", tmp_path)
    assert reason is not None and listed(EXECUTOR_COMMANDS) in reason
    assert "`maker verify --step N`" in reason and "`maker plan lint`" in reason
