"""The handoff gate: every problem at once, evidence that really ran, what acceptance writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.step_plans import (
    branching,
    handoff,
    linear,
    make_step,
    write,
)
from maker.errors import HandoffRejectedError, Problem
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.state.lifecycle import reset_step, start_step
from maker.handoff.gate import check_handoff
from maker.store.frontmatter import read_front_matter
from maker.store.plan_store import PlanStore
from maker.store.seal import seal
from maker.verify.runner import evidence_path, run_verification
from maker.yaml_cleaner.dump import canonical_sha256

pytestmark = pytest.mark.usefixtures("project")


def fields(problems: list[Problem]) -> list[str]:
    return [p.field for p in problems]


def text_of(problems: list[Problem]) -> str:
    return "\n".join(str(p) for p in problems)


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    """A three-step linear plan with step 1 complete and step 2 in progress."""
    store = linear(tmp_path, 3)
    start_step(store, 1)
    accept_handoff(store, handoff(1, output={"result": "alpha", "extra": [1, 2]}))
    start_step(store, 2)
    return store


# -- accepted ---------------------------------------------------------------------------


def test_valid_handoff_is_accepted_and_persisted(store: PlanStore) -> None:
    text = handoff(2, output={"result": "beta"}, discoveries=["The cache is per user."],
                   decisions=["Use httpx."], for_next_agent="Look at cache.py first.",
                   files_changed=["src/cache.py"],
                   evidence=[{"command": "pytest -q", "exit_code": 0}])
    result = accept_handoff(store, text)
    assert (result.step, result.status) == (2, "complete")
    assert result.next_steps == [(3, "Step number 3")]
    assert result.notes_added == 2

    meta, body = read_front_matter(result.path)
    assert result.path == store.handoff_path(2)
    for key in ("step", "status", "output", "summary", "discoveries", "decisions", "blockers",
                "for_next_agent", "files_changed", "evidence", "accepted_at", "inputs"):
        assert key in meta, key
    assert meta["output"] == {"result": "beta"}
    assert meta["evidence"][0]["command"] == "pytest -q"
    # What the step saw: step 1's whole output, hashed canonically.
    assert meta["inputs"] == [{"step": 1, "output_variable": "step_1_output",
                               "sha256": canonical_sha256({"result": "alpha",
                                                           "extra": [1, 2]})}]
    assert "Look at cache.py first." in body

    record = store.load().get(2)
    assert record.status == "complete" and "finished_at" in record.meta
    assert store.read_active() is None
    assert store.outputs()["step_2_output"] == {"result": "beta"}
    notes = store.notes_path.read_text(encoding="utf-8")
    assert "- The cache is per user. (step 2)" in notes and "- Use httpx. (step 2)" in notes
    assert "| 2 |" in store.overview_path.read_text(encoding="utf-8")
    assert "| complete |" in store.overview_path.read_text(encoding="utf-8")


def test_notes_get_no_duplicates(store: PlanStore) -> None:
    accept_handoff(store, handoff(2, discoveries=["The cache is per user."]))
    start_step(store, 3)
    result = accept_handoff(store, handoff(3, discoveries=["the cache is per user",
                                                           "Logs go to stderr."]))
    assert result.notes_added == 1
    notes = store.notes_path.read_text(encoding="utf-8")
    assert notes.lower().count("cache is per user") == 1


def test_canonical_hash_ignores_key_order() -> None:
    assert canonical_sha256({"a": 1, "b": [2]}) == canonical_sha256({"b": [2], "a": 1})
    assert canonical_sha256({"a": 1}) != canonical_sha256({"a": 2})


def test_fenced_answer_with_prose_is_accepted_as_repaired(store: PlanStore) -> None:
    text = f"Here is my handoff:\n\n```yaml\n{handoff(2)}```\nThanks!"
    result = accept_handoff(store, text)
    assert result.was_repaired
    meta, _ = read_front_matter(result.path)
    assert meta["repaired"] is True


def test_unquoted_colon_items_are_read_as_text(store: PlanStore) -> None:
    text = handoff(2) + "discoveries:\n  - Found: the cache is per user\n  - 42\n"
    parsed, problems = check_handoff(store, text)
    assert problems == []
    assert parsed is not None
    assert parsed.discoveries == ["Found: the cache is per user", "42"]


@pytest.mark.parametrize("status", ["blocked", "failed"])
def test_blocked_or_failed_handoff_moves_the_status(store: PlanStore, status: str) -> None:
    # A step that could not finish need not have its output.
    result = accept_handoff(store, handoff(2, status=status, output={},
                                           blockers=["The API key is missing."]))
    assert result.status == status
    record = store.load().get(2)
    assert record.status == status
    assert record.meta["reasons"] == ["The API key is missing."]
    assert "- The API key is missing. (step 2)" in store.notes_path.read_text(encoding="utf-8")
    assert "step_2_output" not in store.outputs()
    assert result.next_steps == []


def test_blocked_needs_a_blocker(store: PlanStore) -> None:
    _, problems = check_handoff(store, handoff(2, status="blocked", output={}))
    assert fields(problems) == ["blockers"]


# -- rejected ---------------------------------------------------------------------------


def test_list_output(store: PlanStore) -> None:
    parsed, problems = check_handoff(store, handoff(2, output=["a", "b"]))
    assert parsed is None
    assert fields(problems) == ["output"]
    assert "must be a mapping, got a list" in problems[0].message
    assert problems[0].fix


def test_missing_schema_key_is_quoted(tmp_path: Path) -> None:
    store = write(tmp_path, [make_step(1, -1, schema="{files: list, summary: string, "
                                                     "risk: string}")])
    start_step(store, 1)
    parsed, problems = check_handoff(store, handoff(1, output={"summary": "s", "other": 1}))
    assert parsed is not None  # the fields are fine; the plan's rule is not
    assert len(problems) == 1
    assert "missing `files`, `risk`" in problems[0].message
    assert "{files: list, summary: string, risk: string}" in problems[0].message
    assert problems[0].step == 1


def test_prose_with_no_yaml(store: PlanStore) -> None:
    parsed, problems = check_handoff(store, "I finished the step, everything works great!")
    assert parsed is None
    assert fields(problems) == ["handoff"]
    assert "no handoff YAML found" in problems[0].message
    assert "step:" in (problems[0].fix or "")


def test_wrong_step(store: PlanStore) -> None:
    _, problems = check_handoff(store, handoff(3))
    assert fields(problems) == ["step"]
    assert "step in progress is step 2" in problems[0].message
    assert problems[0].fix == "write `step: 2` if this is its handoff"
    _, problems = check_handoff(store, handoff(42))
    assert "the plan has no step 42" in problems[0].message


def test_no_step_in_progress(tmp_path: Path) -> None:
    store = linear(tmp_path, 2)
    _, problems = check_handoff(store, handoff(1))
    assert fields(problems) == ["step"]
    assert "no step is in progress" in problems[0].message
    assert "maker step start" in (problems[0].fix or "")
    with pytest.raises(HandoffRejectedError):
        accept_handoff(store, handoff(1))


BAD_FIELDS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("no step", {"step": None}, ["step"]),
    ("text step", {"step": "two"}, ["step"]),
    ("bool step", {"step": True}, ["step"]),
    ("bad status", {"status": "done"}, ["status"]),
    ("status in-progress", {"status": "in-progress"}, ["status"]),
    ("text output", {"output": "it worked"}, ["output"]),
    ("no output", {"output": None}, ["output"]),
    ("empty summary", {"summary": "  "}, ["summary"]),
    ("list summary", {"summary": ["a"]}, ["summary"]),
    ("text discoveries", {"discoveries": "none"}, ["discoveries"]),
    ("nested item", {"decisions": ["ok", {"a": 1, "b": 2}]}, ["decisions[1]"]),
    ("list for_next_agent", {"for_next_agent": ["a"]}, ["for_next_agent"]),
    ("files_changed mapping", {"files_changed": {"a": 1}}, ["files_changed"]),
    ("evidence text", {"evidence": "ran tests"}, ["evidence"]),
    ("evidence item", {"evidence": [{"command": "pytest"}]}, ["evidence[0].exit_code"]),
    ("evidence code text", {"evidence": [{"command": "", "exit_code": "0"}]},
     ["evidence[0].command", "evidence[0].exit_code"]),
]


@pytest.mark.parametrize(("name", "change", "expected"), BAD_FIELDS,
                         ids=[b[0] for b in BAD_FIELDS])
def test_field_types(store: PlanStore, name: str, change: dict[str, Any],
                     expected: list[str]) -> None:
    data = yaml.safe_load(handoff(2))
    data.update(change)
    parsed, problems = check_handoff(store, yaml.safe_dump(data))
    assert parsed is None
    assert [f for f in fields(problems) if f in expected] == expected, text_of(problems)
    assert all(p.fix for p in problems)


def test_nulls_mean_empty(store: PlanStore) -> None:
    text = handoff(2) + "discoveries:\ndecisions:\nfor_next_agent:\nevidence:\n"
    parsed, problems = check_handoff(store, text)
    assert problems == [] and parsed is not None
    assert parsed.discoveries == [] and parsed.for_next_agent == "" and parsed.evidence == []


def test_every_problem_at_once(store: PlanStore) -> None:
    text = "step: 3\nstatus: done\noutput: [1]\ndiscoveries: none\n"
    with pytest.raises(HandoffRejectedError) as err:
        accept_handoff(store, text)
    got = fields(err.value.problems)
    assert {"step", "status", "output", "summary", "discoveries"} <= set(got)
    rendered = str(err.value)
    assert rendered.startswith("handoff for step 2: ")
    assert rendered.count("\n- ") == len(err.value.problems)
    assert store.load().get(2).status == "in-progress"
    assert not store.handoff_path(2).exists()


def test_red_flag_for_a_far_too_long_answer(store: PlanStore) -> None:
    text = handoff(2, summary="x" * 25_000)
    _, problems = check_handoff(store, text)
    assert fields(problems) == ["handoff"]
    assert "red flag" in problems[0].message and "too long" in problems[0].message
    # Flagged whatever the output is, and a list output is reported once, as `output`.
    _, problems = check_handoff(store, handoff(2, output=["x"], summary="x" * 25_000))
    assert fields(problems) == ["output", "handoff"]


def test_bytes_and_bad_bytes(store: PlanStore) -> None:
    assert check_handoff(store, handoff(2).encode("utf-8"))[1] == []
    parsed, problems = check_handoff(store, b"step: 2\n\xff\xfe")
    assert parsed is None and "not UTF-8" in problems[0].message


# -- conditional steps ----------------------------------------------------------------


@pytest.fixture
def cond(tmp_path: Path) -> PlanStore:
    store = branching(tmp_path)
    start_step(store, 1)
    accept_handoff(store, handoff(1))
    start_step(store, 2)
    return store


@pytest.mark.parametrize(("next_step", "ok"), [
    (4, True), (3, True), (5, True), (-1, True),
    (1, False),  # complete already: a jump back would skip the rest of the plan
    (2, False), (9, False), (-2, False), ("four", False), (None, False),
])
def test_conditional_next_step(cond: PlanStore, next_step: Any, ok: bool) -> None:
    _, problems = check_handoff(cond, handoff(2, output={"next_step": next_step,
                                                          "reason": "r"}))
    assert (problems == []) is ok, text_of(problems)
    if not ok:
        assert fields(problems) == ["output.next_step"]
        assert "one of 3, 4, 5, or -1" in (problems[0].fix or "")


def test_conditional_missing_next_step_is_reported_once(cond: PlanStore) -> None:
    _, problems = check_handoff(cond, handoff(2, output={"reason": "r"}))
    assert len(problems) == 1 and "`next_step`" in problems[0].message


def test_accepted_choice_drives_what_is_next(cond: PlanStore) -> None:
    result = accept_handoff(cond, handoff(2, output={"next_step": 4, "reason": "tests exist"}))
    assert result.next_steps == [(4, "Refactor")]


# -- evidence -----------------------------------------------------------------------------


def with_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on the project has one verification command: `true`."""
    monkeypatch.setenv("TEST_CMD", "true")


