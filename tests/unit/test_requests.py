"""Saved /maker: requests and the command-line entry points that read them."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.step_plans import complete, linear
from maker.cli.main import cli
from maker.core.paths import data_dir
from maker.store.requests import load_request, parse_command, save_request


@pytest.fixture(autouse=True)
def plugin_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                verification_off: None) -> Path:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


@pytest.mark.parametrize(
    ("prompt", "parsed"),
    [
        ("/maker:plan add login", ("plan", "add login")),
        ("  /maker:step 3 be quick\nand careful", ("step", "3 be quick\nand careful")),
        ("/maker:status", ("status", "")),
        ("/maker:plan\n\nmulti\nline", ("plan", "multi\nline")),
        ("/plan not ours", None),
        ("please /maker:plan", None),
        ("/maker:", None),
    ],
)
def test_parse_command(prompt: str, parsed: tuple[str, str] | None) -> None:
    assert parse_command(prompt) == parsed


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_round_trips_verbatim(text: str) -> None:
    body = text.strip()
    save_request("s1", f"/maker:plan {text}")
    assert load_request("s1", "plan") == body


def test_requests_are_per_session_and_per_command(plugin_data: Path) -> None:
    save_request("a", "/maker:plan one")
    save_request("b", "/maker:step 2")
    assert load_request("a", "plan") == "one"
    assert load_request("a", "step") is None
    assert load_request("b", "step") == "2"
    assert save_request("a", "just chatting") is None
    assert load_request("a", "plan") == "one"  # a non-maker prompt changes nothing
    assert data_dir() == plugin_data


def test_stale_requests_are_ignored(plugin_data: Path) -> None:
    path = save_request("s", "/maker:step 4")
    assert path is not None
    data = json.loads(path.read_text())
    path.write_text(json.dumps(dict(data, saved_at=time.time() - 3600)))
    assert load_request("s", "step") == "4"
    assert load_request("s", "step", max_age_s=300) is None


def test_request_prints_the_text_verbatim() -> None:
    text = 'add "remember me"; it\'s `x` $(touch P) & y\nline two'
    save_request("s", f"/maker:plan {text}")
    result = CliRunner().invoke(cli, ["request", "plan", "--session", "s"])
    assert result.exit_code == 0
    assert result.output == f"<user-text>\n{text}\n</user-text>\n"
    missing = CliRunner().invoke(cli, ["request", "plan", "--session", "nobody"])
    assert missing.exit_code == 0 and "<command-args>" in missing.output


def begin(session: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["step", "begin", "--session", session, *extra])
    assert result.exit_code == 0, result.output  # never aborts the slash command
    return result.output


def test_begin_starts_the_named_step_with_the_users_notes(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    complete(store, 1)
    save_request("s", "/maker:step 2 use the 'fast' path; $(rm -rf /)")
    out = begin("s")
    assert out.startswith("STARTED: step 2")
    assert "<user-notes>\nuse the 'fast' path; $(rm -rf /)\n</user-notes>" in out
    assert 'prompt "Execute maker step 2."' in out and "run_in_background: false" in out
    assert store.load().get(2).status == "in-progress"


def test_begin_asks_the_user_about_unmet_dependencies_and_starts_nothing(
        tmp_path: Path) -> None:
    """Seed 004's gate_blocked (docs/architecture.md#the-seeds): unmet depends_on asks the user
    whether to proceed (the
    question is the user's to answer: ``tests/unit/test_blocked.py``)."""
    store = linear(tmp_path, 3)
    save_request("s", "/maker:step 3")
    out = begin("s")
    assert out.startswith("ASK:") and "step 2" in out and "STEP_BLOCKED" in out
    ask = json.loads(re.search(r"^ask: (\{.*\})$", out, re.M).group(1))
    options = [o["label"] for o in ask["questions"][0]["options"]]
    assert options == ["Start step 3 anyway", "Do not start step 3"]
    assert "(step 2 is pending)?" in ask["questions"][0]["question"]
    assert store.load().get(3).status == "pending"


def test_begin_with_force(tmp_path: Path) -> None:
    store = linear(tmp_path, 3)
    save_request("s", "/maker:step 3 --force")
    assert "with --force (recorded)" in begin("s")
    assert store.load().get(3).meta["forced"] is True


def test_begin_without_a_saved_request_asks_for_the_number(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    out = begin("s")
    assert out.startswith("UNREAD:") and "--step N" in out
    assert store.load().get(1).status == "pending"
    assert begin("s", "--next").startswith("STARTED: step 1")


def test_begin_without_a_plan(tmp_path: Path) -> None:
    save_request("s", "/maker:step")
    out = begin("s")
    assert out.startswith("REFUSED:") and "/maker:plan" in out


def test_reset_request(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    complete(store, 1)
    save_request("s", "/maker:reset 1")
    result = CliRunner().invoke(cli, ["step", "reset-request", "--session", "s"])
    assert result.exit_code == 0 and "RESET: step 1 was complete" in result.output
    assert store.load().get(1).status == "pending"
    save_request("s", "/maker:reset nine")
    result = CliRunner().invoke(cli, ["step", "reset-request", "--session", "s"])
    assert result.exit_code == 0 and "REFUSED" in result.output


def test_the_planner_prompt_is_the_plugins_agent_file() -> None:
    from maker.prompts import load_prompt

    agent = (Path(__file__).resolve().parents[2] / "agents" / "planner.md").read_text()
    prompt = load_prompt("planner")
    assert prompt.startswith("maker-agent: planner")
    assert prompt.strip() in agent and "tools: Read, Grep, Glob" not in prompt


def test_a_second_session_cannot_take_over_a_step_in_progress(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    save_request("A", "/maker:step 1")
    save_request("B", "/maker:step")  # no step named: not the user's consent to take it
    assert begin("A").startswith("STARTED: step 1")
    out = begin("B")
    assert out.startswith("REFUSED:") and "another Claude Code session (A)" in out
    assert "typing /maker:step 1 in this session" in out  # how the user takes it over
    assert store.read_active()["session_id"] == "A"  # type: ignore[index]
    assert "resumed" in begin("A")  # the owner may ask again
    # A number only the model supplied (the request unread) is not the user's consent.
    assert begin("C", "--step", "1").startswith("REFUSED:")


def test_the_user_typing_the_step_takes_it_over(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    save_request("A", "/maker:step 1")
    assert begin("A").startswith("STARTED: step 1")
    save_request("B", "/maker:step 1")
    out = begin("B")
    assert out.startswith("STARTED: step 1 (Step number 1) taken over (the user asked for "
                          "step 1 here; session A had it).")
    assert store.read_active()["session_id"] == "B"  # type: ignore[index]
    save_request("A", "/maker:step")
    assert begin("A").startswith("REFUSED:")  # the old owner no longer has it


@pytest.mark.parametrize(("text", "parsed"), [
    ("3", (3, False, "")),
    ("3 be quick", (3, False, "be quick")),
    ("step 3", (3, False, "")),
    ("#3: with care", (3, False, "with care")),
    ("3 --force notes", (3, True, "notes")),
    ("--force", (None, True, "")),
    ("", (None, False, "")),
    ("  \n ", (None, False, "")),
    # Seed 004's own phrasings.
    ("execute step 3", (3, False, "")),
    ("Execute step 3: with care", (3, False, "with care")),
    ("run step 2 --force", (2, True, "")),
    ("do 4 quickly", (4, False, "quickly")),
    ("the next step", (None, False, "")),
    ("next step, and be careful", (None, False, "and be careful")),
    ("execute the next step --force", (None, True, "")),
    ("next", (None, False, "")),
])
def test_step_arguments(text: str, parsed: tuple[int | None, bool, str]) -> None:
    from maker.store.requests import split_step_args

    assert split_step_args(text) == parsed


# These used to start the next ready step with the text as its notes.
@pytest.mark.parametrize(("text", "message"), [
    ("two", "`two` is not a step number: use /maker:step 2, or /maker:step with no argument "
            "for the next ready step. Notes follow the step number (/maker:step 2 your notes)."),
    ("abc", "`abc` is not a step number: use /maker:step N, or /maker:step with no argument "
            "for the next ready step. Notes follow the step number (/maker:step N your notes)."),
    ("2abc", "`2abc` is not a step number"),
    ("30cm of rope", "`30cm` is not a step number"),
    ("² weird", "`²` is not a step number"),
    ("--force notes", "`notes` is not a step number"),
    # A verb, and then no step: refused, not the next ready step with it as notes.
    ("execute the tests", "`execute` is not a step number"),
    ("run step three", "`run` is not a step number"),
    ("nextcloud setup", "`nextcloud` is not a step number"),
])
def test_step_arguments_that_are_not_a_step_number_are_refused(text: str, message: str) -> None:
    from maker.errors import RequestError
    from maker.store.requests import split_step_args

    with pytest.raises(RequestError) as caught:
        split_step_args(text)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("typed", ["two", "abc", "2abc"])
def test_a_step_request_that_names_no_step_starts_nothing(tmp_path: Path, typed: str) -> None:
    store = linear(tmp_path, 2)
    save_request("A", f"/maker:step {typed}")
    out = begin("A")
    assert out.startswith(f"REFUSED: `{typed}` is not a step number")
    assert out.rstrip().endswith("STEP_BLOCKED.")
    assert store.read_active() is None
    assert {r.status for r in store.load().steps} == {"pending"}


# -- the session option: one decorator, every spelling ------------------------------------

SPELLINGS = [(["--session", "s"], {}), (["--session-id", "s"], {}),
             ([], {"MAKER_SESSION_ID": "s"}), ([], {"CLAUDE_CODE_SESSION_ID": "s"}),
             ([], {"MAKER_SESSION_ID": "s", "CLAUDE_CODE_SESSION_ID": "other"})]
SESSION_COMMANDS = [["request"], ["step", "begin"], ["step", "reset-request"],
                    ["step", "start"]]


@pytest.mark.parametrize("path", SESSION_COMMANDS, ids=" ".join)
def test_every_session_command_takes_both_spellings_and_both_variables(
        path: list[str]) -> None:
    command: click.Command | None = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(command), name)
    assert command is not None
    [option] = [p for p in command.params if p.name == "session_id"]
    assert option.opts == ["--session", "--session-id"]
    assert option.envvar == ["MAKER_SESSION_ID", "CLAUDE_CODE_SESSION_ID"]


@pytest.mark.parametrize(("args", "env"), SPELLINGS)
def test_request_reads_the_session_however_it_is_given(
        args: list[str], env: dict[str, str]) -> None:
    save_request("s", "/maker:plan add login")
    result = CliRunner().invoke(cli, ["request", "plan", *args], env=env)
    assert result.output == "<user-text>\nadd login\n</user-text>\n"


@pytest.mark.parametrize(("args", "env"), SPELLINGS)
def test_step_start_records_the_session_however_it_is_given(
        tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    store = linear(tmp_path, 2)
    result = CliRunner().invoke(cli, ["step", "start", *args], env=env)
    assert result.exit_code == 0, result.output
    assert store.load().get(1).meta["started_by"] == "s"
    assert store.read_active()["session_id"] == "s"  # type: ignore[index]
