"""The CLI a person meets: whole summaries, the model's commands out of sight, and a
suggestion for a typo."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from maker.cli.main import cli

HIDDEN = {("request",), ("step", "begin"), ("step", "outcome"), ("step", "reset-request")}


@pytest.mark.parametrize("group", [[], ["step"], ["plan"], ["handoff"]])
def test_help_lists_whole_summaries_and_no_model_commands(group: list[str]) -> None:
    out = CliRunner().invoke(cli, [*group, "--help"])
    assert out.exit_code == 0, out.output
    listed = out.output.split("Commands:", 1)[1]
    assert "…" not in listed and "..." not in listed
    for path in HIDDEN:
        if list(path[:-1]) == group:
            assert f"  {path[-1]} " not in listed


@pytest.mark.parametrize("path", sorted(HIDDEN))
def test_the_models_commands_still_run(path: tuple[str, ...]) -> None:
    assert CliRunner().invoke(cli, [*path, "--help"]).exit_code == 0


@pytest.mark.parametrize(("args", "hint"), [
    (["stauts"], "No such command 'stauts'. Did you mean 'status'?"),
    (["step", "aprove", "1"], "No such command 'aprove'. Did you mean 'approve'?"),
    (["plan", "wirte"], "Did you mean 'write'?"),
    (["zzzz"], "No such command 'zzzz'."),
])
def test_a_typo_gets_a_suggestion(args: list[str], hint: str) -> None:
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2 and hint in out.output


def test_step_help_describes_the_whole_group() -> None:
    out = CliRunner().invoke(cli, ["step", "--help"]).output
    assert "approve or reject" in out and "start" in out and "reset" in out