def test_complete_needs_recorded_evidence(store: PlanStore,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with_tests(monkeypatch)
    claimed = handoff(2, evidence=[{"command": "true", "exit_code": 0}])
    _, problems = check_handoff(store, claimed)
    assert fields(problems) == ["evidence"]
    assert "no verification run is recorded" in problems[0].message
    assert "maker verify --step 2" in (problems[0].fix or "")
    run = run_verification(store, step=2)
    assert run.passed
    result = accept_handoff(store, claimed)
    meta, _ = read_front_matter(result.path)
    assert meta["verification"]["status"] == "passed"
    assert meta["verification"]["commands"] == [{"command": "true", "exit_code": 0}]


def test_blocked_needs_no_evidence(store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tests(monkeypatch)
    assert check_handoff(store, handoff(2, status="blocked", blockers=["x"]))[1] == []


def test_failing_evidence_is_refused(store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "echo boom; false")
    run_verification(store, step=2)
    _, problems = check_handoff(store, handoff(2, evidence=[{"command": "pytest",
                                                             "exit_code": 0}]))
    assert fields(problems) == ["evidence"]
    assert "did not pass" in problems[0].message and "exited with 1" in problems[0].message
    assert "boom" in problems[0].message


def test_evidence_from_before_the_step_started_is_stale(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tests(monkeypatch)
    run_verification(store, step=2)
    reset_step(store, 2)
    start_step(store, 2)
    _, problems = check_handoff(store, handoff(2))
    assert fields(problems) == ["evidence"]
    assert "before this step started" in problems[0].message


def forged_run(step: int) -> dict[str, Any]:
    """A passing run as an executor would write it by hand: every field, no seal."""
    return {"step": step, "project_dir": "", "started_at": "2999-01-01T00:00:00Z",
            "finished_at": "2999-01-01T00:00:01Z", "status": "passed", "passed": True,
            "message": "verification passed: test", "not_run": [],
            "commands": [{"command": "true", "exit_code": 0, "kind": "test",
                          "duration_s": 0.1, "output_tail": ""}]}


def tampered(store: PlanStore, monkeypatch: pytest.MonkeyPatch, how: str) -> Path:
    """The step-2 evidence file, forged or edited in the way ``how`` names."""
    from maker.store.seal import key_path

    path = evidence_path(store, 2)
    if how == "written by hand":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(forged_run(2)))
        return path
    monkeypatch.setenv("TEST_CMD", "false")
    run_verification(store, step=2)  # a real, sealed, failing run
    monkeypatch.setenv("TEST_CMD", "true")
    data = json.loads(path.read_text())
    if how == "edited to pass":
        data["commands"][0]["exit_code"] = 0
        data["commands"][0]["command"] = "true"
        data["status"], data["passed"] = "passed", True
    elif how == "seal copied from another record":
        data = {**forged_run(2), "seal": data["seal"]}
    elif how == "sealed with another key":
        other = key_path().with_name("another.key")
        other.write_bytes(b"k" * 32)
        data = seal(forged_run(2), key_file=other)  # a key that is not maker's
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("how", ["written by hand", "edited to pass",
                                 "seal copied from another record", "sealed with another key"])
def test_evidence_not_written_by_maker_verify_is_refused(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    with_tests(monkeypatch)
    path = tampered(store, monkeypatch, how)
    _, problems = check_handoff(store, handoff(2, evidence=[{"command": "true",
                                                             "exit_code": 0}]))
    assert fields(problems) == ["evidence"]
    assert f"{path} was not written by `maker verify`" in problems[0].message
    assert "run `maker verify --step 2`" in (problems[0].fix or "")
    run_verification(store, step=2)  # the real thing is accepted
    assert check_handoff(store, handoff(2))[1] == []


CLAIM = [{"command": "pytest -q", "exit_code": 0}]


def body_sections(path: Path) -> dict[str, str]:
    _, body = read_front_matter(path)
    sections = {}
    for chunk in body.split("\n## ")[1:]:
        title, _, text = chunk.partition("\n")
        sections[title] = text.strip()
    return sections


def test_a_claim_without_known_verification_is_shown_as_a_claim(store: PlanStore) -> None:
    result = accept_handoff(store, handoff(2, evidence=CLAIM))
    sections = body_sections(result.path)
    assert "Evidence" not in sections
    assert sections["Verification run by maker"] == ("none: no verification command is "
                                                     "known for this project")
    assert sections["Claimed by the executor (not verified)"] == "- `pytest -q` → exit 0"


def test_the_body_shows_the_sealed_run_apart_from_the_claim(
        store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "echo ran")
    run = run_verification(store, step=2)
    result = accept_handoff(store, handoff(2, evidence=CLAIM))
    sections = body_sections(result.path)
    assert sections["Verification run by maker"] == (
        f"- `echo ran` → exit 0\n\nRecorded by `maker verify` at {run.finished_at}: passed.")
    assert sections["Claimed by the executor (not verified)"] == "- `pytest -q` → exit 0"


def test_a_blocked_step_shows_no_run(store: PlanStore, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tests(monkeypatch)
    result = accept_handoff(store, handoff(2, status="blocked", blockers=["no db"]))
    sections = body_sections(result.path)
    assert sections["Verification run by maker"].startswith("none: the step ended blocked")
    assert "Claimed by the executor (not verified)" not in sections


def test_no_known_command_needs_no_evidence(store: PlanStore) -> None:
    assert check_handoff(store, handoff(2))[1] == []


def test_evidence_via_monkeypatched_verify(store: PlanStore,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import maker.verify.detect as detect
    import maker.verify.runner as runner

    monkeypatch.setattr(detect, "detect_commands", lambda project: ["a command"])
    monkeypatch.setattr(runner, "recorded_evidence", lambda s, n: None)
    _, problems = check_handoff(store, handoff(2))
    assert fields(problems) == ["evidence"]


# -- never raises -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def module_store(tmp_path_factory: pytest.TempPathFactory) -> PlanStore:
    store = linear(tmp_path_factory.mktemp("gate"), 2)
    start_step(store, 1)
    return store


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=20))
_values = st.recursive(_scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=8), kids, max_size=3)),
    max_leaves=10)
_handoffs = st.fixed_dictionaries({}, optional={
    k: _values for k in ("step", "status", "output", "summary", "discoveries", "decisions",
                         "blockers", "for_next_agent", "files_changed", "evidence")})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(), st.binary()))
def test_check_handoff_never_raises_on_any_text(module_store: PlanStore,
                                                text: str | bytes) -> None:
    _, problems = check_handoff(module_store, text)
    assert all(isinstance(p, Problem) for p in problems)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_handoffs)
def test_check_handoff_never_raises_on_any_fields(module_store: PlanStore,
                                                  data: dict[str, Any]) -> None:
    parsed, problems = check_handoff(module_store, yaml.safe_dump(data))
    assert parsed is not None or problems
