"""A step's optional ``component``: the parser's and the linter's checks, the step file's
front matter, and ``maker plan write`` / ``show`` keeping it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness.step_plans import step_data
from maker.cli.main import cli
from maker.errors import PlanFileError
from maker.planner.linter import lint_plan
from maker.planner.parser import parse_plan
from maker.prompts import load_prompt
from maker.store.frontmatter import read_front_matter
from maker.store.plan_store import PlanStore


def plan(*components: Any, **extra: Any) -> dict[str, Any]:
    """A sound chain of steps, step N of ``components[N]`` (None: no component)."""
    steps = [step_data(n, n + 1 if n + 1 < len(components) else -1) for n in
             range(len(components))]
    for s, c in zip(steps, components, strict=True):
        if c is not None:
            s["component"] = c
    return {"reasoning": "Two parts, one after the other.", "plan": steps, **extra}


def messages(raw: Any) -> list[str]:
    return [str(p) for p in lint_plan(raw)]


def test_a_plan_with_and_without_components_is_sound() -> None:
    assert lint_plan(plan(None, None)) == []
    raw = plan("api", "billing-ui", None, "api", "billing_ui2")
    assert lint_plan(raw) == []
    assert [s.component for s in parse_plan(raw).steps] == [
        "api", "billing-ui", None, "api", "billing_ui2"]


@pytest.mark.parametrize(("value", "said", "fix"), [
    ("Billing UI", "must be a short name, got 'Billing UI'", "write `component: billing-ui`"),
    ("api/v2", "got 'api/v2'", "write `component: api-v2`"),
    ("", "got ''", "write a name such as `component: api`"),
    (" ", "got ' '", "write a name such as `component: api`"),
    (5, "got 5", "write a name such as `component: api`"),
    (["api"], "got ['api']", "write a name such as `component: api`"),
    ("x" * 41, "got 'xxxxxxxxx", "at most 40 characters"),
    ("-api", "got '-api'", "write `component: api`"),
])
def test_a_bad_component_names_the_step_and_the_fix(value: Any, said: str, fix: str) -> None:
    raw = plan("api", "api")
    raw["plan"][1]["component"] = value
    (message,) = messages(raw)
    assert message.startswith("step 1: component: ")
    assert said in message and fix in message
    assert "or remove the line, and the step is plan-wide" in message


def test_a_misspelt_component_field_is_named() -> None:
    raw = plan("api", None)
    raw["plan"][1]["componet"] = "api"
    (message,) = messages(raw)
    assert message == ("step 1: componet: is not a step field (fix: did you mean "
                       "`component`?)")


def test_a_component_one_step_names_like_a_shared_one_is_a_likely_typo() -> None:
    (message,) = messages(plan("billing-ui", "billing-ui", "biling-ui", "api"))
    assert message.startswith("step 2: component: 'biling-ui' is named by this step only, "
                              "and steps 0, 1 share 'billing-ui'")
    assert "did you mean `component: billing-ui`?" in message
    # Names that are merely alike, or used by one step each, are parts of their own.
    assert lint_plan(plan("api", "api", "api-v2", "web")) == []
    assert lint_plan(plan("billing-ui", "biling-ui")) == []


def test_a_plan_names_at_most_a_hundred_components() -> None:
    assert lint_plan(plan(*[f"part-{n // 2}" for n in range(200)])) == []
    (message,) = messages(plan(*[f"part-{n // 2}" for n in range(202)]))
    assert message.startswith("component: the plan names 101 components, more than the 100")
    assert "a component is a part several steps share, not one step" in message


def test_the_component_is_kept_in_the_step_file_and_survives_a_reload(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(parse_plan(plan("api", None)))
    first, second = sorted(store.steps_dir.glob("*.md"))
    assert read_front_matter(first)[0]["component"] == "api"
    assert "component" not in read_front_matter(second)[0]  # (a plan without: as before)
    assert store.load().components() == {0: "api", 1: None}
    assert PlanStore(tmp_path / "plans").load().get(0).spec.component == "api"


def test_a_bad_component_edited_into_a_step_file_names_the_file(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(parse_plan(plan("api", None)))
    path = sorted(store.steps_dir.glob("*.md"))[0]
    path.write_text(path.read_text().replace("component: api", "component: Billing UI"))
    with pytest.raises(PlanFileError) as caught:
        PlanStore(tmp_path / "plans").load()
    said = str(caught.value)
    assert path.name in said and "component: must be a short name" in said
    assert "write `component: billing-ui`" in said


def test_plan_write_and_show_keep_the_component(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(plan("api", None, "web"),
                                                       sort_keys=False))
    wrote = CliRunner().invoke(cli, ["plan", "write", "plan.yaml"])
    assert wrote.exit_code == 0, wrote.output
    shown = CliRunner().invoke(cli, ["plan", "show"])
    assert "0. Step number 0  (pending)\n     component: api\n" in shown.output
    assert "1. Step number 1  (pending)\n     depends on: 0\n" in shown.output
    data = json.loads(CliRunner().invoke(cli, ["plan", "show", "--json"]).output)
    assert [s["component"] for s in data["steps"]] == ["api", None, "web"]


def test_the_planner_is_told_what_a_component_is_and_the_linters_rules() -> None:
    rules = load_prompt("planner").split("Rules that the validator enforces:", 1)[1]
    said = rules.split("- `component` (optional):", 1)[1].split("\n- ", 1)[0]
    for words in ("separable parts", "lower-case letters, digits, - and _", "at most 100",
                  "the plan-wide ones", "Leave it out on steps that span the parts"):
        assert words in " ".join(said.split()), words
