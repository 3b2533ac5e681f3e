"""``maker plan write | lint | show`` through click's CliRunner: arguments in, exit code out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from harness.step_plans import step_data
from maker.cli.main import cli

TASK = "Add a health endpoint"


def _step(n: int, last: bool = False, **changes: Any) -> dict[str, Any]:
    return step_data(n, -1 if last else n + 1, **{
        "title": f"Part {n}", "task_description": f"Implement part {n} and run its tests.",
        "primary_tools": ["Read", "Edit"], "fallback_tools": ["Bash"],
        "input_variables": [f"step_{n - 1}_output.files"] if n else [],
        "output_schema": "{files: list}", **changes})


def _plan_text(count: int = 3, task: str | None = TASK, **changes: Any) -> str:
    steps = [_step(n, last=n == count - 1) for n in range(count)]
    steps[0].update(changes)
    data: dict[str, Any] = {"reasoning": "One part at a time, tests after each."}
    if task is not None:
        data["task"] = task
    data["plan"] = steps
    return yaml.safe_dump(data, sort_keys=False)


GOOD = _plan_text()
BAD = _plan_text(primary_tools=["Bsh"], input_variables=["step_2_output.files"])


@pytest.fixture(autouse=True)
def _in_a_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "project")


def run(args: list[str], stdin: str | bytes | None = None) -> Result:
    result = CliRunner().invoke(cli, args, input=stdin, catch_exceptions=True)
    # Never a traceback: only click's own exits.
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exc_info
    return result


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """Input files in a folder of their own: good.yaml, bad.yaml, empty.yaml, binary.yaml."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "good.yaml").write_text(GOOD, encoding="utf-8")
    (folder / "fenced.md").write_text(f"Here is the plan:\n```yaml\n{GOOD}```\nDone.\n",
                                      encoding="utf-8")
    (folder / "bad.yaml").write_text(BAD, encoding="utf-8")
    (folder / "empty.yaml").write_bytes(b"")
    (folder / "binary.yaml").write_bytes(b"reasoning: \xff\xfe\n")
    (folder / "prose.txt").write_text("I could not make a plan.", encoding="utf-8")
    (folder / "adir").mkdir()
    return folder


PLANS = Path("plans")  # relative to the project (the cwd)


# -- maker plan write ----------------------------------------------------------------------

WRITE_CASES = [
    # (args, stdin, exit code, fragment of stdout+stderr)
    (["plan", "write", "{in}/good.yaml"], None, 0, "wrote 3 steps to {project}/plans"),
    (["plan", "write", "{in}/fenced.md"], None, 0, "wrote 3 steps"),
    (["plan", "write", "-"], GOOD, 0, "wrote 3 steps"),
    (["plan", "write", "-"], GOOD.encode("utf-8"), 0, "(PLAN.md and steps/)"),
    (["plan", "write", "{in}/bad.yaml"], None, 1, "the plan has 2 problems; nothing was written"),
    (["plan", "write", "{in}/bad.yaml"], None, 1,
     "- step 0: primary_tools: unknown tool 'Bsh' (fix: did you mean 'Bash'?"),
    (["plan", "write", "{in}/bad.yaml"], None, 1,
     "- step 0: input_variables: 'step_2_output.files' is produced by step 2, which comes later"),
    (["plan", "write", "{in}/empty.yaml"], None, 1, "yaml: the answer is empty"),
    (["plan", "write", "-"], "", 1, "yaml: the answer is empty"),
    (["plan", "write", "{in}/binary.yaml"], None, 1, "not UTF-8 (byte 0xff at offset 11)"),
    (["plan", "write", "{in}/prose.txt"], None, 1,
     "plan: the plan must be a mapping with `reasoning` and `plan`, got str"),
    (["plan", "write", "{in}/adir"], None, 2, "cannot read"),
    (["plan", "write", "{in}/missing.yaml"], None, 2, "No such file"),
    (["plan", "write"], None, 2, "Missing argument"),
    (["plan", "write", "{in}/good.yaml", "--bogus"], None, 2, "No such option"),
    (["plan", "write", "{in}/good.yaml", "--plans-dir", "{in}/good.yaml"], None, 2,
     "is a file"),
]


@pytest.mark.parametrize(("args", "stdin", "code", "fragment"), WRITE_CASES)
def test_plan_write(files, args, stdin, code, fragment):
    project = Path.cwd()
    args = [a.format(**{"in": files}) for a in args]
    result = run(args, stdin)
    assert result.exit_code == code, result.output
    assert fragment.format(project=project) in result.output
    if code != 0:
        assert not (project / "plans" / "steps").exists(), "a rejected plan wrote files"


