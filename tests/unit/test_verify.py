"""Verification: command detection, running real tiny commands, evidence, ``maker verify``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.step_plans import step_spec
from maker.cli.main import cli
from maker.core.models import Plan
from maker.errors import PlanFileError, StepNotFoundError, VerificationError
from maker.store.plan_store import PlanStore
from maker.verify.check_run import TAIL_BYTES, TAIL_LINES, TIMEOUT_EXIT_CODE
from maker.verify.detect import ENV_VARS, VerifyCommand, detect_commands
from maker.verify.runner import (
    Progress,
    VerificationRun,
    evidence_path,
    recorded_evidence,
    run_verification,
)

NO_DETECT = {var: "" for var in ENV_VARS.values()}


def env_with(**cmds: str) -> dict[str, str]:
    """The process environment with every *_CMD set: the ones given, the rest skipped."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS.values()}
    env.update(NO_DETECT)
    env.update({f"{k.upper()}_CMD": v for k, v in cmds.items()})
    return env


def make_store(project: Path, steps: int = 3) -> PlanStore:
    plan = Plan(reasoning="r", task="t", steps=[
        step_spec(n, n + 1 if n + 1 < steps else -1, title=f"step {n}", task_description="do")
        for n in range(steps)])
    store = PlanStore(project / "plans")
    store.write_plan(plan)
    return store


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


# -- detection -------------------------------------------------------------------------

LAYOUTS: list[tuple[str, dict[str, str], list[tuple[str, str]]]] = [
    ("empty", {}, []),
    ("python with ruff, mypy, pytest",
     {"pyproject.toml": "[tool.ruff]\nline-length = 100\n[tool.mypy]\nfiles = ['src']\n"
                        "[tool.pytest.ini_options]\naddopts = '-q'\n"},
     [("format", "ruff format ."), ("lint", "ruff check ."), ("build", "mypy"),
      ("test", "-m pytest -q")]),
    ("python, tests dir only", {"pyproject.toml": "[project]\nname='x'\n", "tests/t.py": ""},
     [("test", "-m pytest -q")]),
    ("python without tests", {"pyproject.toml": "[project]\nname='x'\n"}, []),
    ("python with black and flake8",
     {"pyproject.toml": "[tool.black]\n", "setup.cfg": "[flake8]\nmax-line-length=99\n",
      "conftest.py": ""},
     [("format", "black ."), ("lint", "flake8"), ("test", "-m pytest -q")]),
    ("ruff.toml, mypy without files", {"setup.py": "", "ruff.toml": "", "mypy.ini": "[mypy]\n"},
     [("format", "ruff format ."), ("lint", "ruff check ."), ("build", "mypy .")]),
    ("node npm",
     {"package.json": json.dumps({"scripts": {"lint": "eslint .", "build": "tsc",
                                              "test": "vitest run", "format": "prettier -w ."}})},
     [("format", "npm run format"), ("lint", "npm run lint"), ("build", "npm run build"),
      ("test", "npm test")]),
    ("node placeholder test script",
     {"package.json": json.dumps({"scripts": {
         "test": 'echo "Error: no test specified" && exit 1'}})}, []),
    ("node pnpm typecheck",
     {"package.json": json.dumps({"scripts": {"typecheck": "tsc", "test": "jest"}}),
      "pnpm-lock.yaml": ""},
     [("build", "pnpm run typecheck"), ("test", "pnpm run test")]),
    ("node broken package.json", {"package.json": "{not json"}, []),
    ("rust", {"Cargo.toml": "[package]\n"},
     [("format", "cargo fmt"), ("lint", "cargo clippy --all-targets"),
      ("build", "cargo build"), ("test", "cargo test")]),
    ("go", {"go.mod": "module x\n"},
     [("format", "gofmt -w ."), ("lint", "go vet ./..."), ("build", "go build ./..."),
      ("test", "go test ./...")]),
    ("makefile", {"Makefile": "CC := gcc\nbuild:\n\tcc x.c\ntest: build\n\t./t\n"},
     [("build", "make build"), ("test", "make test")]),
    ("makefile check target", {"makefile": "check:\n\ttrue\nlint:\n\ttrue\n"},
     [("lint", "make lint"), ("test", "make check")]),
    ("go plus makefile: go wins", {"go.mod": "", "Makefile": "test:\n\ttrue\n"},
     [("format", "gofmt -w ."), ("lint", "go vet ./..."), ("build", "go build ./..."),
      ("test", "go test ./...")]),
    ("node lint, makefile test",
     {"package.json": json.dumps({"scripts": {"lint": "eslint ."}}),
      "Makefile": "test:\n\ttrue\n"},
     [("lint", "npm run lint"), ("test", "make test")]),
]


