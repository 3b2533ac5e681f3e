"""The plan store: lossless round trips, safe names, atomic writes, archive, lock, hand edits."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.step_plans import linear, step_spec
from maker.core.models import Plan, PlanStep
from maker.core.paths import find_plans_dir
from maker.core.statuses import STEP_STATUSES
from maker.errors import LockTimeoutError, PlanFileError, PlanNotFoundError, StepNotFoundError
from maker.planner.dependencies import resolve_dependencies
from maker.store import plan_store as plan_store_module
from maker.store.atomic import atomic_write, plan_lock
from maker.store.journal import TXN_DIR
from maker.store.plan_store import PlanStore
from maker.store.slug import slugify


def step(n: int, nxt: int, **kw: object) -> PlanStep:
    return step_spec(n, nxt, **{"title": f"Step {n}", "task_description": f"Do {n}.",
                                "fallback_tools": ["Grep"],
                                "primary_tool_instructions": "Read it.", **kw})


def plan(*steps: PlanStep, task: str = "The task") -> Plan:
    return Plan(reasoning="Because it is.", steps=list(steps), task=task)


def test_round_trip_is_lossless(tmp_path: Path) -> None:
    original = plan(
        step(0, 1, title="Fetch «data» / ../../etc", task_description="Line one\n\n## not a "
             "heading\n- item", primary_tool_instructions="Use Read.\nThen Grep."),
        step(1, -2, task_type="conditional_step", output_schema={"next_step": "int"},
             input_variables=["step_0_output.result"]),
        step(2, -1, title="日本語のステップ", fallback_tools=[]),
        task="Multi-line task\nwith `code` and $(stuff)")
    store = PlanStore(tmp_path / "plans")
    written = store.write_plan(original)
    loaded = store.load()
    assert loaded.as_plan() == written.as_plan()
    assert loaded.task == original.task and loaded.reasoning == original.reasoning
    assert [r.status for r in loaded.steps] == ["pending"] * 3
    assert store.load_step(2).spec == written.steps[2].spec


def test_a_steps_model_is_stored_and_read_back_only_when_given(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan(step(0, 1, model="haiku"), step(1, -1)))
    assert [r.spec.model for r in store.load().steps] == ["haiku", None]
    files = sorted((tmp_path / "plans" / "steps").iterdir())
    assert "model: haiku" in files[0].read_text()
    assert "model:" not in files[1].read_text()


def test_dependencies_are_derived_when_not_given() -> None:
    resolved = resolve_dependencies(plan(
        step(0, 1), step(1, -2, task_type="conditional_step"), step(2, 4),
        step(3, 4, input_variables=["step_0_output.result"]), step(4, -1),
        step(5, -1, depends_on=[0])))
    deps = {s.step: s.depends_on for s in resolved.steps}
    assert deps == {0: [], 1: [0], 2: [1], 3: [0, 1], 4: [2, 3], 5: [0]}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_slugs_are_always_safe_names(title: str) -> None:
    slug = slugify(title)
    assert slug and "/" not in slug and "\\" not in slug and slug not in (".", "..")
    assert not slug.startswith("-") and len(slug.encode()) <= 60
    assert "\x00" not in slug


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(min_size=1, max_size=80).filter(str.strip), min_size=1, max_size=5))
def test_no_title_writes_outside_plans(tmp_path: Path, titles: list[str]) -> None:
    root = tmp_path / "p" / "plans"
    steps = [step(i, i + 1 if i < len(titles) - 1 else -1, title=t.strip())
             for i, t in enumerate(titles)]
    stored = PlanStore(root).write_plan(plan(*steps))
    for record in stored.steps:
        assert record.path.resolve().parent == (root / "steps").resolve()
        assert record.path.exists()


def test_unicode_titles_give_readable_names(tmp_path: Path) -> None:
    stored = PlanStore(tmp_path / "plans").write_plan(plan(
        step(0, 1, title="Café crème"), step(1, 2, title="日本語"), step(2, -1, title="!!!")))
    assert [r.path.name for r in stored.steps] == ["00-café-crème.md", "01-日本語.md",
                                                   "02-step.md"]


def test_a_new_plan_archives_the_old_one_with_its_handoffs(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan(step(0, -1), task="first"))
    store.write_handoff(0, {"step": 0, "status": "complete", "output": {}}, "done")
    store.notes_path.write_text("# Notes\n")
    store.write_plan(plan(step(0, 1), step(1, -1), task="second"))
    (archive,) = store.archived()
    assert (archive / "steps" / "00-step-0.md").exists()
    assert (archive / "handoffs" / "00-step-0.md").exists()
    assert "first" in (archive / "PLAN.md").read_text()
    assert store.load().task == "second" and len(store.load().steps) == 2
    assert store.notes_path.exists()  # durable notes carry over


def test_a_crash_mid_write_leaves_the_old_plan_intact(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan(step(0, -1), task="keep me"))

    calls = {"n": 0}
    real = plan_store_module.render_step

    def crash(record: object) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(record)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_store_module, "render_step", crash)
    with pytest.raises(OSError, match="disk full"):
        store.write_plan(plan(step(0, 1), step(1, 2), step(2, -1), task="new"))
    monkeypatch.undo()
    assert store.load().task == "keep me" and len(store.load().steps) == 1
    assert store.archived() == []
    # The staged plan lived in the transaction's folder, which is gone.
    assert not (store.root / TXN_DIR).exists()
    store.write_plan(plan(step(0, -1), task="later"))
    assert not (store.root / TXN_DIR).exists()


def test_atomic_write_never_leaves_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    atomic_write(target, "old")

    # A lone surrogate cannot be encoded: the write fails after the temporary file
    # exists, inside atomic_write.
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "new \udc80 text")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]


def _hold_lock(root: str, seconds: float, ready: multiprocessing.synchronize.Event) -> None:
    with plan_lock(Path(root)):
        ready.set()
        time.sleep(seconds)


def test_the_lock_serializes_sessions(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    other = ctx.Process(target=_hold_lock, args=(str(tmp_path), 1.0, ready))
    other.start()
    try:
        assert ready.wait(30)
        with pytest.raises(LockTimeoutError, match="another maker session"):
            with plan_lock(tmp_path, timeout=0.2):
                pass
        start = time.monotonic()
        with plan_lock(tmp_path, timeout=30):
            waited = time.monotonic() - start
        assert waited > 0.1  # it waited for the other session to let go
    finally:
        other.join(30)


def test_the_lock_is_reentrant(tmp_path: Path) -> None:
    with plan_lock(tmp_path, timeout=0.5), plan_lock(tmp_path, timeout=0.5):
        pass


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda t: t.replace("status: pending", "status: finished"),
         ["status", "'finished' is not a status", "pending, in-progress"]),
        (lambda t: t.replace("title: Step 1", "title: [unclosed"),
         ["front matter", "line", "repair the YAML"]),
        (lambda t: t.replace("next: -1\n", ""),
         ["next_step_sequence_number: missing"]),
        (lambda t: t.split("## Task")[0],
         ["no task description", "## Task"]),
        (lambda t: t.replace("---\n", "", 1),
         ["no YAML front matter"]),
        (lambda t: t.replace("depends_on:\n- 0", "depends_on:\n- 9"),
         ["depends_on: no step 9"]),
        (lambda t: t.replace("primary_tools:", "primary_tool:"),
         ["primary_tool: is not a step field (fix: did you mean `primary_tools`?)"]),
    ],
    ids=["status", "yaml", "missing-field", "no-body", "no-front-matter", "dangling-dep",
         "typo"],
)
def test_hand_edits_that_break_a_file_name_file_field_and_fix(tmp_path: Path, edit: object,
                                                              fragments: list[str]) -> None:
    store = PlanStore(tmp_path / "plans")
    stored = store.write_plan(plan(step(0, 1), step(1, -1, input_variables=["step_0_output.x"])))
    path = stored.steps[1].path
    path.write_text(edit(path.read_text()))  # type: ignore[operator]
    with pytest.raises(PlanFileError) as info:
        store.load()
    text = str(info.value)
    assert path.name in text
    for fragment in fragments:
        assert fragment in text


def test_hand_edits_that_keep_the_file_valid_are_honoured(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    stored = store.write_plan(plan(step(0, -1)))
    path = stored.steps[0].path
    path.write_text(path.read_text().replace("Do 0.", "Do 0, carefully, with tests."))
    assert store.load().steps[0].spec.task_description == "Do 0, carefully, with tests."


def test_missing_plan_and_missing_step(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    with pytest.raises(PlanNotFoundError, match="/maker:plan"):
        store.load()
    store.write_plan(plan(step(0, -1)))
    with pytest.raises(StepNotFoundError, match="no step 7"):
        store.load_step(7)


def test_plans_dir_resolution(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    sub = tmp_path / "repo" / "a" / "b"
    sub.mkdir(parents=True)
    assert find_plans_dir(cwd=sub, env={}) == tmp_path / "repo" / "plans"
    assert find_plans_dir(cwd=sub, env={"CLAUDE_PROJECT_DIR": str(tmp_path)}) == \
        tmp_path / "plans"
    assert find_plans_dir(cwd=sub, env={"MAKER_PLANS_DIR": "docs/plans"}) == sub / "docs/plans"
    assert find_plans_dir("x", cwd=sub, env={"MAKER_PLANS_DIR": "y"}) == sub / "x"
    bare = tmp_path / "bare"
    bare.mkdir()
    assert find_plans_dir(cwd=bare, env={}) == bare / "plans"
    # A package of a monorepo with its own plan: the Bash tool (no CLAUDE_PROJECT_DIR)
    # finds the same plans/ as the hooks (CLAUDE_PROJECT_DIR=the package).
    pkg = tmp_path / "repo" / "pkg"
    (pkg / "plans" / "steps").mkdir(parents=True)
    assert find_plans_dir(cwd=pkg / "src" if (pkg / "src").mkdir() is None else pkg,
                          env={}) == pkg / "plans"
    assert find_plans_dir(cwd=pkg, env={"CLAUDE_PROJECT_DIR": str(pkg)}) == pkg / "plans"
    assert find_plans_dir(cwd=sub, env={}) == tmp_path / "repo" / "plans"  # not a sibling's


def test_plan_md_has_a_table_and_a_mermaid_graph(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan(step(0, 1, title="a | b"), step(1, -1,
                                                          input_variables=["step_0_output.r"])))
    text = store.overview_path.read_text()
    assert "| 0 | [a \\| b](steps/00-a-b.md) | action | pending | — | 1 |" in text
    assert "```mermaid" in text and "s0 --> s1" in text


def test_a_renamed_step_file_is_named_with_the_fix(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    stored = store.write_plan(plan(step(0, 1), step(1, -1)))
    stored.steps[0].path.rename(store.steps_dir / "07-renamed.md")
    with pytest.raises(PlanFileError, match=r"07-renamed.md: step: the file says step 0 but "
                                            r"its name says 7 \(fix: rename it to 00-renamed.md"):
        store.load()


def test_stray_files_in_steps_are_named_not_fatal_tracebacks(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    store.write_plan(plan(step(0, -1)))
    (store.steps_dir / "05-dir.md").mkdir()  # a directory: ignored
    assert len(store.load().steps) == 1
    (store.steps_dir / "README.md").write_text("notes")
    with pytest.raises(PlanFileError, match="README.md: not a step file name .* move it out"):
        store.load()


def test_rewritten_files_keep_a_readable_mode(tmp_path: Path) -> None:
    import os
    import stat

    store = PlanStore(tmp_path / "plans")
    stored = store.write_plan(plan(step(0, -1)))
    record = stored.steps[0]
    before = stat.S_IMODE(record.path.stat().st_mode)
    store.save_step(record)  # an atomic rewrite
    assert stat.S_IMODE(record.path.stat().st_mode) == before
    atomic_write(tmp_path / "new.md", "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("title", ["two\nlines", "nul\x00byte", "esc\x1b[31mred"])
def test_titles_with_control_characters_are_refused(title: str) -> None:
    from maker.planner.parser import structure_problems

    raw = {"reasoning": "r", "plan": [{"step": 0, "task_type": "action_step", "title": title,
                                       "task_description": "d", "output_schema": "{}",
                                       "next_step_sequence_number": -1}]}
    (problem,) = structure_problems(raw)
    assert problem.field == "title" and "control character" in problem.message


def test_a_hand_edited_plan_md_is_kept_before_it_is_rewritten(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "plans")
    stored = store.write_plan(plan(step(0, -1)))
    store.refresh_overview(stored)
    assert not store.archive_dir.exists()  # untouched: nothing to keep
    text = store.overview_path.read_text()
    store.overview_path.write_text(text + "\n## My notes\n\nRemember the cache.\n")
    store.refresh_overview(stored)
    (kept,) = store.archive_dir.glob("PLAN-edited-*.md")
    assert "Remember the cache." in kept.read_text()
    assert "Remember the cache." not in store.overview_path.read_text()


def test_a_plan_file_error_keeps_every_problem_with_its_file_field_and_fix(
        project: Path) -> None:
    store = linear(project, 3)
    steps = sorted((store.root / "steps").glob("*.md"))
    second = steps[1].read_text().replace("status: pending", "status: nope")
    steps[1].write_text(second.replace("## Task", "").replace("Do the work of step 2.", ""))
    steps[2].write_text(steps[2].read_text().replace("depends_on:\n- 2", "depends_on:\n- 9"))
    (store.root / "steps" / "xx-stray.md").write_text("stray")
    with pytest.raises(PlanFileError) as caught:
        PlanStore(store.root).load()
    error = caught.value
    found = [(p.path.name, p.field) for p in error.problems]
    assert found == [(steps[1].name, "status"), (steps[1].name, "body"),
                     ("xx-stray.md", None), (steps[2].name, "depends_on")]
    assert all(p.fix and p.problems == [p] for p in error.problems)
    assert str(error).splitlines()[1:] == [
        f"- {steps[1]}: status: 'nope' is not a status (fix: use one of "
        f"{', '.join(STEP_STATUSES)}); body: no task description (fix: write the task "
        "under a `## Task` heading)",
        f"- {steps[1].parent / 'xx-stray.md'}: not a step file name (NN-<title>.md) (fix: "
        f"move it out of {steps[1].parent})",
        f"- {steps[2]}: depends_on: no step 9 in the plan (fix: remove it from depends_on)"]
