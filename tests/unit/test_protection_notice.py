"""Which protection holds a step executor's Bash, said where a person reads it: ``maker
status`` always; once a session (SessionStart) and once a run (``maker run``) when it is
less than the kernel boundary; and a person's ``boundary: required`` refuses the
executor's Bash where no boundary can be made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import step_spec, write
from maker.cli.main import cli
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.hooks.handlers import HANDLERS
from maker.hooks.protocol import run_hook
from maker.store.plan_store import PlanStore
from maker.tools.box import boundary

KERNEL = boundary.Protection("kernel", "user, mount and PID namespaces, as uid 1000")
NONE = boundary.Protection("guard", "no `unshare` (util-linux) in the system's folders")


@pytest.fixture
def store(plugin_project: Path) -> PlanStore:
    store = write(plugin_project, [step_spec(1, -1, primary_tools=["Read", "Write", "Bash"])])
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    return store


def _as(monkeypatch: pytest.MonkeyPatch, found: boundary.Protection) -> None:
    monkeypatch.setattr(boundary, "protection", lambda **_: found)


def _status(store: PlanStore) -> str:
    shown = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert shown.exit_code == 0, shown.output
    return shown.output


def _session(store: PlanStore) -> dict[str, object]:
    raw = run_hook("session-start", HANDLERS["session-start"], stdin=json.dumps(
        {"session_id": "s2", "cwd": str(store.project), "hook_event_name": "SessionStart",
         "source": "startup"}))
    return json.loads(raw) if raw else {}


def _bash(store: PlanStore, command: str) -> dict[str, object]:
    raw = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps({
        "session_id": "sess-1", "cwd": str(store.project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t1",
        "agent_id": "a1", "agent_type": "maker:step-executor"}))
    out = json.loads(raw) if raw else {}
    return dict(out.get("hookSpecificOutput") or {})


@pytest.mark.parametrize(("found", "setting", "said", "told"), [
    (KERNEL, "", "the kernel boundary (user, mount and PID namespaces, as uid 1000)", False),
    (NONE, "", "the command guard alone: no OS boundary on this machine (no `unshare`", True),
    (KERNEL, "boundary: off\n", "the command guard alone (`boundary: off`", True),
    (NONE, "boundary: required\n", "nothing: plans/settings.yaml requires an OS boundary", True),
])
def test_status_always_and_the_session_when_weaker(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch, found: boundary.Protection,
        setting: str, said: str, told: bool) -> None:
    _as(monkeypatch, found)
    if setting:
        (store.root / "settings.yaml").write_text(setting)
    assert f"a step executor's Bash is held by: {said}" in _status(store)
    message = _session(store).get("systemMessage")
    if told:
        assert isinstance(message, str) and said in message
    else:
        assert message is None


def test_required_refuses_the_executors_bash_without_a_boundary(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    (store.root / "settings.yaml").write_text("boundary: required\n")
    _as(monkeypatch, NONE)
    decided = _bash(store, "ls")
    assert decided["permissionDecision"] == "deny"
    assert "requires an OS boundary" in str(decided["permissionDecisionReason"])
    assert "no `unshare`" in str(decided["permissionDecisionReason"])
    # maker's own plumbing still runs (it runs outside any box)
    assert _bash(store, "maker context 1").get("permissionDecision") == "allow"


def test_with_a_boundary_the_command_runs_boxed_and_is_still_asked(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    _as(monkeypatch, KERNEL)
    decided = _bash(store, "make build")
    assert "permissionDecision" not in decided  # the person's mode decides, on the box
    command = str(dict(decided["updatedInput"])["command"])  # type: ignore[call-overload]
    assert boundary.unwrap(command, store.root, 1) == "make build"
    # sent again as changed (auto mode asks for that): run as sent, nothing changed
    assert _bash(store, command) == {}
    # a read-only command: boxed and allowed (no prompt would have asked)
    read = _bash(store, "ls -la")
    assert read["permissionDecision"] == "allow"
    assert boundary.unwrap(str(dict(read["updatedInput"])["command"]),  # type: ignore[call-overload]
                           store.root, 1) == "ls -la"


def test_settings_name_a_bad_boundary_value(store: PlanStore) -> None:
    from maker.errors import PlanFileError
    from maker.store.settings import load_settings

    (store.root / "settings.yaml").write_text("boundary: sometimes\n")
    with pytest.raises(PlanFileError, match="must be one of auto, required, off"):
        load_settings(store.root)
    (store.root / "settings.yaml").write_text("boundary: off\n")  # (YAML's false)
    assert load_settings(store.root).boundary == "off"


def test_an_executor_with_no_plan_in_sight_is_refused_not_let_through(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative MAKER_PLANS_DIR is read from the project's root, whatever folder the
    call runs in; and where no plan is found, a step executor's call is refused."""
    _as(monkeypatch, NONE)
    (store.project / "sub").mkdir()
    monkeypatch.setenv("MAKER_PLANS_DIR", "plans")
    raw = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps({
        "session_id": "sess-1", "cwd": str(store.project / "sub"),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "touch ../plans/PWNED"}, "tool_use_id": "t1",
        "agent_id": "a1", "agent_type": "maker:step-executor"}))
    assert json.loads(raw)["hookSpecificOutput"]["permissionDecision"] == "deny"
    monkeypatch.setenv("MAKER_PLANS_DIR", str(store.project / "elsewhere"))
    raw = run_hook("pre-tool-use", HANDLERS["pre-tool-use"], stdin=json.dumps({
        "session_id": "sess-1", "cwd": str(store.project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1",
        "agent_id": "a1", "agent_type": "maker:step-executor"}))
    said = json.loads(raw)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny" and "no plan is found" in \
        said["permissionDecisionReason"]


@pytest.mark.parametrize(("found", "setting", "said"), [
    (KERNEL, "", "in a step's box, network: the machine's for a step that can write; none "
                 "(loopback only) for a step whose tools only read and for maker verify's "
                 "checks; /tmp: the step's own"),
    (KERNEL, "network: off\n", "in a step's box, network: none (loopback only), for every "
                               "step and maker verify (`network: off`)"),
    (KERNEL, "network: on\n", "network: the machine's, for every step and maker verify"),
    (NONE, "network: off\n", ""),
    (KERNEL, "boundary: off\nnetwork: off\n", ""),
])
def test_status_names_the_network_and_tmp_of_a_steps_box(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch, found: boundary.Protection,
        setting: str, said: str) -> None:
    _as(monkeypatch, found)
    if setting:
        (store.root / "settings.yaml").write_text(setting)
    shown = _status(store)
    if said:
        assert said in shown
    else:
        assert "in a step's box" not in shown


def test_settings_name_a_bad_network_value(store: PlanStore) -> None:
    from maker.errors import PlanFileError
    from maker.store.settings import load_settings

    (store.root / "settings.yaml").write_text("network: [1]\n")
    with pytest.raises(PlanFileError, match="must be one of auto, on, off"):
        load_settings(store.root)
    for written, read in (("on", "on"), ("off", "off"), ("auto", "auto")):
        (store.root / "settings.yaml").write_text(f"network: {written}\n")  # (YAML's bools)
        assert load_settings(store.root).network == read