def test_problems_go_to_stderr_and_the_summary_to_stdout(files):
    bad = run(["plan", "write", str(files / "bad.yaml")])
    assert bad.stdout == "" and "unknown tool 'Bsh'" in bad.stderr
    good = run(["plan", "write", str(files / "good.yaml")])
    assert good.stderr == "" and good.stdout.startswith("wrote 3 steps")


def test_write_stores_the_steps_and_the_task(files):
    run(["plan", "write", str(files / "good.yaml")])
    steps = sorted((PLANS / "steps").glob("*.md"))
    assert [p.name for p in steps] == ["00-part-0.md", "01-part-1.md", "02-part-2.md"]
    assert TASK in (PLANS / "PLAN.md").read_text(encoding="utf-8")


def test_task_option_wins_over_the_yaml(files):
    run(["plan", "write", str(files / "good.yaml"), "--task", "Something else"])
    shown = json.loads(run(["plan", "show", "--json"]).stdout)
    assert shown["task"] == "Something else"


def test_no_task_text_is_noted(tmp_path):
    source = tmp_path / "notask.yaml"
    source.write_text(_plan_text(task=None), encoding="utf-8")
    result = run(["plan", "write", str(source)])
    assert result.exit_code == 0
    assert "note: no task text" in result.stderr


def test_a_second_write_archives_the_first(files):
    run(["plan", "write", str(files / "good.yaml")])
    result = run(["plan", "write", str(files / "good.yaml")])
    assert result.exit_code == 0
    assert "archived the previous plan to" in result.stdout
    archived = list((PLANS / "archive").iterdir())
    assert len(archived) == 1 and (archived[0] / "PLAN.md").exists()


def test_a_plan_with_progress_is_replaced_only_when_asked(files):
    from harness.step_plans import handoff
    from maker.executor.acceptance.accept import accept_handoff
    from maker.executor.acceptance.approval import approve_step
    from maker.executor.protocol.orient import record_orient
    from maker.executor.state.lifecycle import start_step
    from maker.store.plan_store import PlanStore

    run(["plan", "write", str(files / "good.yaml")])
    store = PlanStore(PLANS)
    start_step(store, 0, session_id="s")
    record_orient(store, 0, "none")
    accept_handoff(store, handoff(0, output={"files": []}, files_changed=[]))
    approve_step(store, 0, "user (typed)")
    before = (PLANS / "PLAN.md").read_text(encoding="utf-8")
    refused = run(["plan", "write", str(files / "good.yaml")])
    assert refused.exit_code == 1, refused.stdout
    assert "has progress (1 complete)" in refused.stderr
    assert f"--replace {files / 'good.yaml'}" in refused.stderr and "Nothing was written" \
        in refused.stderr
    assert (PLANS / "PLAN.md").read_text(encoding="utf-8") == before
    assert not (PLANS / "archive").exists() and store.load_step(0).status == "complete"
    replaced = run(["plan", "write", "--replace", str(files / "good.yaml")])
    assert replaced.exit_code == 0 and "archived the previous plan to" in replaced.stdout
    assert PlanStore(PLANS).load_step(0).status == "pending"


def test_a_rejected_plan_leaves_the_stored_one_alone(files):
    run(["plan", "write", str(files / "good.yaml")])
    before = (PLANS / "PLAN.md").read_text(encoding="utf-8")
    assert run(["plan", "write", str(files / "bad.yaml")]).exit_code == 1
    assert (PLANS / "PLAN.md").read_text(encoding="utf-8") == before
    assert not (PLANS / "archive").exists()


@pytest.mark.parametrize("how", ["option", "env", "project-env"])
def test_where_the_plan_goes(files, tmp_path, monkeypatch, how):
    args = ["plan", "write", str(files / "good.yaml")]
    if how == "option":
        target = tmp_path / "elsewhere"
        args += ["--plans-dir", str(target)]
    elif how == "env":
        target = tmp_path / "from-env"
        monkeypatch.setenv("MAKER_PLANS_DIR", str(target))
    else:
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "other-project"))
        target = tmp_path / "other-project" / "plans"
    result = run(args)
    assert result.exit_code == 0, result.output
    assert f"to {target.resolve()}" in result.stdout
    assert (target / "PLAN.md").exists()


