"""NOTES.md facts belong to the plan and the step attempt that found them.

A reset step's blockers are not fed to its retry as current facts, and a new plan
does not present the old plan's notes as its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.step_plans import handoff, linear, make_step
from maker.core.models import Plan
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.launch.brief import build_brief
from maker.executor.state.lifecycle import reset_step, start_step
from maker.store.notes import (
    add_notes,
    notes_for_new_plan,
    notes_plan,
    read_notes,
    retire_attempt,
)
from maker.store.plan_store import PlanStore

OLD = """# Notes

Durable facts.

Plan: 2026-01-01T00:00:00.000000Z

## Discoveries

- The API retries on 429. (step 1)

## Decisions

- Use httpx. (step 2)
- Keep the old client. (step 2, attempt 2)

## Blockers

- The API key is missing. (step 2)
- The staging server is down. (step 3)
"""


def test_retire_attempt_labels_that_attempts_blockers_and_decisions() -> None:
    text = retire_attempt(OLD, 2, 1)
    current = read_notes_text(text)
    assert current["Blockers"] == ["The staging server is down. (step 3)"]
    assert current["Decisions"] == ["Keep the old client. (step 2, attempt 2)"]
    assert current["Discoveries"] == ["The API retries on 429. (step 1)"]  # still true
    assert current["Earlier attempts (reset)"] == [
        "earlier attempt (reset): decision: Use httpx. (step 2)",
        "earlier attempt (reset): blocker: The API key is missing. (step 2)"]
    assert retire_attempt(OLD, 5, 1) == OLD  # nothing of step 5: unchanged


def read_notes_text(text: str, **kw: object) -> dict[str, list[str]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "NOTES.md"
        path.write_text(text)
        return read_notes(path, **kw)  # type: ignore[arg-type]


def test_a_new_plan_keeps_only_the_old_discoveries_labelled() -> None:
    text = notes_for_new_plan(OLD, "2026-02-02T00:00:00.000000Z")
    assert notes_plan(text) == "2026-02-02T00:00:00.000000Z"
    notes = read_notes_text(text)
    assert notes == {"From the previous plan": ["The API retries on 429. (step 1)"]}
    assert "Use httpx" not in text and "API key" not in text
    assert read_notes_text(notes_for_new_plan("")) == {}


def test_notes_of_another_plan_are_never_this_plans() -> None:
    notes = read_notes_text(OLD, plan="2026-02-02T00:00:00.000000Z")
    assert "Blockers" not in notes
    assert notes["From the previous plan: Blockers"][0].startswith("The API key is missing.")
    assert "Blockers" in read_notes_text(OLD, plan="2026-01-01T00:00:00.000000Z")


def test_adding_a_fact_for_a_new_plan_starts_its_notes_afresh(tmp_path: Path) -> None:
    path = tmp_path / "NOTES.md"
    path.write_text(OLD)
    add_notes(path, {"blockers": ["The disk is full."]}, step=1, attempt=2,
              plan="2026-02-02T00:00:00.000000Z")
    notes = read_notes(path, plan="2026-02-02T00:00:00.000000Z")
    assert notes["Blockers"] == ["The disk is full. (step 1, attempt 2)"]
    assert notes["From the previous plan"] == ["The API retries on 429. (step 1)"]


@pytest.fixture
def blocked(tmp_path: Path) -> PlanStore:
    """Step 1 of a two-step plan handed off blocked, then reset and started again."""
    store = linear(tmp_path, 2)
    start_step(store, 1)
    accept_handoff(store, handoff(1, status="blocked", output={},
                                  blockers=["The API key is missing."],
                                  discoveries=["The API retries on 429."]))
    reset_step(store, 1)
    start_step(store, 1)
    return store


def test_a_reset_steps_blocker_is_not_a_current_fact_for_its_retry(blocked: PlanStore) -> None:
    brief = build_brief(blocked, None, 1)
    blockers = brief.split("#### Blockers", 1)
    assert len(blockers) == 1 or "The API key is missing." not in blockers[1].split("####")[0]
    assert "- earlier attempt (reset): blocker: The API key is missing. (step 1)" in brief
    assert "- The API retries on 429. (step 1)" in brief


def test_the_retrys_own_blockers_are_current(blocked: PlanStore) -> None:
    accept_handoff(blocked, handoff(1, status="blocked", output={},
                                    blockers=["The disk is full."]))
    text = blocked.notes_path.read_text()
    assert "- The disk is full. (step 1, attempt 2)" in text
    reset_step(blocked, 1)
    start_step(blocked, 1)
    brief = build_brief(blocked, None, 1)
    assert "earlier attempt (reset): blocker: The disk is full. (step 1, attempt 2)" in brief


def test_a_new_unrelated_plan_does_not_inherit_the_old_plans_facts(blocked: PlanStore) -> None:
    blocked.write_active(None)
    blocked.write_plan(Plan(reasoning="Other work.", task="Something else",
                            steps=[make_step(1, -1, title="Other")]))
    start_step(blocked, 1)
    brief = build_brief(blocked, None, 1)
    assert "The API key is missing" not in brief.split("From the previous plan", 1)[0]
    assert "#### Blockers" not in brief


def test_the_notes_file_itself_retires_a_reset_attempt(blocked: PlanStore) -> None:
    current, _, earlier = blocked.notes_path.read_text().partition(
        "## Earlier attempts (reset)")
    assert "The API key is missing." not in current
    assert "- earlier attempt (reset): blocker: The API key is missing. (step 1)" in earlier
    assert "- The API retries on 429. (step 1)" in current  # a discovery stays current


def test_the_notes_file_of_a_new_plan_starts_with_the_old_discoveries_only(
        blocked: PlanStore) -> None:
    reset_step(blocked, 1)
    blocked.write_plan(Plan(reasoning="Other work.", task="Something else",
                            steps=[make_step(1, -1, title="Other")]))
    text = blocked.notes_path.read_text()
    assert "From the previous plan" in text and "The API retries on 429." in text
    assert "The API key is missing." not in text
    archived = next(blocked.archive_dir.glob("*/NOTES.md")).read_text()
    assert "The API key is missing." in archived  # the old notes kept whole