@pytest.mark.parametrize("name,files,expected", LAYOUTS, ids=[x[0] for x in LAYOUTS])
def test_detection_table(project: Path, name: str, files: dict[str, str],
                         expected: list[tuple[str, str]]) -> None:
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    env = {"PATH": os.environ.get("PATH", "")}
    found = detect_commands(project, env)
    assert [c.kind for c in found] == [k for k, _ in expected]
    for cmd, (_, text) in zip(found, expected, strict=True):
        assert cmd.command.endswith(text), (cmd.command, text)
        assert cmd.source


def test_python_tools_come_from_the_project_virtualenv(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    for name in ("python", "ruff"):
        (project / ".venv" / "bin" / name).write_text("")
    found = {c.kind: c.command for c in detect_commands(project, {"PATH": ""})}
    assert found == {"format": ".venv/bin/ruff format .", "lint": ".venv/bin/ruff check .",
                     "test": ".venv/bin/python -m pytest -q"}


def test_tool_not_on_path_runs_as_a_module(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ruff]\n")
    found = detect_commands(project, {"PATH": ""})
    assert found[0].command == "python3 -m ruff format ."


def test_env_overrides_and_empty_skips(project: Path) -> None:
    (project / "go.mod").write_text("module x\n")
    env = {"TEST_CMD": "make it-so", "LINT_CMD": "", "PATH": ""}
    found = detect_commands(project, env)
    assert found == [
        VerifyCommand("format", "gofmt -w .", "go.mod"),
        VerifyCommand("build", "go build ./...", "go.mod"),
        VerifyCommand("test", "make it-so", "env TEST_CMD"),
    ]


def test_env_only(project: Path) -> None:
    assert detect_commands(project, {"BUILD_CMD": "true", "FORMAT_CMD": "  "}) == [
        VerifyCommand("build", "true", "env BUILD_CMD")]


def test_nothing_known(project: Path) -> None:
    assert detect_commands(project, {}) == []


# -- running ---------------------------------------------------------------------------


def test_all_pass_in_order_recorded_and_read_back(project: Path) -> None:
    store = make_store(project)
    events: list[Progress] = []
    env = env_with(format="true", lint="echo linted", build="true", test="echo tests ok")
    run = run_verification(store, project, step=1, progress=events.append, env=env)
    assert run.passed and run.status == "passed"
    assert [(e.kind, e.command, e.exit_code) for e in run.commands] == [
        ("format", "true", 0), ("lint", "echo linted", 0), ("build", "true", 0),
        ("test", "echo tests ok", 0)]
    assert run.commands[3].output_tail == "tests ok"
    assert all(e.duration_s >= 0 for e in run.commands)
    assert run.not_run == []
    assert [(p.event, p.index, p.total) for p in events] == [
        (ev, i, 4) for i in range(1, 5) for ev in ("start", "done")]
    assert run.finished_at.endswith("Z") and run.started_at <= run.finished_at

    path = evidence_path(store, 1)
    assert path == project / "plans" / ".maker" / "evidence" / "step-01.json"
    assert json.loads(path.read_text())["passed"] is True
    back = recorded_evidence(store, 1)
    assert back == run
    assert recorded_evidence(store, 2) is None


def test_stops_after_the_first_failure_and_says_so(project: Path) -> None:
    store = make_store(project)
    env = env_with(format="true", lint="sh -c 'echo x; exit 3'", build="true", test="true")
    run = run_verification(store, project, step=2, env=env)
    assert run.status == "failed" and not run.passed
    assert [(e.kind, e.exit_code) for e in run.commands] == [("format", 0), ("lint", 3)]
    assert run.commands[1].output_tail == "x"
    assert [c.kind for c in run.not_run] == ["build", "test"]
    assert "lint" in run.message and "exited 3" in run.message
    assert "not run: build, test" in run.message
    assert recorded_evidence(store, 2) == run


def test_false_fails(project: Path) -> None:
    run = run_verification(make_store(project), project, env=env_with(test="false"))
    assert run.status == "failed"
    assert run.failed_command is not None and run.failed_command.exit_code == 1
    assert evidence_path(make_store(project), None).name == "last-run.json"


def test_nothing_to_run_is_not_a_pass(project: Path) -> None:
    store = make_store(project)
    run = run_verification(store, project, env=env_with())
    assert run.status == "nothing-to-run"
    assert run.passed is False
    assert run.commands == []
    assert "TEST_CMD" in run.message
    assert recorded_evidence(store, None) == run


def test_runs_in_the_project_dir_with_its_env(project: Path) -> None:
    store = make_store(project)
    env = env_with(test="pwd; echo $MAKER_PROBE")
    env["MAKER_PROBE"] = "probe-value"
    run = run_verification(store, None, env=env)  # default: the plans dir's parent
    assert run.commands[0].output_tail.split("\n") == [str(project.resolve()), "probe-value"]
    assert run.project_dir == str(project)


def test_output_tail_is_bounded(project: Path) -> None:
    store = make_store(project)
    env = env_with(test="i=0; while [ $i -lt 500 ]; do echo line-$i; i=$((i+1)); done")
    tail = run_verification(store, project, env=env).commands[0].output_tail
    lines = tail.split("\n")
    assert len(lines) == TAIL_LINES
    assert lines[-1] == "line-499" and lines[0] == "line-460"

    env = env_with(test="head -c 200000 /dev/zero | tr '\\0' 'a'; echo; echo end")
    tail = run_verification(store, project, env=env).commands[0].output_tail
    assert len(tail.encode()) <= TAIL_BYTES
    assert tail.endswith("end")


def test_timeout_kills_the_command(project: Path) -> None:
    store = make_store(project)
    events: list[Progress] = []
    env = env_with(build="sleep 30", test="true")
    run = run_verification(store, project, env=env, timeout_s=0.5, heartbeat_s=0.1,
                           progress=events.append)
    ev = run.commands[0]
    assert ev.exit_code == TIMEOUT_EXIT_CODE
    assert ev.duration_s < 10
    assert "timed out" in ev.output_tail
    assert [c.kind for c in run.not_run] == ["test"]
    assert any(p.event == "heartbeat" for p in events)


def test_timeout_from_env(project: Path) -> None:
    store = make_store(project)
    env = env_with(test="sleep 30")
    env["MAKER_VERIFY_TIMEOUT"] = "0.3"
    assert run_verification(store, project, env=env).commands[0].exit_code == TIMEOUT_EXIT_CODE
    env["MAKER_VERIFY_TIMEOUT"] = "soon"
    with pytest.raises(VerificationError, match="MAKER_VERIFY_TIMEOUT"):
        run_verification(store, project, env=env)


def test_unknown_step_and_missing_project(project: Path, tmp_path: Path) -> None:
    store = make_store(project)
    with pytest.raises(StepNotFoundError):
        run_verification(store, project, step=42, env=env_with(test="true"))
    with pytest.raises(VerificationError, match="no such directory"):
        run_verification(store, tmp_path / "nope", env=env_with(test="true"))


def test_without_a_plan_nothing_is_written(project: Path) -> None:
    store = PlanStore(project / "plans")
    run = run_verification(store, project, env=env_with(test="true"))
    assert run.passed
    assert not (project / "plans").exists()
    assert recorded_evidence(store, None) is None


def test_broken_record_names_the_file(project: Path) -> None:
    store = make_store(project)
    path = evidence_path(store, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\"status\": \"passed\"}")
    with pytest.raises(PlanFileError, match="step-01.json.*maker verify --step 1"):
        recorded_evidence(store, 1)


def test_run_dict_round_trip() -> None:
    run = VerificationRun(3, "/p", "a", "b", "failed", [], [VerifyCommand("test", "t", "x")],
                          "m")
    assert VerificationRun.from_dict(json.loads(json.dumps(run.to_dict()))) == run


# -- the CLI ---------------------------------------------------------------------------

CLI_CASES = [
    ({"format": "true", "lint": "true", "build": "true", "test": "true"}, [], 0,
     "verification passed"),
    ({"lint": "sh -c 'echo boom; exit 3'", "test": "true"}, [], 1, "boom"),
    ({}, [], 0, "no verification commands known"),
    ({"test": "true"}, ["--step", "2"], 0, "step-02.json"),
    ({"test": "true"}, ["--step", "9"], 1, ""),
]


@pytest.mark.parametrize("cmds,args,code,out", CLI_CASES)
def test_cli(project: Path, monkeypatch: pytest.MonkeyPatch, cmds: dict[str, str],
             args: list[str], code: int, out: str) -> None:
    make_store(project)
    monkeypatch.chdir(project)
    for k, v in env_with(**cmds).items():
        monkeypatch.setenv(k, v)
    result = CliRunner().invoke(cli, ["verify", "--plans-dir", str(project / "plans"), *args])
    assert result.exit_code == code, result.output
    assert out in result.output


def test_cli_progress_lines_and_json(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(project)
    for k, v in env_with(lint="true", test="sh -c 'exit 4'").items():
        monkeypatch.setenv(k, v)
    result = CliRunner().invoke(cli, ["verify", "--plans-dir", str(store.root), "--json"])
    assert result.exit_code == 1
    assert "[1/2] lint: true ..." in result.stderr
    assert "[2/2] test: sh -c 'exit 4' ..." in result.stderr
    assert "FAILED (exit 4)" in result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "failed" and data["passed"] is False
    assert [c["exit_code"] for c in data["commands"]] == [0, 4]
    assert data["recorded"] == str(evidence_path(store, None))


def test_cli_without_a_plan_runs_but_records_nothing(project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in env_with(test="true").items():
        monkeypatch.setenv(k, v)
    result = CliRunner().invoke(cli, ["verify", "--plans-dir", str(project / "plans")])
    assert result.exit_code == 0
    assert "evidence not recorded: no plan in" in result.stdout
    assert not (project / "plans").exists()