# -- maker plan lint -----------------------------------------------------------------------

LINT_CASES = [
    (["plan", "lint", "{in}/good.yaml"], None, 0, "ok: 3 steps"),
    (["plan", "lint", "-"], GOOD, 0, "ok: 3 steps"),
    (["plan", "lint", "-"], _plan_text(1), 0, "ok: 1 step\n"),
    (["plan", "lint", "{in}/bad.yaml"], None, 1, "the plan has 2 problems:"),
    (["plan", "lint", "{in}/bad.yaml"], None, 1, "unknown tool 'Bsh'"),
    (["plan", "lint", "{in}/binary.yaml"], None, 1, "not UTF-8"),
    (["plan", "lint", "{in}/empty.yaml"], None, 1, "empty"),
    (["plan", "lint", "{in}/adir"], None, 2, "cannot read"),
    (["plan", "lint"], None, 1, "no plan in"),
]


@pytest.mark.parametrize(("args", "stdin", "code", "fragment"), LINT_CASES)
def test_plan_lint(files, args, stdin, code, fragment):
    result = run([a.format(**{"in": files}) for a in args], stdin)
    assert result.exit_code == code, result.output
    assert fragment in result.output


def test_lint_without_a_file_checks_the_stored_plan(files):
    run(["plan", "write", str(files / "good.yaml")])
    assert run(["plan", "lint"]).output == "ok: 3 steps\n"


def test_lint_catches_a_hand_edit_that_breaks_the_plan(files):
    run(["plan", "write", str(files / "good.yaml")])
    path = PLANS / "steps" / "02-part-2.md"
    text = path.read_text(encoding="utf-8").replace("- step_1_output.files",
                                                    "- step_7_output.files")
    path.write_text(text, encoding="utf-8")
    result = run(["plan", "lint"])
    assert result.exit_code == 1
    assert "step 2: input_variables: 'step_7_output.files' reads 'step_7_output', but there " \
           "is no step 7" in result.stderr


def test_lint_reports_a_broken_step_file(files):
    run(["plan", "write", str(files / "good.yaml")])
    (PLANS / "steps" / "01-part-1.md").write_text("no front matter", encoding="utf-8")
    result = run(["plan", "lint"])
    assert result.exit_code == 1
    assert "01-part-1.md: no YAML front matter" in result.stderr


# -- maker plan show -----------------------------------------------------------------------


def test_show(files):
    run(["plan", "write", str(files / "good.yaml")])
    result = run(["plan", "show"])
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith(f"Task: {TASK}\n")
    assert "Reasoning:\n  One part at a time, tests after each." in out
    assert "Steps (3):" in out
    assert "  1. Part 1  (pending)\n     depends on: 0\n     tools: Read, Edit, Bash (fallback)\n" \
           "     next: step 2\n" in out
    assert "     next: end\n" in out


def test_show_json(files):
    run(["plan", "write", str(files / "good.yaml")])
    data = json.loads(run(["plan", "show", "--json"]).stdout)
    assert data["task"] == TASK
    assert data["reasoning"].startswith("One part at a time")
    assert [s["step"] for s in data["steps"]] == [0, 1, 2]
    first = data["steps"][0]
    assert first["status"] == "pending" and first["depends_on"] == []
    assert first["path"].endswith("00-part-0.md")
    assert data["steps"][1]["input_variables"] == ["step_0_output.files"]


def test_show_conditional_step(tmp_path):
    steps = [_step(0), _step(1, task_type="conditional_step", next_step_sequence_number=-2,
                             output_schema="{next_step: int}"),
             _step(2, last=True, input_variables=["step_0_output.files"])]
    source = tmp_path / "cond.yaml"
    source.write_text(yaml.safe_dump({"reasoning": "r", "plan": steps}), encoding="utf-8")
    assert run(["plan", "write", str(source)]).exit_code == 0
    out = run(["plan", "show"]).stdout
    assert "  1. Part 1 [conditional]  (pending)" in out
    assert "next: decided at run time by this step's output" in out


def test_show_without_a_plan():
    result = run(["plan", "show"])
    assert result.exit_code == 1
    assert "no plan in" in result.stderr


@pytest.mark.parametrize("args", [["plan", "--help"], ["plan", "write", "--help"],
                                  ["plan", "lint", "--help"], ["plan", "show", "--help"]])
def test_help(args):
    result = run(args)
    assert result.exit_code == 0 and "Usage:" in result.output
